package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// A session keeps beside its CSV, in its runs directory (RunsDir), what
// each run's load tool printed and, for the charts of the report's page,
// the run's data: <run>.data.json (RunDataSuffix), its series of one
// point a second through the window and bench mix's latency histogram.

// RunDataSuffix ends the name of a run's data file in the runs directory.
const RunDataSuffix = ".data.json"

// RunsDir is where a session keeps its runs' files, beside its CSV:
// <csv without .csv>.runs, cleaned, so that every spelling of the CSV's
// path ("./data/x.csv", "data//x.csv") gives the one directory that the
// runs' files are found and looked up by.
func RunsDir(csvPath string) string {
	return filepath.Clean(strings.TrimSuffix(csvPath, ".csv") + ".runs")
}

// PagePath is where a session's page goes, beside its CSV: <csv without
// .csv>.html.
func PagePath(csvPath string) string { return strings.TrimSuffix(csvPath, ".csv") + ".html" }

// RunID names a run among a session's files: its machine, session,
// cell and repetition.
type RunID struct {
	Machine string `json:"machine"`
	Session string `json:"session"`
	Proxy   string `json:"proxy"`
	Mode    Mode   `json:"mode"`
	Load    string `json:"load"`
	Rep     int    `json:"rep"`
	// Step names a sweep's window among the windows of its search, its
	// step and its offered rate ("step 3 at 4000/s", "confirm at
	// 3922/s"): the rows of one search share the rest. Empty for every
	// other run.
	Step string `json:"step,omitempty"`
}

// ID returns the run's RunID.
func (r *Row) ID() RunID {
	id := RunID{Machine: r.Machine, Session: r.Session, Proxy: r.Proxy, Mode: r.Mode, Load: r.Load, Rep: r.Rep}
	if r.HasOffered {
		id.Step = stepID(r.Note, r.OfferedRate)
	}
	return id
}

// stepID is RunID.Step of a sweep's row: the step its note begins with
// (a row whose note gives none, a step that could not be measured, has
// its rate alone) and its offered rate. Within a search a rate is tried
// once as a step and once at most as a confirm, so the two tell its
// windows apart.
func stepID(note string, offered float64) string {
	at := "at " + strconv.FormatFloat(offered, 'f', -1, 64) + "/s"
	st, ok, err := ParseStep(note)
	switch {
	case !ok || err != nil:
		return at
	case st.Confirm:
		return "confirm " + at
	}
	return "step " + strconv.Itoa(st.N) + " " + at
}

// Interval is a part of a run's window, about a second, and what its
// load did in it, counted as the row counts the window.
type Interval struct {
	Seconds  float64 `json:"seconds"`
	Requests int64   `json:"requests,omitempty"`
	Bytes    int64   `json:"bytes"`
}

// Of is the interval's figure in unit u, as u.Of gives a run's.
func (iv Interval) Of(u Unit) float64 {
	return u.Of(&Row{Seconds: iv.Seconds, Requests: iv.Requests, Bytes: iv.Bytes})
}

// RunData is what the charts show of a run beyond its row.
type RunData struct {
	RunID
	Started time.Time `json:"started"` // the window's start, as the row's
	// Intervals is the load tool's own series through the window, where
	// it gives one: iperf3's intervals, bench mix's seconds; none for
	// wrk and openssl s_time.
	Intervals []Interval `json:"intervals,omitempty"`
	// CPU is each role's busy fraction (proxy, client, origin) second
	// by second through the window, from the sampler's readings.
	CPU map[string][]float64 `json:"cpu,omitempty"`
	// Histogram is bench mix's histogram of the latency of every
	// exchange due in the window, in microseconds: HdrHistogram's V2
	// compressed encoding in base64, as bench mix prints it.
	Histogram string `json:"histogram,omitempty"`
}

// WriteRunData writes a run's data as dir/<name>.data.json.
func WriteRunData(dir, name string, d RunData) error {
	b, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("run %s: %w", name, err)
	}
	return os.WriteFile(filepath.Join(dir, name+RunDataSuffix), append(b, '\n'), 0o644)
}

// ReadRunData reads the data of the runs kept beside the session files
// at csvPaths, by run. A session without a runs directory, or whose
// runs kept none (files written before the data were kept), gives none;
// a file that cannot be read is an error naming it.
func ReadRunData(csvPaths []string) (map[RunID]*RunData, error) {
	out := map[RunID]*RunData{}
	for _, p := range csvPaths {
		files, err := filepath.Glob(filepath.Join(RunsDir(p), "*"+RunDataSuffix))
		if err != nil {
			return nil, err
		}
		sort.Strings(files)
		for _, f := range files {
			b, err := ReadInput(f)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, err
			}
			d := new(RunData)
			if err := json.Unmarshal(b, d); err != nil {
				return nil, &InputError{File: f, Err: err}
			}
			out[d.RunID] = d
		}
	}
	return out, nil
}

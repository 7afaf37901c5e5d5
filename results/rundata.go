package results

import (
	"bench/inputerr"
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// A session keeps beside its CSV, in its runs directory (RunsDir), what
// each run's load tool printed and, for the charts of the report's page,
// the run's data: <run>.data.json (RunDataSuffix), its series of one
// point a second through the window and bench mix's latency histogram.

// RunDataSuffix ends the name of a run's data file in the runs directory.
const RunDataSuffix = ".data.json"

// The files of a run's CPU profile beside its data, where the run was
// profiled (RunData.Profile): the pprof profile.proto, gzipped as go tool
// pprof writes it, the folded stacks a flame graph is drawn from, and
// the flame graph's page, a file of its own, which a session's page links
// where the profile is too big for it to hold.
const (
	ProfileSuffix = ".cpu.pb.gz"
	FoldedSuffix  = ".cpu.folded"
	FlameSuffix   = ".cpu.html"
)

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
	// Step tells a sweep's steps apart, which share their repetition
	// (load LoadSweep): the step and the rate it offered, "step 3 at
	// 2000.0/s", "confirm at 4375.0/s" (Row.stepID); empty for every
	// other run.
	Step string `json:"step,omitempty"`
}

// ID returns the run's RunID.
func (r *Row) ID() RunID {
	return RunID{Machine: r.Machine, Session: r.Session, Proxy: r.Proxy, Mode: r.Mode, Load: r.Load, Rep: r.Rep, Step: r.stepID()}
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
	// Profile says how the proxy's CPU was profiled in the window, or why
	// it has no profile; nil where profiling was off.
	Profile *ProfileNote `json:"profile,omitempty"`
	// Windows are, where the roles are on hosts of their own, each
	// host's window on the session's clock: its sampler's, and of
	// several client hosts each one's load tool's.
	Windows []HostWindow `json:"windows,omitempty"`
	// Files is where the run's files are, their common part: the runs
	// directory and the run's name (<Files>RunDataSuffix); empty for data
	// not read from a file.
	Files string `json:"-"`
}

// HostWindow is one host's part of a run's window, on the clock of the
// machine that ran the session.
type HostWindow struct {
	Host string    `json:"host"` // as the hosts file names it
	Of   string    `json:"of"`   // WindowSampler or WindowLoad
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
}

// What a HostWindow is of.
const (
	WindowSampler = "sampler" // its CPU readings
	WindowLoad    = "load"    // its share of the load (several client hosts)
)

// Profiled reports whether the run kept a profile, in
// <Files>FoldedSuffix and <Files>ProfileSuffix.
func (d *RunData) Profiled() bool {
	return d != nil && d.Files != "" && d.Profile != nil && d.Profile.Absent == ""
}

// ProfileNote is what a run's data says of its CPU profile.
type ProfileNote struct {
	// Absent is why the run has no profile (perf missing, refused, or
	// failed); empty where it has one, in <run>ProfileSuffix and
	// <run>FoldedSuffix.
	Absent string `json:"absent,omitempty"`
	// CallGraph is how perf unwound the stacks: CallGraphFP or
	// CallGraphDWARF.
	CallGraph string `json:"call_graph,omitempty"`
	// Samples are the proxy's samples in the profile; Others those of
	// other processes on the proxy's CPUs, left out of it.
	Samples int `json:"samples"`
	Others  int `json:"others"`
}

// How perf unwinds a profile's stacks (ProfileNote.CallGraph): by frame
// pointers, or from DWARF debug information.
const (
	CallGraphFP    = "fp"
	CallGraphDWARF = "dwarf"
)

// WriteRunData writes a run's data as dir/<name>.data.json.
func WriteRunData(dir, name string, d RunData) error {
	b, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("run %s: %w", name, err)
	}
	return WriteFile(filepath.Join(dir, name+RunDataSuffix), append(b, '\n'))
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
		left := int64(MaxRunsData)
		for _, f := range files {
			b, err := readInput(f, MaxRunData)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, err
			}
			if left -= int64(len(b)); left < 0 {
				return nil, &inputerr.Error{File: RunsDir(p), Err: fmt.Errorf("its runs' data files come to more than %d bytes, more than a session writes", MaxRunsData)}
			}
			d, err := parseRunData(b)
			if err != nil {
				return nil, &inputerr.Error{File: f, Err: err}
			}
			d.Files = strings.TrimSuffix(f, RunDataSuffix)
			out[d.RunID] = d
		}
	}
	return out, nil
}

// parseRunData reads a run's data file's text. Its figures must be what a
// run can have: intervals of MinSeconds to MaxSeconds, counts and shares
// none negative nor past MaxCount, and a histogram that Latency decodes.
func parseRunData(b []byte) (*RunData, error) {
	d := new(RunData)
	if err := json.Unmarshal(b, d); err != nil {
		return nil, err
	}
	if d.Rep < 0 || d.Rep > MaxCount {
		return nil, fmt.Errorf("rep %d: want 0 to 2^53", d.Rep)
	}
	for i, iv := range d.Intervals {
		if !(iv.Seconds >= MinSeconds && iv.Seconds <= MaxSeconds) || iv.Requests < 0 || iv.Requests > MaxCount || iv.Bytes < 0 || iv.Bytes > MaxCount {
			return nil, fmt.Errorf("interval %d: %v s, %d requests, %d bytes: want %v s to %v s, and counts of 0 to 2^53", i+1, iv.Seconds, iv.Requests, iv.Bytes, MinSeconds, MaxSeconds)
		}
	}
	for role, series := range d.CPU {
		for i, v := range series {
			if !(v >= 0 && v <= MaxCount) {
				return nil, fmt.Errorf("cpu of %s, second %d: %v: want 0 or more, up to 2^53", role, i+1, v)
			}
		}
	}
	if p := d.Profile; p != nil && (p.Samples < 0 || p.Samples > MaxCount || p.Others < 0 || p.Others > MaxCount) {
		return nil, fmt.Errorf("profile of %d samples and %d others: want 0 to 2^53", p.Samples, p.Others)
	}
	if _, err := d.Latency(); err != nil {
		return nil, err
	}
	return d, nil
}

// Latency is the run's latency histogram (Histogram) decoded, nil where
// it has none. One that is not bench mix's encoding, of more significant
// digits than MaxHistogramDigits (and so of more counts than bench mix's
// could hold), or of more values than MaxCount, is an error.
func (d *RunData) Latency() (*hdrhistogram.Histogram, error) {
	if d.Histogram == "" {
		return nil, nil
	}
	bad := func(err error) error { return fmt.Errorf("histogram: %w", err) }
	// The counts are as many as its header's range and digits say:
	// read them from it before they are made.
	raw, err := base64.StdEncoding.DecodeString(d.Histogram)
	if err != nil {
		return nil, bad(err)
	}
	if len(raw) < 8 {
		return nil, bad(errors.New("shorter than its header"))
	}
	z, err := zlib.NewReader(bytes.NewReader(raw[8:]))
	if err != nil {
		return nil, bad(err)
	}
	var header [hdrHeader]byte
	_, err = io.ReadFull(z, header[:])
	z.Close()
	if err != nil {
		return nil, bad(fmt.Errorf("its header: %w", err))
	}
	if digits := int32(binary.BigEndian.Uint32(header[12:])); digits < 0 || digits > MaxHistogramDigits {
		return nil, bad(fmt.Errorf("%d significant digits: want at most %d", digits, MaxHistogramDigits))
	}
	h, err := hdrhistogram.Decode([]byte(d.Histogram))
	if err != nil {
		return nil, bad(err)
	}
	if n := h.TotalCount(); n < 0 || n > MaxCount {
		return nil, bad(fmt.Errorf("%d values: want at most 2^53", n))
	}
	return h, nil
}

// hdrHeader is the length of the header of an HdrHistogram's V2
// encoding, once inflated: cookie, payload length, normalizing offset,
// significant digits (4 bytes each, big-endian), lowest and highest
// trackable values (8 each), the conversion ratio (8).
const hdrHeader = 40

// Package nights writes a history of generated nightly sessions, for the
// tests and the benchmark of bench trend: each night a session of a
// reference session's cells, each run drawn from its reference cell's
// own spread by a generator started at a fixed value, with the shifts asked for (a step, a
// slide) put in the cells named.
package nights

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"bench/history"
	"bench/results"
)

// Shift moves a cell's throughput from night From on: by Step (a share,
// -0.06 for 6% slower) at once when Nights is 1 or less, or by Step/Nights
// more each night over Nights nights (a slide), then held; for For nights
// alone when For is more than 0 (For 1: one bad night).
type Shift struct {
	Cell   results.Cell
	From   int
	Step   float64
	Nights int
	For    int
}

// factor is what the shift multiplies the cell's level by on night n.
func (s Shift) factor(n int) float64 {
	if n < s.From || (s.For > 0 && n >= s.From+s.For) {
		return 1
	}
	if s.Nights <= 1 {
		return 1 + s.Step
	}
	done := min(n-s.From+1, s.Nights)
	return 1 + s.Step*float64(done)/float64(s.Nights)
}

// Release is a new version of a column (Column) or of bench (Column
// empty) from night Night on.
type Release struct {
	Night   int
	Column  string
	Version string
}

// History is what to generate.
type History struct {
	Reference []results.Row // the reference session's runs
	Meta      *results.Meta // its metadata, copied into each night's
	Machines  []string      // the machines' labels; the reference's when empty
	Nights    int           // nights per machine
	Start     time.Time     // the first night's start
	Draws     uint64        // where the generator of the draws starts
	Shifts    []Shift       // on every machine
	Releases  []Release     // on every machine
}

// cell is a reference cell: its runs' median and relative range, for its
// throughput and its p99.
type cell struct {
	runs              []results.Row
	fig, figLo, figHi float64
	p99, p99Lo, p99Hi float64
	hasP99            bool
}

// Write writes the history under dir as history.Dir lays it out
// and returns the session files' paths.
func Write(dir string, h History) ([]string, error) {
	order, cells := referenceCells(h.Reference)
	machines := h.Machines
	if len(machines) == 0 {
		machines = []string{h.Reference[0].Machine}
	}
	rng := rand.New(rand.NewPCG(h.Draws, 0x6e69676874)) // "night"
	var paths []string
	var buf bytes.Buffer
	for _, machine := range machines {
		versions := map[string]string{}
		for n := range h.Nights {
			start := h.Start.Add(time.Duration(n) * 24 * time.Hour)
			id := start.Format(time.DateOnly) + "-nightly"
			for _, rel := range h.Releases {
				if rel.Night == n {
					versions[rel.Column] = rel.Version
				}
			}
			buf.Reset()
			w := csv.NewWriter(&buf)
			w.Write(results.Header)
			at := start
			for _, c := range order {
				ref := cells[c]
				level := 1.0
				for _, s := range h.Shifts {
					if s.Cell == c {
						level *= s.factor(n)
					}
				}
				for i := range ref.runs {
					r := ref.runs[i]
					r.Machine, r.Session, r.Started = machine, id, at
					at = at.Add(12 * time.Second)
					f := ref.fig * level * draw(rng, ref.figLo, ref.figHi) / r.Cell().Unit().Of(&r)
					r.Requests = int64(math.Round(float64(r.Requests) * f))
					r.Bytes = int64(math.Round(float64(r.Bytes) * f))
					if ref.hasP99 {
						r.P99Ms = ref.p99 * draw(rng, ref.p99Lo, ref.p99Hi)
					}
					w.Write(r.Record())
				}
			}
			w.Flush()
			if err := w.Error(); err != nil {
				return nil, err
			}
			d := history.Dir(dir, machine, history.Date(start), id)
			if err := os.MkdirAll(d, 0o755); err != nil {
				return nil, err
			}
			p := filepath.Join(d, results.Slug(machine)+"-"+start.Format(time.DateOnly)+".csv")
			if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
				return nil, err
			}
			if err := writeMeta(p, h.Meta, machine, id, start, versions); err != nil {
				return nil, err
			}
			paths = append(paths, p)
		}
	}
	return paths, nil
}

// referenceCells are the ok runs of the reference session by their
// cell, each with its figure's and p99's median and spread, and the cells
// in the order they come in.
func referenceCells(reference []results.Row) ([]results.Cell, map[results.Cell]*cell) {
	var order []results.Cell
	cells := map[results.Cell]*cell{}
	for _, r := range reference {
		if r.Status != results.OK {
			continue
		}
		c := r.Cell()
		if cells[c] == nil {
			cells[c] = &cell{}
			order = append(order, c)
		}
		cells[c].runs = append(cells[c].runs, r)
	}
	for _, c := range cells {
		var figs, p99s []float64
		for i := range c.runs {
			figs = append(figs, c.runs[i].Cell().Unit().Of(&c.runs[i]))
			if c.runs[i].HasLatency {
				p99s = append(p99s, c.runs[i].P99Ms)
			}
		}
		c.fig, c.figLo, c.figHi = spread(figs)
		c.p99, c.p99Lo, c.p99Hi = spread(p99s)
		c.hasP99 = len(p99s) == len(c.runs)
	}
	return order, cells
}

// spread is the median of v and its range relative to it.
func spread(v []float64) (med, lo, hi float64) {
	if len(v) == 0 {
		return 0, 1, 1
	}
	s := slices.Sorted(slices.Values(v))
	med = s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	if med == 0 {
		return 0, 1, 1
	}
	return med, s[0] / med, s[len(s)-1] / med
}

// draw is a factor drawn uniformly from [lo, hi].
func draw(rng *rand.Rand, lo, hi float64) float64 { return lo + (hi-lo)*rng.Float64() }

// writeMeta writes the metadata of the night at csvPath, the reference's
// with the night's machine, id and start and the versions released by
// then, and its history record.
func writeMeta(csvPath string, ref *results.Meta, machine, id string, start time.Time, versions map[string]string) error {
	m := results.Meta{}
	if ref != nil {
		m = *ref
		m.Columns = append([]results.ColumnMeta(nil), ref.Columns...)
	}
	m.Session, m.Machine.Label, m.Started = id, machine, start
	end := start.Add(2 * time.Hour)
	m.Ended = &end
	for i, c := range m.Columns {
		if v, ok := versions[c.Name]; ok {
			m.Columns[i].Version = v
		}
	}
	if err := m.Write(results.MetaPath(csvPath)); err != nil {
		return err
	}
	bench := versions[""]
	if bench == "" {
		bench = "0000000"
	}
	b, err := json.MarshalIndent(history.Entry{BenchCommit: bench, Added: end}, "", "  ")
	if err != nil {
		return fmt.Errorf("history record of %s: %w", csvPath, err)
	}
	return os.WriteFile(filepath.Join(filepath.Dir(csvPath), history.File), append(b, '\n'), 0o644)
}

// The shifts of Shifted: three cells 6% slower from night StepNight,
// one sliding 0.5% a night for SlideNights nights from night SlideNight.
var (
	SteppedCells = []results.Cell{
		{Proxy: "nginx", Mode: results.HTTP, Load: "ka-1k"},
		{Proxy: "haproxy splice-auto", Mode: results.Relay, Load: "ka-1k"},
		{Proxy: "dante", Mode: results.Socks, Load: "ka-1k"},
	}
	SlidCell = results.Cell{Proxy: "haproxy", Mode: results.HTTP, Load: "ka-1k"}
)

// The nights of Shifted's shifts and releases.
const (
	StepNight   = 80
	SlideNight  = 30
	SlideNights = 20
	NginxNight  = 60 // nginx 1.24.0 from this night on
)

// Shifted is a history of n nights of the reference session (rows and
// meta) on machines, from January 1st 2026, with Shifted's shifts: the
// steps and the slide; nginx upgraded at NginxNight and bench rebuilt at
// StepNight.
func Shifted(rows []results.Row, meta *results.Meta, n int, draws uint64, machines ...string) History {
	h := History{Reference: rows, Meta: meta, Machines: machines, Nights: n, Draws: draws,
		Start:    time.Date(2026, 1, 1, 1, 17, 0, 0, time.UTC),
		Shifts:   []Shift{{Cell: SlidCell, From: SlideNight, Step: -0.005 * SlideNights, Nights: SlideNights}},
		Releases: []Release{{Night: 0, Version: "1a2b3c4"}, {Night: NginxNight, Column: "nginx", Version: "1.24.0"}, {Night: StepNight, Version: "5d6e7f8"}},
	}
	for _, c := range SteppedCells {
		h.Shifts = append(h.Shifts, Shift{Cell: c, From: StepNight, Step: -0.06})
	}
	return h
}

// Cells are the reference session's cells with an ok run, in its order,
// each with the spread of its runs' figures: half their range over their
// median, in percent (the noise of changepoint.Noise).
func Cells(rows []results.Row) (cells []results.Cell, spreads map[results.Cell]float64) {
	figs := map[results.Cell][]float64{}
	for i := range rows {
		r := &rows[i]
		if r.Status != results.OK {
			continue
		}
		c := r.Cell()
		if figs[c] == nil {
			cells = append(cells, c)
		}
		figs[c] = append(figs[c], c.Unit().Of(r))
	}
	spreads = map[results.Cell]float64{}
	for c, v := range figs {
		med, lo, hi := spread(v)
		if med != 0 {
			spreads[c] = (hi - lo) / 2 * 100
		}
	}
	return cells, spreads
}

// Reference reads the reference session, the one session file in
// dataDir, and its metadata.
func Reference(dataDir string) ([]results.Row, *results.Meta, error) {
	files, err := filepath.Glob(filepath.Join(dataDir, "*.csv"))
	if err != nil || len(files) != 1 {
		return nil, nil, fmt.Errorf("the reference session in %s: %v, %v; want one file", dataDir, files, err)
	}
	rows, err := results.ReadFiles(files)
	if err != nil {
		return nil, nil, err
	}
	meta, err := results.ReadMeta(results.MetaPath(files[0]))
	if err != nil {
		return nil, nil, err
	}
	return rows, meta, nil
}

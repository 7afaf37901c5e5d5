package report

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"bench/internal/nights"
	"bench/report/results"
)

// referenceSession reads the reference session (data/*.csv) and its
// metadata.
func referenceSession(t testing.TB) ([]results.Row, *results.Meta) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "data", "*.csv"))
	if err != nil || len(files) != 1 {
		t.Fatalf("the reference session: %v, %v; want one file", files, err)
	}
	rows, err := results.ReadFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := results.ReadMeta(results.MetaPath(files[0]))
	if err != nil {
		t.Fatal(err)
	}
	return rows, meta
}

// The shifted cells of the generated history: three cells 6% slower from
// night 80, one sliding 0.5% a night for 20 nights from night 30.
var (
	steppedCells = []results.Cell{
		{Proxy: "nginx", Mode: results.HTTP, Load: "ka-1k"},
		{Proxy: "haproxy", Mode: results.Relay, Load: "stream1"},
		{Proxy: "squid", Mode: results.Connect, Load: "ka-1k"},
	}
	slidCell = results.Cell{Proxy: "haproxy", Mode: results.HTTP, Load: "ka-1k"}
)

const (
	stepNight  = 80
	slideNight = 30
	slideLen   = 20
)

// generatedHistory writes 120 nights of the reference session's cells to
// a temporary directory, with the shifts above, and returns it.
func generatedHistory(t testing.TB, nightCount int, machines ...string) string {
	t.Helper()
	rows, meta := referenceSession(t)
	h := nights.History{Reference: rows, Meta: meta, Machines: machines, Nights: nightCount, Seed: 42,
		Start:  time.Date(2026, 1, 1, 1, 17, 0, 0, time.UTC),
		Shifts: []nights.Shift{{Cell: slidCell, From: slideNight, Step: -0.005 * slideLen, Nights: slideLen}},
		// nginx upgraded at night 60; bench rebuilt at the step's night
		Releases: []nights.Release{{Night: 0, Version: "1a2b3c4"}, {Night: 60, Column: "nginx", Version: "1.24.0"}, {Night: stepNight, Version: "5d6e7f8"}},
	}
	for _, c := range steppedCells {
		h.Shifts = append(h.Shifts, nights.Shift{Cell: c, From: stepNight, Step: -0.06})
	}
	dir := t.TempDir()
	if _, err := nights.Write(dir, h); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestTrendFindsShifts: in 120 generated nights of the reference
// session's cells (every cell, by its throughput and p99), the 6% step
// at night 80 of three cells is found at night 80 ± 1 in each, for the
// worse; the slide is found within its nights; no other series of any
// cell has a change point.
func TestTrendFindsShifts(t *testing.T) {
	dir := generatedHistory(t, 120)
	sessions, err := ReadTrendHistory(dir)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Trend(sessions, TrendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := referenceSession(t)
	want := map[[2]any]bool{}
	for _, r := range ref {
		want[[2]any{r.Cell(), MetricThroughput}] = true
		if r.HasLatency {
			want[[2]any{r.Cell(), MetricP99}] = true
		}
	}
	if len(tr.Sessions) != 120 || len(tr.Series) != len(want) {
		t.Fatalf("Trend: %d sessions, %d series; want 120 and %d, every cell's throughput and p99", len(tr.Sessions), len(tr.Series), len(want))
	}
	found := map[results.Cell]bool{}
	for i := range tr.Series {
		s := &tr.Series[i]
		c := results.Cell{Proxy: s.Proxy, Mode: s.Mode, Load: s.Load}
		stepped := s.Metric == MetricThroughput && slices.Contains(steppedCells, c)
		slid := s.Metric == MetricThroughput && c == slidCell
		for _, p := range s.Points {
			night := p.At // a series of every night: its index is the night
			switch {
			case stepped && night >= stepNight-1 && night <= stepNight+1 && p.Worse:
				found[c] = true
			case slid && night >= slideNight && night <= slideNight+slideLen && p.Worse:
				found[c] = true
			default:
				t.Errorf("%s %s %s %s: a change point at night %d, %+.1f%% (%+.1f..%+.1f%%); want none", s.Machine, s.Scenario, s.Proxy, s.Metric, night, p.Step, p.Lo, p.Hi)
			}
		}
	}
	for _, c := range append(slices.Clone(steppedCells), slidCell) {
		if !found[c] {
			t.Errorf("%s %s: no change point found for the worse where it was put", c.Scenario(), c.Proxy)
		}
	}
}

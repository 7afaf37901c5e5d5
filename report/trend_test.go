package report

import (
	"bench/internal/chromium"
	"bytes"
	"fmt"
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
	rows, meta, err := nights.Reference(filepath.Join("..", "data"))
	if err != nil {
		t.Fatal(err)
	}
	return rows, meta
}

// generatedHistory writes n nights of the reference session's cells on
// machines (nights.Shifted: three steps, a slide) to a temporary
// directory and returns it.
func generatedHistory(t testing.TB, n int, machines ...string) string {
	t.Helper()
	rows, meta := referenceSession(t)
	dir := t.TempDir()
	if _, err := nights.Write(dir, nights.Shifted(rows, meta, n, 42, machines...)); err != nil {
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
		stepped := s.Metric == MetricThroughput && slices.Contains(nights.SteppedCells, c)
		slid := s.Metric == MetricThroughput && c == nights.SlidCell
		for _, p := range s.Points {
			night := p.At // a series of every night: its index is the night
			switch {
			case stepped && night >= nights.StepNight-1 && night <= nights.StepNight+1 && p.Worse:
				found[c] = true
			case slid && night >= nights.SlideNight && night <= nights.SlideNight+nights.SlideNights && p.Worse:
				found[c] = true
			default:
				t.Errorf("%s %s %s %s: a change point at night %d, %+.1f%% (%+.1f..%+.1f%%); want none", s.Machine, s.Scenario, s.Proxy, s.Metric, night, p.Step, p.Lo, p.Hi)
			}
		}
	}
	for _, c := range append(slices.Clone(nights.SteppedCells), nights.SlidCell) {
		if !found[c] {
			t.Errorf("%s %s: no change point found for the worse where it was put", c.Scenario(), c.Proxy)
		}
	}
}

// TestTrendPage: the page of 120 generated nights opens in Chromium
// from its file with nothing fetched and no console error, has a chart
// of each series with a change point, and draws no text of a chart
// outside it nor over another, at a desktop's width and a phone's
// (chromium.CheckPage and CheckLayout, as the session's page is
// checked); its tables fit as the session's page's do
// (chromium.CheckTables).
func TestTrendPage(t *testing.T) {
	sessions, err := ReadTrendHistory(generatedHistory(t, 120))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Trend(sessions, TrendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteTrends(&b, tr, FormatHTML); err != nil {
		t.Fatal(err)
	}
	charts := 0
	for _, s := range tr.Series {
		if len(s.Points) > 0 {
			charts++
		}
	}
	if charts != 4 {
		t.Fatalf("Trend: %d series with a change point; want the 4 shifted", charts)
	}
	chromium.CheckPage(t, b.Bytes(), "trend-page", 0, 0, charts)
	for _, width := range []int{1400, 420} {
		chromium.CheckLayout(t, b.Bytes(), fmt.Sprintf("trend-page-%d", width), width, 0)
		chromium.CheckTables(t, b.Bytes(), fmt.Sprintf("trend-page-tables-%d", width), width)
	}
}

// BenchmarkTrendPower measures, on generated histories whose every cell's
// runs are drawn from the reference session's own spread, the two
// figures of the nightly's gate (docs/trend.md):
//
//   - found-pct: of the cells whose runs spread 4 to 10%, the share in
//     which a -6% step 15 sessions into a history is found, for the
//     worse within a session of its place, 25 sessions after it (3
//     histories);
//   - alarms-per-1000: on a history with nothing planted but single bad
//     nights (a cell 30% slower for a night, one every 4 nights), the
//     fires of --fail-new 5% per 1000 series-nights, the gate run each
//     night on the nights so far (from the 10th).
func BenchmarkTrendPower(b *testing.B) {
	rows, meta := referenceSession(b)
	cells, spread := nights.Cells(rows)
	start := time.Date(2026, 1, 1, 1, 17, 0, 0, time.UTC)
	for b.Loop() {
		found, tried := 0, 0
		for draws := range uint64(3) {
			h := nights.History{Reference: rows, Meta: meta, Nights: 40, Start: start, Draws: 100 + draws}
			for _, c := range cells {
				h.Shifts = append(h.Shifts, nights.Shift{Cell: c, From: 15, Step: -0.06})
			}
			tr := trendOf(b, h)
			for i := range tr.Series {
				s := &tr.Series[i]
				c := results.Cell{Proxy: s.Proxy, Mode: s.Mode, Load: s.Load}
				if s.Metric != MetricThroughput || spread[c] < 4 || spread[c] > 10 {
					continue
				}
				tried++
				if slices.ContainsFunc(s.Points, func(p TrendPoint) bool { return p.Worse && p.At >= 14 && p.At <= 16 }) {
					found++
				}
			}
		}
		h := nights.History{Reference: rows, Meta: meta, Nights: 60, Start: start, Draws: 7}
		for n := 0; n < h.Nights; n += 4 {
			h.Shifts = append(h.Shifts, nights.Shift{Cell: cells[(n*7)%len(cells)], From: n, Step: -0.3, For: 1})
		}
		tr := trendOf(b, h)
		alarms, seriesNights := 0, 0
		for n := 10; n <= h.Nights; n++ {
			night, err := Trend(tr.Sessions[:n], TrendOptions{})
			if err != nil {
				b.Fatal(err)
			}
			alarms += len(night.NewRegressions(5))
			seriesNights += len(night.Series)
		}
		b.ReportMetric(100*float64(found)/float64(tried), "found-pct")
		b.ReportMetric(1000*float64(alarms)/float64(seriesNights), "alarms-per-1000")
		b.Logf("a -6%% step found in %d of %d cells whose runs spread 4 to 10%% (%.0f%%); --fail-new 5%% fired %d times in %d series-nights",
			found, tried, 100*float64(found)/float64(tried), alarms, seriesNights)
	}
}

// trendOf writes the history h and returns its trends.
func trendOf(b *testing.B, h nights.History) *Trends {
	b.Helper()
	dir := b.TempDir()
	if _, err := nights.Write(dir, h); err != nil {
		b.Fatal(err)
	}
	sessions, err := ReadTrendHistory(dir)
	if err != nil {
		b.Fatal(err)
	}
	tr, err := Trend(sessions, TrendOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return tr
}

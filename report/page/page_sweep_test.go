package page

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"bench/internal/chromium"
	"bench/internal/golden"
	"bench/report"
	"bench/report/internal/reporttest"
	"bench/results"
)

// TestSweepChartSVG: the structure of the chart of the generated
// session's first mix-http searches of no proxy, haproxy and tinyproxy
// (which found no rate), its elements with their classes, colours and
// titles, and its texts at their places rounded to a point.
func TestSweepChartSVG(t *testing.T) {
	rows, files := readPageSweep(t)
	rows = slices.DeleteFunc(rows, func(r results.Row) bool {
		return r.Mode != results.MixHTTP || r.Rep != 1 || !slices.Contains([]string{"no proxy", "haproxy", "tinyproxy"}, r.Proxy)
	})
	tables, err := report.Tables(rows, report.Options{Files: files})
	if err != nil {
		t.Fatal(err)
	}
	tb := tables[0]
	if tb.Kind != report.KindSweep || tb.Sweep == nil {
		t.Fatalf("the first table is %s of %s, its bounds %v; want the Sustainable rate with its bounds", tb.Kind, tb.Family, tb.Sweep)
	}
	svg, ok, err := sweepChart(tb, tb.Rows[0], tb.Sweep, report.NewPalette(tables))
	if err != nil || !ok {
		t.Fatalf("sweepChart(%s) = %v, %v", tb.Rows[0].Label, ok, err)
	}
	structure := reporttest.SVGStructure(t, svg)
	golden.Check(t, filepath.Join("testdata", "golden", "chart-sweep.txt"), structure)
	// a point a step with a latency, p99 and p50, each titled; a line a
	// column and percentile of more than one step (tinyproxy's search
	// ended at its first), and the bound's
	steps, cols := 0, 0
	for _, c := range tb.Rows[0].Cells {
		n := 0
		for _, s := range c.Searches {
			n += len(s.Steps)
		}
		steps += n
		if n > 1 {
			cols++
		}
	}
	points := strings.Count(string(svg), `<g class="point"`)
	lines := strings.Count(string(svg), `<g class="line"`)
	if points != 2*steps || lines != 2*cols+1 || cols != 2 {
		t.Errorf("the chart has %d points and %d lines; want %d (p99 and p50 of %d steps) and %d (two of each of the %d columns of more than a step, and the bound)", points, lines, 2*steps, steps, 2*cols+1, cols)
	}
	for _, want := range []string{"p99 bound, 50 ms", "offered, k req/s", "latency, ms", "no proxy"} {
		if !bytes.Contains(structure, []byte(want)) {
			t.Errorf("the chart lacks the text %q", want)
		}
	}
}

// TestSweepPageLayout opens the page of the generated sweep session in
// Chromium, as wide as a desktop's window and as a phone's, and checks
// its charts as the other pages' (chromium.CheckLayout): the
// Sustainable rate's bar chart and a chart of each mode's steps, every
// point titled, no text outside its chart nor over another, each column
// one colour.
func TestSweepPageLayout(t *testing.T) {
	rows, files := readPageSweep(t)
	tables, err := report.Tables(rows, report.Options{Files: files})
	if err != nil {
		t.Fatal(err)
	}
	page := checkSweepPage(t, rows, files, tables, "sweep-page", 2, "2, mix-http's and mix-relay's")
	if bytes.Contains(page, []byte("No per-second series")) {
		t.Errorf("the page says the sweeps have no time series; a sweep's steps have their own chart")
	}
}

// checkSweepPage renders the page of rows, checks that it has charts
// sweep charts (want says which) and opens it in Chromium as wide as a
// desktop's window and as a phone's (chromium.CheckPage, CheckLayout,
// the screenshots named after name); it returns the page.
func checkSweepPage(t *testing.T, rows []results.Row, files []results.SessionFile, tables []report.Table, name string, charts int, want string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, rows, report.Options{Format: report.FormatHTML, Files: files}); err != nil {
		t.Fatal(err)
	}
	page := b.Bytes()
	if n := bytes.Count(page, []byte(`<figure class="`+classSweep+`">`)); n != charts {
		t.Errorf("the page has %d sweep charts; want %s", n, want)
	}
	chromium.CheckPage(t, page, name, 1, 0, 0)
	for _, width := range []int{1400, 420} {
		chromium.CheckLayout(t, page, fmt.Sprintf("%s-%d", name, width), width, barCount(tables))
	}
	return page
}

// TestSweepPageMarkUnderTitle: the page of searches whose tallest bar
// is marked ‡ and stands under the chart's title, as mix-tls's through
// no proxy, stunnel, haproxy and nginx measured it (nginx 3.5k/s ‡
// beside no proxy's 1.6k/s, stunnel and haproxy none), is laid out as
// the others are: the mark does not touch the title, and the searches
// that ended at their first step (stunnel's and haproxy's here) have
// their points, each titled, and no line of one point, which would be
// a titled group with nothing drawn.
func TestSweepPageMarkUnderTitle(t *testing.T) {
	cols := []reporttest.SweepColumn{
		{Proxy: "no proxy", Kind: "direct", Group: results.Baseline, Capacity: 1600, Bound: results.BoundClient, Tail: 1, Errors: 0},
		{Proxy: "stunnel", Kind: "stunnel", Group: results.Copy, Capacity: 3000, Bound: results.BoundProxy, Tail: 1, Errors: 0.05},
		{Proxy: "haproxy", Kind: "haproxy", Group: results.Copy, Capacity: 3000, Bound: results.BoundProxy, Tail: 1, Errors: 0.05},
		{Proxy: "nginx", Kind: "nginx", Group: results.Copy, Capacity: 3500, Bound: results.BoundClient, Tail: 1, Errors: 0},
	}
	at := time.Date(2026, 12, 2, 13, 0, 0, 0, time.UTC)
	var rows []results.Row
	for _, c := range cols {
		rows = append(rows, reporttest.SimulateSearch(c, "tls", c.Capacity, 1, results.MixTLS, &at)...)
	}
	tables, err := report.Tables(rows, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkSweepPage(t, rows, nil, tables, "tls-sweep-page", 1, "mix-tls's")
}

// TestPublishedSweepPageLayout: the sweep session published under
// data/sweeps, a real search of the sustainable rate of every mix mode
// through every packaged column that serves it (17 searches of 5 modes):
// every step of each search a row, numbered from 1 without a gap, every
// search of the plan there, the Sustainable rate table a row a mode and
// a cell a column, and its page laid out as the generated session's is
// (no label outside its chart nor over another, each column one colour,
// every point titled), a chart a mode.
func TestPublishedSweepPageLayout(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "..", "data", "sweeps", "*.csv"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no session file in ../data/sweeps: %v", err)
	}
	rows, files := reporttest.ReadSession(t, paths)
	steps := map[string]int{} // a search's steps so far
	modes := map[results.Mode]bool{}
	for i := range rows {
		r := &rows[i]
		st, ok, err := results.ParseStep(r.Note)
		if !ok || err != nil || r.Load != results.LoadSweep || !(r.OfferedRate > 0) {
			t.Fatalf("%s %s rep %d: note %q, load %q, offered %g; want a sweep's step", r.Proxy, r.Mode, r.Rep, r.Note, r.Load, r.OfferedRate)
		}
		modes[r.Mode] = true
		key := fmt.Sprintf("%s %s %s %d", r.Session, r.Proxy, r.Mode, r.Rep)
		if !st.Confirm {
			if st.N != steps[key]+1 {
				t.Errorf("%s: step %d after step %d; want every step's row", key, st.N, steps[key])
			}
			steps[key] = st.N
		}
	}
	if len(steps) != 17 || len(modes) != 5 {
		t.Errorf("%d searches of %d modes; want the plan's 17 of 5 (bench run --sweep --scenario 'mix-*' --dry-run)", len(steps), len(modes))
	}
	tables, err := report.Tables(rows, report.Options{Files: files})
	if err != nil {
		t.Fatal(err)
	}
	var found int
	for _, tb := range tables {
		if tb.Kind != report.KindSweep {
			continue
		}
		found++
		if len(tb.Rows) != len(modes) {
			t.Errorf("the Sustainable rate table has %d rows; want one a mode, %d", len(tb.Rows), len(modes))
		}
		for _, r := range tb.Rows {
			if len(r.Cells) != len(tb.Columns) {
				t.Errorf("%s: %d cells; want one a column, %d", r.Label, len(r.Cells), len(tb.Columns))
			}
		}
	}
	if found != 1 {
		t.Fatalf("%d Sustainable rate tables; want 1", found)
	}
	checkSweepPage(t, rows, files, tables, "published-sweep-page", len(modes), "a chart a mode")
}

// TestSweepChartOneStep: the chart of a search that ended at its first
// step, one rate and one latency (the proxy exited in its first window
// at 500/s, p50 and p99 0.5 ms), is drawn on log axes around its point,
// where the plot's own range would reach below 0.
func TestSweepChartOneStep(t *testing.T) {
	r := reporttest.StepRow(1, reporttest.Fail(1, "nginx exited during the run"), 500)
	r.P50Ms, r.P99Ms = 0.5, 0.5
	var b bytes.Buffer
	if err := Render(&b, []results.Row{r}, report.Options{Format: report.FormatHTML}); err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b.Bytes(), []byte(`<figure class="`+classSweep+`">`)); n != 1 {
		t.Errorf("%d sweep charts; want the search's", n)
	}
	if n := bytes.Count(b.Bytes(), []byte(`<g class="point" data-column="nginx">`)); n != 2 {
		t.Errorf("%d points; want the step's p50 and p99", n)
	}
	if bytes.Contains(b.Bytes(), []byte(`<g class="line" data-column="nginx">`)) {
		t.Errorf("a line of one point, which draws nothing under its title")
	}
}

// TestAxisEnds: a sweep chart's axis runs from a 1-2-5 value below its
// least point to one above its greatest, a tick's label at each end and
// no line running off it (the no proxy line of the published page
// reaches 5.75k/s and 4.5 s).
func TestAxisEnds(t *testing.T) {
	for _, c := range []struct{ v, below, above float64 }{
		{0.001, 0.0005, 0.002},
		{5.75, 5, 10},
		{4500, 2000, 5000},
		{5000, 2000, 10000},
		{2, 1, 5},
		{0.3, 0.2, 0.5},
	} {
		if got := below125(c.v); math.Abs(got-c.below) > 1e-9*c.below {
			t.Errorf("below125(%v) = %v; want %v", c.v, got, c.below)
		}
		if got := above125(c.v); math.Abs(got-c.above) > 1e-9*c.above {
			t.Errorf("above125(%v) = %v; want %v", c.v, got, c.above)
		}
	}
}

// TestStoppedText: a column's legend entry says where and why its search
// stopped, or how many of its searches stopped on which bound.
func TestStoppedText(t *testing.T) {
	stop := func(offered float64, why string) report.Search {
		return report.Search{Stop: &report.SearchStep{Offered: offered, Why: why}}
	}
	for _, c := range []struct {
		searches []report.Search
		want     string
	}{
		{[]report.Search{stop(2000, "failures 0.13% over 0.1% (13 of 10000 due)")}, ": stopped at 2.00k/s on failures 0.13% over 0.1%"},
		{[]report.Search{stop(1, "failures 20.00% over 0.1% (1 of 5 due), achieved 1/s of 1/s (80.0%, under 99%)")},
			": stopped at 0.001k/s on failures 20.00% over 0.1%, achieved 1/s of 1/s"},
		{[]report.Search{stop(8120, "p99 57.7 ms over 50 ms"), stop(8380, "p99 57.6 ms over 50 ms"), stop(500, "failures 2.1% over 0.1%")},
			": stopped 2 on p99 over 50 ms, 1 on failures over 0.1%"},
		{[]report.Search{{}}, ""},
	} {
		if got := stoppedText(c.searches); got != c.want {
			t.Errorf("stoppedText(%+v) = %q; want %q", c.searches, got, c.want)
		}
	}
}

// readPageSweep reads the generated sweep session of report's tests
// (reporttest.GeneratedSweep, its files in ../testdata/sweep) as bench
// report does.
func readPageSweep(t testing.TB) ([]results.Row, []results.SessionFile) {
	t.Helper()
	return reporttest.ReadSession(t, []string{filepath.Join("..", "testdata", "sweep", "xeon-2-cpus-2026-12-01-sweep.csv")})
}

// TestPublishedSweepVerdicts: the published sweep's squid and tinyproxy,
// which fail one exchange in ten at every rate (each cuts the exchanges
// that half-close), find no rate: their cells read so, with the share
// that failed, and their searches say why, squid's mix-http first among
// them; no cell reads a rate of a few exchanges a second; and where no
// proxy found no rate, or less than a proxy, a note says why.
func TestPublishedSweepVerdicts(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "..", "data", "sweeps", "*.csv"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no session file in ../data/sweeps: %v", err)
	}
	rows, files := reporttest.ReadSession(t, paths)
	tables, err := report.Tables(rows, report.Options{Files: files})
	if err != nil {
		t.Fatal(err)
	}
	flat := map[string]bool{}
	for _, tb := range tables {
		if tb.Kind != report.KindSweep {
			continue
		}
		for _, r := range tb.Rows {
			mode, _, _ := strings.Cut(r.Label, ", ")
			var base *report.Cell
			for i, c := range r.Cells {
				if c.Group == results.Baseline {
					base = &r.Cells[i]
				}
				if c.Median != nil && *c.Median < 0.05 {
					t.Errorf("%s, %s: %q; want no rate below 50/s, the search's floor", mode, c.Proxy, c.Text)
				}
				if c.Proxy != "squid" && c.Proxy != "tinyproxy" || len(c.Searches) == 0 {
					continue
				}
				s := c.Searches[0]
				if !s.Flat || !strings.HasPrefix(c.Text, "fails at every rate !") || !strings.Contains(s.Cause, "of the failed exchanges half-closed: "+c.Proxy) {
					t.Errorf("%s, %s: %q, search %q; want it failing at every rate, its share marked, and why", mode, c.Proxy, c.Text, s)
				}
				flat[c.Proxy+" "+mode] = true
			}
			var above bool // no proxy searched, and found less than a proxy or nothing
			for _, c := range r.Cells {
				above = above || base != nil && len(base.Searches) > 0 && c.Group != results.Baseline && c.Median != nil && (base.Median == nil || *c.Median > *base.Median)
			}
			noted := slices.ContainsFunc(tb.Notes, func(n report.Note) bool {
				return slices.Contains(n.Loads, strings.TrimSuffix(mode, ", k req/s")) && strings.HasPrefix(n.Text, "no proxy found")
			})
			if above != noted {
				t.Errorf("%s: no proxy below a proxy %v, noted %v; want a note where it is", mode, above, noted)
			}
		}
	}
	if !flat["squid mix-http-sweep"] {
		t.Errorf("squid's mix-http: not found failing at every rate (%v)", flat)
	}
}

package compare

import (
	"bytes"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/golden"
	"bench/report"
	"bench/report/chart"
	"bench/report/htmldoc"
	"bench/report/internal/reporttest"
	"bench/results"
)

func TestUDecides(t *testing.T) {
	for _, c := range []struct {
		n1, n2 int
		want   bool
	}{
		{1, 1, false}, {2, 2, false}, {3, 3, false}, {2, 5, false},
		{4, 4, true}, {3, 5, true}, {5, 3, true}, {2, 9, true}, {10, 10, true},
	} {
		if got := report.UDecides(c.n1, c.n2); got != c.want {
			t.Errorf("uDecides(%d, %d) = %v, want %v", c.n1, c.n2, got, c.want)
		}
	}
}

// reps makes ok runs of nginx under ka-1k, one per figure (k req/s).
func reps(machine, session string, kreq ...float64) []results.Row {
	var out []results.Row
	for i, k := range kreq {
		out = append(out, reporttest.Run(machine, session, "nginx", results.Copy, "ka-1k", i+1, k))
	}
	return out
}

func TestCompareDecides(t *testing.T) {
	gate := 10.0
	for _, c := range []struct {
		name      string
		old, new  []float64
		real      bool
		test      string
		regressed bool
	}{
		{"regression", []float64{37, 37.5, 38, 37.2, 37.8}, []float64{32, 32.5, 33, 32.2, 32.8}, true, report.TestU, true},
		{"small regression", []float64{37, 37.5, 38, 37.2, 37.8}, []float64{35, 35.5, 36, 35.2, 35.8}, true, report.TestU, false},
		{"improvement", []float64{32, 32.5, 33, 32.2, 32.8}, []float64{37, 37.5, 38, 37.2, 37.8}, true, report.TestU, false},
		{"tie", []float64{37, 37, 37, 37}, []float64{37, 37, 37, 37}, false, report.TestU, false},
		{"noise", []float64{15.1, 15.9, 15.4, 16.2, 15.0}, []float64{15.8, 15.2, 16.4, 15.5, 16.0}, false, report.TestU, false},
		{"ranges apart", []float64{30, 31, 32}, []float64{20, 21, 22}, true, report.TestRange, true},
		{"ranges overlap", []float64{30, 31, 32}, []float64{20, 21, 30}, false, report.TestRange, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmp, err := Compare(reps("ARM", "a", c.old...), reps("ARM", "b", c.new...), Options{FailOver: &gate})
			if err != nil {
				t.Fatal(err)
			}
			ch := cmp.Cells[0]
			if ch.Real != c.real || ch.Test != c.test || ch.Regressed != c.regressed {
				t.Errorf("real %v by %q, regressed %v; want %v by %q, %v", ch.Real, ch.Test, ch.Regressed, c.real, c.test, c.regressed)
			}
		})
	}
}

func TestCompareMachines(t *testing.T) {
	old, new := reps("ARM (M4)", "a", 1, 2, 3), reps("Intel", "b", 1, 2, 3)
	_, err := Compare(old, new, Options{})
	if !errors.Is(err, ErrAcrossMachines) || !strings.Contains(err.Error(), "old runs are from ARM (M4), new from Intel") {
		t.Errorf("different machines: got %v", err)
	}
	cmp, err := Compare(old, new, Options{AcrossMachines: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(cmp.Cells) != 1 || cmp.Cells[0].Machine != "ARM (M4) → Intel" {
		t.Errorf("across machines: got %+v, want one cell of ARM (M4) → Intel", cmp.Cells)
	}
	_, err = Compare(append(old, reps("Intel", "a", 1)...), new, Options{AcrossMachines: true})
	if err == nil || !strings.Contains(err.Error(), "each side must be of one machine") {
		t.Errorf("across machines, two on one side: got %v", err)
	}
}

func TestCompareOneSide(t *testing.T) {
	old := reps("ARM", "a", 1, 2, 3)
	new := []results.Row{reporttest.Run("ARM", "b", "squid", results.Copy, "ka-1k", 1, 5)}
	failed := reporttest.Run("ARM", "b", "nginx", results.Copy, "ka-1k", 1, 0)
	failed.Status = results.Failed
	new = append(new, failed)
	gate := 10.0
	cmp, err := Compare(old, new, Options{FailOver: &gate})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ch := range cmp.Cells {
		got = append(got, ch.Proxy+": "+ch.verdict())
	}
	want := "nginx: no ok run in new, regressed; squid: only in new"
	if strings.Join(got, "; ") != want {
		t.Errorf("got %q, want %q", strings.Join(got, "; "), want)
	}
}

// cellRuns makes a proxy's ok runs under a load, one per figure (k req/s).
func cellRuns(session, proxy, load string, kreq ...float64) []results.Row {
	var out []results.Row
	for i, k := range kreq {
		out = append(out, reporttest.Run("ARM", session, proxy, results.Copy, load, i+1, k))
	}
	return out
}

func TestDecide(t *testing.T) {
	for _, c := range []struct {
		name     string
		old, new []float64
		real     bool
		test     string
	}{
		// without a run on a side nothing is decided
		{"no old run", nil, []float64{1, 2, 3}, false, ""},
		// a single run has no spread: however far apart, nothing is real
		{"one run", []float64{30}, []float64{20, 21, 22}, false, report.TestOneRun},
		{"one run each", []float64{30}, []float64{20}, false, report.TestOneRun},
		// 3 and 3: the ranges decide, here apart
		{"ranges apart", []float64{30, 31, 32}, []float64{20, 21, 22}, true, report.TestRange},
		// a range touching the other's is not apart
		{"ranges touch", []float64{30, 31, 32}, []float64{28, 29, 30}, false, report.TestRange},
		// 4 and 4 that do not overlap: U decides, real
		{"U apart", []float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}, true, report.TestU},
		// interleaved: U decides, not real
		{"U interleaved", []float64{1, 3, 5, 7}, []float64{2, 4, 6, 8}, false, report.TestU},
	} {
		real, test, p := report.Decide(c.old, c.new)
		if real != c.real || test != c.test || (p != nil) != (test == report.TestU) {
			t.Errorf("%s: Decide(%v, %v) = %v, %q, p %v; want %v, %q", c.name, c.old, c.new, real, test, p, c.real, c.test)
		}
	}
}

func TestChangeColumns(t *testing.T) {
	for _, c := range []struct {
		name          string
		old, new      []float64
		delta, reason string
	}{
		// real by the ranges: 8/11, ± half of 9/10 - 7/12
		{"ranges apart", []float64{10, 11, 12}, []float64{7, 8, 9}, "-27.3% ±16%", "ranges apart n=3+3"},
		// overlapping ranges: ~
		{"ranges overlap", []float64{10, 11, 12}, []float64{11, 11.5, 12}, "~", "ranges overlap n=3+3"},
		// a small ±, with a decimal
		{"narrow", []float64{100, 100.1, 100.2}, []float64{110, 110.1, 110.2}, "+10.0% ±0.2%", "ranges apart n=3+3"},
		// U decides, with its p-value as benchstat prints it; ± half
		// of 12.4/10 - 12/10.4
		{"U", []float64{10, 10.1, 10.2, 10.3, 10.4}, []float64{12, 12.1, 12.2, 12.3, 12.4}, "+19.6% ±4%", "p=0.008 n=5+5"},
		// one side only
		{"only in old", []float64{10}, nil, "–", "only in old"},
	} {
		old, new := cellRuns("a", "nginx", "ka-1k", c.old...), cellRuns("b", "nginx", "ka-1k", c.new...)
		if len(new) == 0 {
			new = cellRuns("b", "squid", "ka-1k", 1)
		}
		cmp, err := Compare(old, new, Options{})
		if err != nil {
			t.Fatal(err)
		}
		ch := cmp.Cells[0]
		if got := ch.delta() + " | " + ch.reason(); got != c.delta+" | "+c.reason {
			t.Errorf("%s: change and test of %v → %v = %q; want %q", c.name, c.old, c.new, got, c.delta+" | "+c.reason)
		}
	}
}

// TestSummaryAndGeomean: the first line counts the real changes each way
// with the largest, the cells within noise and those not compared; the
// geomean is of the cells on both sides.
func TestSummaryAndGeomean(t *testing.T) {
	var old, new []results.Row
	add := func(proxy, load string, o, n []float64) {
		old = append(old, cellRuns("a", proxy, load, o...)...)
		new = append(new, cellRuns("b", proxy, load, n...)...)
	}
	add("nginx", "ka-1k", []float64{10, 10, 10}, []float64{8, 8, 8})          // -20%
	add("nginx", "close-1k", []float64{10, 10, 10}, []float64{9, 9, 9})       // -10%
	add("squid", "ka-1k", []float64{10, 10, 10}, []float64{12.5, 12.5, 12.5}) // +25%
	add("haproxy", "ka-1k", []float64{10, 11, 12}, []float64{11, 12, 13})     // within noise
	old = append(old, cellRuns("a", "tinyproxy", "ka-1k", 5)...)              // old only

	cmp, err := Compare(old, new, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "2 real regressions (largest: nginx http-ka-1k -20.0% ±0.0%), 1 real improvement (largest: squid http-ka-1k +25.0% ±0.0%), " +
		"1 cell within noise, 1 cell not compared (one side only, or no ok run on a side)"
	if got := cmp.Summary(); got != want {
		t.Errorf("Summary() = %q; want %q", got, want)
	}
	tables := cmp.Tables()
	if len(tables) != 1 || tables[0].Geomean == nil || tables[0].GeomeanOf != 4 {
		t.Fatalf("Tables() = %+v; want one table, its geomean of 4 cells", tables)
	}
	g := (math.Pow(0.8*0.9*1.25*12.0/11, 1.0/4) - 1) * 100
	if math.Abs(*tables[0].Geomean-g) > 1e-9 {
		t.Errorf("geomean = %v; want %v", *tables[0].Geomean, g)
	}

	same, err := Compare(old, old, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := same.Summary(), "No real regression, no real improvement, 5 cells within noise"; got != want {
		t.Errorf("Summary() of a session with itself = %q; want %q", got, want)
	}
}

// TestCompareChartSVG: the structure of a comparison's chart, its
// elements and texts (the legend, the cells, the real change above its
// pair; a panel per unit), not its pixels.
func TestCompareChartSVG(t *testing.T) {
	old := append(cellRuns("a", "nginx", "ka-1k", 10, 10.5, 11), cellRuns("a", "squid", "ka-1k", 5, 5.2, 5.4)...)
	new := append(cellRuns("b", "nginx", "ka-1k", 8, 8.4, 8.8), cellRuns("b", "squid", "ka-1k", 5.1, 5.2, 5.3)...)
	stream := func(session string, gbps float64) results.Row {
		r := reporttest.Run("ARM", session, "nginx", results.Copy, "ka-1m", 1, 0)
		r.Bytes = int64(gbps * 1e9 / 8 * r.Seconds)
		return r
	}
	old, new = append(old, stream("a", 6)), append(new, stream("b", 6))
	cmp, err := Compare(old, new, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tables := cmp.Tables()
	svg, ok, err := compareChart(tables[0], chart.PaletteOf([]string{"nginx", "squid"}, report.Directions))
	if err != nil || !ok {
		t.Fatalf("compareChart(%s) = %v, %v", tables[0].Family, ok, err)
	}
	golden.Check(t, filepath.Join("testdata", "golden", "chart-compare.txt"), reporttest.SVGStructure(t, svg))
}

// TestCompareSweeps: two sweep sessions compare by their searches' rates,
// a higher rate being better: haproxy's 20% higher is a real improvement,
// squid's 20% lower a regression past the gate, the others alike, a
// column that found no rate on either side not compared; a latency
// metric leaves the sweeps out.
func TestCompareSweeps(t *testing.T) {
	old := readSweep(t, "xeon-2-cpus-2026-12-01-sweep.csv")
	new := readSweep(t, "xeon-2-cpus-2026-12-02-sweep.csv")
	gate := 10.0
	cmp, err := Compare(old, new, Options{FailOver: &gate})
	if err != nil {
		t.Fatal(err)
	}
	byCell := map[string]Change{}
	for _, ch := range cmp.Cells {
		if ch.Family != report.FamilyOf(results.MixHTTP, results.LoadSweep) || ch.Unit != string(results.KReqs) {
			t.Errorf("cell %s %s: family %q, unit %q; want %q in %s", ch.Proxy, ch.Scenario, ch.Family, ch.Unit, report.FamilyOf(results.MixHTTP, results.LoadSweep), results.KReqs)
		}
		byCell[ch.Proxy+" "+ch.Scenario] = ch
	}
	for _, c := range []struct {
		cell          string
		better, worse bool
		low, high     float64 // the change's range, in percent
		regressed     bool
		verdictPrefix string
	}{
		{"haproxy mix-http-sweep", true, false, 15, 25, false, "ranges apart"},  // its capacity 20% higher
		{"haproxy mix-relay-sweep", true, false, 15, 25, false, "ranges apart"}, // in both modes
		{"squid mix-http-sweep", false, true, -25, -15, true, "ranges apart"},   // 20% lower, past the gate
		{"nginx mix-http-sweep", false, false, 0, 0, false, "ranges overlap"},   // alike
		{"tinyproxy mix-http-sweep", false, false, 0, 0, false, "no ok run"},    // no rate either side
	} {
		ch, ok := byCell[c.cell]
		switch {
		case !ok:
			t.Errorf("compare has no cell %s", c.cell)
		case ch.Better(cmp) != c.better || ch.Worse(cmp) != c.worse || ch.Regressed != c.regressed || !strings.HasPrefix(ch.reason(), c.verdictPrefix):
			t.Errorf("compare of %s = better %v, worse %v, regressed %v, %q; want %v, %v, %v, %q...",
				c.cell, ch.Better(cmp), ch.Worse(cmp), ch.Regressed, ch.reason(), c.better, c.worse, c.regressed, c.verdictPrefix)
		case c.better || c.worse:
			if *ch.Change < c.low || *ch.Change > c.high {
				t.Errorf("compare of %s = %+.1f%%; want %g%% to %g%%", c.cell, *ch.Change, c.low, c.high)
			}
		}
	}
	if n := len(cmp.Cells); n != 10 {
		t.Errorf("compare has %d cells; want the 10 of the sweep tables", n)
	}
	var b bytes.Buffer
	if err := Write(&b, cmp, report.FormatMarkdown); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "golden", "sweep-compare.md"), b.Bytes())

	p99, err := Compare(old, new, Options{Metric: report.MetricP99})
	if err != nil {
		t.Fatal(err)
	}
	if len(p99.Cells) != 0 {
		t.Errorf("compare --metric p99 has %d cells; want none of the sweeps", len(p99.Cells))
	}
}

// readSweep reads a session of the generated sweeps of report's tests.
func readSweep(t *testing.T, name string) []results.Row {
	t.Helper()
	rows, err := results.ReadFiles([]string{filepath.Join("..", "testdata", "sweep", name)})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestComparisonTipsForged: a proxy named as a tip's marker is a name on
// a comparison's page, drawn as text: it neither panics the writer nor
// puts a title of its own choosing, or takes one away.
func TestComparisonTipsForged(t *testing.T) {
	old := append(cellRuns("a", "nginx", "ka-1k", 10, 10.5, 11), cellRuns("a", "squid", "ka-1k", 5, 5.2, 5.4)...)
	new := append(cellRuns("b", "nginx", "ka-1k", 8, 8.4, 8.8), cellRuns("b", "squid", "ka-1k", 5.1, 5.2, 5.3)...)
	page := func(old, new []results.Row) func(*bytes.Buffer) error {
		return func(b *bytes.Buffer) error {
			cmp, err := Compare(old, new, Options{})
			if err != nil {
				return err
			}
			return Write(b, cmp, report.FormatHTML)
		}
	}
	// the counts of a page where nginx is renamed plainly: a name of
	// no proxy known draws the charts of one
	const plain = "tip 0"
	plainPage, err := reporttest.RenderSafe(page(reporttest.Renamed(old, "nginx", plain), reporttest.Renamed(new, "nginx", plain)))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range reporttest.ForgedTips {
		got, err := reporttest.RenderSafe(page(reporttest.Renamed(old, "nginx", name), reporttest.Renamed(new, "nginx", name)))
		switch {
		case err != nil:
			t.Errorf("compare --format html with a proxy named %q: %v", name, err)
		case reporttest.TipCounts(got) != reporttest.TipCounts(plainPage):
			t.Errorf("compare --format html with a proxy named %q: %s; want those of the page with %q, %s", name, reporttest.TipCounts(got), plain, reporttest.TipCounts(plainPage))
		case !strings.Contains(got, ">"+htmldoc.Esc(name)+"</text>"):
			t.Errorf("compare --format html with a proxy named %q: the charts draw no text of the name", name)
		}
	}
}

// TestCatalogUnits: compare's cell of every catalog scenario is the
// scenario's, its figure the run's (results.Row.Figure, which the
// tables print: report's TestCatalogUnitsAgree), in the unit of its cell.
func TestCatalogUnits(t *testing.T) {
	for _, sc := range reporttest.UnitScenarios() {
		row := reporttest.CatalogRow(sc)
		cmp, err := Compare([]results.Row{row}, []results.Row{row}, Options{})
		if err != nil || len(cmp.Cells) != 1 {
			t.Fatalf("%s: compare: %v, %d cells", sc.Name, err, len(cmp.Cells))
		}
		ch := cmp.Cells[0]
		if unit := row.Cell().Unit(); ch.Unit != string(unit) || *ch.New.Median != row.Figure() || ch.Scenario != report.RowLabel(sc.Mode, row.Load) {
			t.Errorf("%s: compare gives %s: %g %s; the run's figure is %g %s", sc.Name, ch.Scenario, *ch.New.Median, ch.Unit, row.Figure(), unit)
		}
		if !strings.HasPrefix(ch.Load, sc.Load.Name) {
			t.Errorf("%s: compare's load %q", sc.Name, ch.Load)
		}
	}
}

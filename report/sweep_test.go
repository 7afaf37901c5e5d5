package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"bench/internal/chromium"
	"bench/internal/golden"
	"bench/internal/text"
	"bench/report/internal/reporttest"
	"bench/results"
)

// stepRow is a step of a sweep's search: nginx's under mix-http in rep,
// at offered exchanges a second, its note the step's (and more after
// "; " where more is given).
func stepRow(rep int, step results.Step, offered float64, more ...string) results.Row {
	note := strings.Join(append([]string{step.String()}, more...), "; ")
	return results.Row{Machine: "Xeon", Session: "s", Proxy: "nginx", Kind: "nginx", Group: results.Copy,
		Mode: results.MixHTTP, Load: results.LoadSweep, Rep: rep, Seconds: 2, Requests: int64(2 * offered),
		Status: results.OK, Bound: results.BoundProxy, Note: note, OfferedRate: offered, HasOffered: true,
		P50Ms: 1, P99Ms: 10, HasLatency: true}
}

// pass and fail are the steps of the tests' searches: step n (0: the
// confirming window) passing, or failing for why.
func pass(n int) results.Step { return results.Step{N: n, Confirm: n == 0, Pass: true} }
func fail(n int, why string) results.Step {
	return results.Step{N: n, Confirm: n == 0, Why: why}
}

// ordered gives the rows their windows' starts, a minute apart in their
// order, as a session writes them.
func ordered(rows []results.Row) []results.Row {
	at := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	for i := range rows {
		rows[i].Started = at.Add(time.Duration(i) * time.Minute)
	}
	return rows
}

func ptrs(rows []results.Row) []*results.Row {
	out := make([]*results.Row, len(rows))
	for i := range rows {
		out[i] = &rows[i]
	}
	return out
}

// TestSearchOf: a search's rate is its last passing confirming window's
// offered rate, its stop the last step that failed.
func TestSearchOf(t *testing.T) {
	const p99 = "p99 63.2 ms over 50 ms"
	for _, c := range []struct {
		name  string
		steps []results.Row
		rate  float64 // 0: none found
		stop  string  // Search.stopText
	}{
		// doubling, then halving the interval, then the confirming
		// window passes at the last pass
		{"confirm passes", []results.Row{
			stepRow(1, pass(1), 500), stepRow(1, pass(2), 1000), stepRow(1, fail(3, p99), 2000),
			stepRow(1, pass(4), 1500), stepRow(1, fail(5, p99), 1750), stepRow(1, pass(0), 1500)},
			1500, "step 5 at 1.75k/s failed: p99 63.2 ms over 50 ms (bound: proxy)"},
		// the confirming window fails at 1500/s; the search goes on
		// below it and confirms 1250/s
		{"confirm fails, a lower one passes", []results.Row{
			stepRow(1, pass(1), 500), stepRow(1, pass(2), 1000), stepRow(1, fail(3, p99), 2000),
			stepRow(1, pass(4), 1500), stepRow(1, fail(0, "errors 0.4% over 0.1%"), 1500),
			stepRow(1, pass(5), 1250), stepRow(1, pass(0), 1250)},
			1250, "the confirming window at 1.50k/s failed: errors 0.4% over 0.1% (bound: proxy)"},
		// the first rate fails: no rate, and why
		{"no rate", []results.Row{stepRow(1, fail(1, "errors 2.1% over 0.1%"), 500)},
			0, "step 1 at 0.500k/s failed: errors 2.1% over 0.1% (bound: proxy)"},
		// a run that failed fails its step, its note the why
		{"failed run", []results.Row{func() results.Row {
			r := stepRow(1, fail(1, "the proxy exited"), 500)
			r.Status, r.Bound = results.Failed, ""
			return r
		}()}, 0, "step 1 at 0.500k/s failed: the proxy exited"},
		// the steps in the order they ran, whatever the file's
		{"out of order", func() []results.Row {
			rows := ordered([]results.Row{stepRow(1, pass(1), 500), stepRow(1, fail(2, p99), 1000), stepRow(1, pass(0), 500)})
			rows[0], rows[2] = rows[2], rows[0]
			return rows
		}(), 500, "step 2 at 1.00k/s failed: p99 63.2 ms over 50 ms (bound: proxy)"},
		// a step that could not be measured, its row without a start
		// (a session from before they were stamped): it ended the search,
		// whatever its place among the measured ones
		{"unmeasured step last", func() []results.Row {
			rows := ordered([]results.Row{stepRow(1, pass(1), 500), stepRow(1, fail(2, p99), 1000), stepRow(1, pass(3), 750)})
			crashed := stepRow(1, fail(4, "nginx exited during the run"), 875)
			crashed.Status, crashed.Bound = results.Failed, ""
			return append([]results.Row{crashed}, rows...)
		}(), 0, "step 4 at 0.875k/s failed: nginx exited during the run"},
		// a search that could not start: its one row has no step
		{"did not start", []results.Row{func() results.Row {
			r := stepRow(1, pass(1), 0)
			r.Note, r.Status, r.Bound, r.OfferedRate, r.HasOffered = "start squid: exit status 1", results.Failed, "", 0, false
			return r
		}()}, 0, "the search did not start: start squid: exit status 1"},
		// every confirm failed: the highest step that passed below
		// every failure, not confirmed (the name says so)
		{"not confirmed", []results.Row{
			stepRow(1, pass(1), 500), stepRow(1, pass(2), 1000), stepRow(1, fail(3, p99), 2000),
			stepRow(1, pass(4), 1500), stepRow(1, fail(5, p99), 1750), stepRow(1, fail(0, p99), 1500),
			stepRow(1, fail(0, p99), 1470)},
			1000, "the confirming window at 1.47k/s failed: p99 63.2 ms over 50 ms (bound: proxy)"},
		// every confirm failed, and no step passed below them: none
		{"confirms failed, no pass below", []results.Row{
			stepRow(1, pass(1), 500), stepRow(1, fail(2, p99), 1000), stepRow(1, fail(0, p99), 500)},
			0, "the confirming window at 0.500k/s failed: p99 63.2 ms over 50 ms (bound: proxy)"},
		// no failure: the rate, and no stop
		{"no step failed", []results.Row{stepRow(1, pass(1), 500), stepRow(1, pass(0), 500)}, 500, "no step failed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := searchOf(1, ptrs(c.steps))
			rate := 0.0
			if s.Rate != nil {
				rate = *s.Rate
			}
			if rate != c.rate || s.stopText() != c.stop {
				t.Errorf("searchOf(%s) = rate %g, stop %q; want %g, %q", c.name, rate, s.stopText(), c.rate, c.stop)
			}
			if want := strings.HasPrefix(c.name, "not confirmed"); s.Unconfirmed != want {
				t.Errorf("searchOf(%s).Unconfirmed = %v; want %v", c.name, s.Unconfirmed, want)
			}
		})
	}
}

// sweepCell is the Sustainable rate cells of rows, by column.
func sweepCells(t *testing.T, rows []results.Row) map[string]Cell {
	t.Helper()
	tables, err := Tables(rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Cell{}
	for _, tb := range tables {
		if tb.Kind != kindSweep {
			continue
		}
		for _, c := range tb.Rows[0].Cells {
			out[c.Proxy] = c
		}
	}
	return out
}

// column is the rows of one search each at the rates given: passing
// confirms at them, under the column's name and group.
func confirmed(proxy string, group results.Group, rates ...float64) []results.Row {
	var out []results.Row
	for i, rate := range rates {
		for _, r := range []results.Row{stepRow(i+1, pass(1), rate), stepRow(i+1, fail(2, "p99 80 ms over 50 ms"), 2*rate), stepRow(i+1, pass(0), rate)} {
			r.Proxy, r.Group = proxy, group
			out = append(out, r)
		}
	}
	return out
}

// TestSweepMarks: bold and * only in a row whose proxies' cells each
// have searches enough to tell them apart (minSearches), the legend
// saying so where a row has too few; "none" in the legend where a cell
// reads none, and the caption names no other tables' rule.
func TestSweepMarks(t *testing.T) {
	none := stepRow(1, fail(1, "errors 2.1% over 0.1%"), 500)
	none.Proxy = "tinyproxy"
	for _, c := range []struct {
		name     string
		haproxy  []float64
		bold     bool // nginx's
		unmarked bool // the legend's "no bold, no *"
	}{
		// three searches each, nginx's slowest above haproxy's fastest
		{"three each", []float64{8000, 8100, 7900}, true, false},
		// haproxy's one search: 1.97 against 1.96 says nothing
		{"one of haproxy", []float64{8000}, false, true},
	} {
		var rows []results.Row
		rows = append(rows, confirmed("nginx", results.Copy, 9100, 9200, 9000)...)
		rows = append(rows, confirmed("haproxy", results.Copy, c.haproxy...)...)
		rows = append(rows, none)
		tables, err := Tables(rows, Options{})
		if err != nil {
			t.Fatal(err)
		}
		tb := tables[0]
		nginx := tb.Rows[0].Cells[0]
		if nginx.Proxy != "nginx" || nginx.Bold != c.bold || nginx.Star != c.bold {
			t.Errorf("%s: the cell of %s is bold %v, * %v; want %v", c.name, nginx.Proxy, nginx.Bold, nginx.Star, c.bold)
		}
		marks := map[string]string{}
		for _, it := range legendOf(tb, mediansAlone) {
			marks[it.mark] = it.text
		}
		if _, ok := marks["no bold, no *"]; ok != c.unmarked {
			t.Errorf("%s: legend %q; want \"no bold, no *\" %v", c.name, marks, c.unmarked)
		}
		if _, ok := marks[noRate]; !ok {
			t.Errorf("%s: legend %q; want %q, tinyproxy's cell", c.name, marks, noRate)
		}
		if strings.Contains(tb.Caption, "other tables") {
			t.Errorf("%s: caption %q names the other tables", c.name, tb.Caption)
		}
	}
}

// TestStoppedText: a column's legend entry says where and why its search
// stopped, or how many of its searches stopped on which bound.
func TestStoppedText(t *testing.T) {
	stop := func(offered float64, why string) Search {
		return Search{Stop: &SearchStep{Offered: offered, Why: why}}
	}
	for _, c := range []struct {
		searches []Search
		want     string
	}{
		{[]Search{stop(2000, "failures 0.13% over 0.1% (13 of 10000 due)")}, ": stopped at 2.00k/s on failures 0.13% over 0.1%"},
		{[]Search{stop(1, "failures 20.00% over 0.1% (1 of 5 due), achieved 1/s of 1/s (80.0%, under 99%)")},
			": stopped at 0.001k/s on failures 20.00% over 0.1%, achieved 1/s of 1/s"},
		{[]Search{stop(8120, "p99 57.7 ms over 50 ms"), stop(8380, "p99 57.6 ms over 50 ms"), stop(500, "failures 2.1% over 0.1%")},
			": stopped 2 on p99 over 50 ms, 1 on failures over 0.1%"},
		{[]Search{{}}, ""},
	} {
		if got := stoppedText(c.searches); got != c.want {
			t.Errorf("stoppedText(%+v) = %q; want %q", c.searches, got, c.want)
		}
	}
}

// TestSweepCells: a cell is the median of its repetitions' rates, the
// best bold, ‡ from 90% of no proxy's rate up, "none" where no search
// found a rate, and no step in any other table.
func TestSweepCells(t *testing.T) {
	var rows []results.Row
	rows = append(rows, confirmed("no proxy", results.Baseline, 10000, 10200, 9800)...)
	rows = append(rows, confirmed("nginx", results.Copy, 9100)...)   // 9% below no proxy's
	rows = append(rows, confirmed("haproxy", results.Copy, 8900)...) // 11% below
	rows = append(rows, confirmed("squid", results.Copy, 4000, 5000, 4400, 6000)...)
	none := stepRow(1, fail(1, "errors 2.1% over 0.1%"), 500)
	none.Proxy = "tinyproxy"
	rows = append(rows, none)
	// dante: rep 1 found 3000/s, reps 2 and 3 none
	rows = append(rows, confirmed("dante", results.Copy, 3000)...)
	for rep := 2; rep <= 3; rep++ {
		r := stepRow(rep, fail(1, "errors 2.1% over 0.1%"), 500)
		r.Proxy = "dante"
		rows = append(rows, r)
	}
	// 3proxy: rep 1's confirms at 750/s and 735/s failed, its step at
	// 500/s passed below them
	for i, r := range []results.Row{stepRow(1, pass(1), 500), stepRow(1, fail(2, "p99 80 ms over 50 ms"), 1000), stepRow(1, pass(3), 750),
		stepRow(1, fail(0, "p99 80 ms over 50 ms"), 750), stepRow(1, fail(0, "p99 80 ms over 50 ms"), 735)} {
		r.Proxy, r.Started = "3proxy", time.Date(2026, 12, 1, 6, i, 0, 0, time.UTC)
		rows = append(rows, r)
	}
	mix := reporttest.Run("Xeon", "s", "nginx", results.Copy, "mix-3k", 1, 3)
	mix.Mode = results.MixHTTP
	rows = append(rows, mix)

	cells := sweepCells(t, rows)
	for _, c := range []struct {
		proxy, text string
		bold        bool
	}{
		{"no proxy", "10.0", false},                  // the median of three; the baseline is never marked
		{"nginx", "9.10 ‡", false},                   // 91% of no proxy's: the tool's limit; one search, no mark
		{"haproxy", "8.90", false},                   // 89%: the proxy's
		{"squid", "4.70", false},                     // the median of four: the mean of the middle two
		{"tinyproxy", "none", false},                 // no rate found
		{"dante", "3.00 (1 of 3 found)", false},      // one search of three found one
		{"3proxy", "0.500 (1 not confirmed)", false}, // its confirms failed: a step's rate, flagged
	} {
		got := cells[c.proxy]
		if got.Text != c.text || got.Bold != c.bold {
			t.Errorf("the cell of %s = %q, bold %v; want %q, bold %v", c.proxy, got.Text, got.Bold, c.text, c.bold)
		}
	}
	if n := len(cells["squid"].Runs); n != 4 {
		t.Errorf("squid's cell has %d runs; want 4, one a search", n)
	}
	tables, err := Tables(rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range tables {
		if tb.Kind == kindSweep {
			continue
		}
		for _, r := range tb.Rows {
			if strings.Contains(r.Label, "sweep") {
				t.Errorf("the %s table of %s has a sweep's row %q", tb.Kind, tb.Family, r.Label)
			}
		}
	}
	if got := tables[0]; got.Family != famMix || len(got.Rows) != 1 || got.Rows[0].Label != "mix-http-3k" || len(got.Rows[0].Cells) != 1 {
		t.Errorf("the mix table = %s with %+v; want mix-http-3k of nginx alone", got.Family, got.Rows)
	}
}

// sweepColumn is a column of the generated sweep session: how many
// exchanges a second it can answer (the p99 grows without bound as the
// rate nears it), and how its steps fail.
type sweepColumn struct {
	proxy, kind string
	group       results.Group
	capacity    float64
	modes       []results.Mode
	bound       results.Bound // the role at the pace near the capacity
	tail        float64       // the p99 of a whole window over a short one's
	errors      float64       // the share of failed exchanges at any rate
}

// sweepSLO is the generated session's bounds, the defaults.
var sweepSLO = results.Sweep{From: 500, Precision: 0.02, SLO: results.SLO{P99: results.Span(50 * time.Millisecond), Errors: 0.001}}

// generatedSweep is a session of sweeps for several columns, no proxy
// among them, in mix-http and mix-relay, three repetitions: each search
// run as the session runs it, from 500/s doubling until a step fails,
// then halving the interval until it is within 2%, at most 14 steps, then
// a confirming window of the whole duration, which must pass too.
func generatedSweep() ([]results.Row, *results.Meta) { return sweepSession("2026-12-01-sweep", nil) }

// sweepSession is the generated session under the id session, the
// capacity of each column scale names scaled by its factor.
func sweepSession(session string, scale map[string]float64) ([]results.Row, *results.Meta) {
	cols := []sweepColumn{
		{"no proxy", "direct", results.Baseline, 9000, nil, results.BoundClient, 1, 0},
		{"nginx", "nginx", results.Copy, 8500, nil, results.BoundClient, 1, 0},
		{"haproxy", "haproxy", results.Copy, 6500, nil, results.BoundProxy, 1, 0},
		{"squid", "squid", results.Copy, 3000, []results.Mode{results.MixHTTP}, results.BoundProxy, 1.1, 0},
		{"tinyproxy", "tinyproxy", results.Copy, 2000, []results.Mode{results.MixHTTP}, results.BoundProxy, 1, 0.02},
		{"haproxy splice-auto", "haproxy", results.Splice, 7600, nil, results.BoundProxy, 1, 0},
	}
	start := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	at := start
	var rows []results.Row
	for rep := 1; rep <= 3; rep++ {
		for _, mode := range []results.Mode{results.MixHTTP, results.MixRelay} {
			for _, c := range cols {
				if c.modes != nil && !slices.Contains(c.modes, mode) {
					continue
				}
				capacity := c.capacity * (1 + 0.03*float64(rep-2))
				if f, ok := scale[c.proxy]; ok {
					capacity *= f
				}
				if mode == results.MixRelay {
					capacity *= 1.2
				}
				rows = append(rows, simulateSearch(c, session, capacity, rep, mode, &at)...)
			}
		}
	}
	end := at
	meta := &results.Meta{Session: session,
		Machine: results.MachineInfo{Label: "Xeon, 2 CPUs", CPUModel: "Intel Xeon", CPUs: 2, MemoryBytes: 4 << 30,
			Kernel: "6.12.0", Distribution: "Debian 12", Arch: "x86_64"},
		Settings: results.Settings{Scenario: "mix-http-sweep,mix-relay-sweep", Reps: 3, Window: results.Span(10 * time.Second),
			Warmup: results.Span(2 * time.Second), Sweep: &sweepSLO},
		Layout: "client=0,proxy=1,origin=0", MixAccounting: results.MixDue,
		Tools:   map[string]string{"bench mix": "bench mix (this build)"},
		Columns: []results.ColumnMeta{{Name: "no proxy", Kind: "direct", Group: "baseline"}, {Name: "nginx", Kind: "nginx", Group: "copy", Version: "1.22.1"}},
		Started: start, Ended: &end}
	return rows, meta
}

// simulateSearch runs the search of a column of capacity under mode in
// rep of session, its windows from *at on: 2 s steps and a 10 s
// confirming window.
func simulateSearch(c sweepColumn, session string, capacity float64, rep int, mode results.Mode, at *time.Time) []results.Row {
	var rows []results.Row
	window := func(n int, confirm bool, rate float64) bool {
		secs := 2.0
		if confirm {
			secs = 10
		}
		load := rate / capacity
		p99 := 4 / math.Max(1-load, 0.002) // ms: the queue's tail as the rate nears the capacity
		if confirm {
			p99 *= c.tail
		}
		p99 = math.Round(math.Min(p99, 2000)*1000) / 1000 // a timeout's at most; to the microsecond, as the file has it
		achieved := math.Min(rate, capacity)
		failed := c.errors
		if load >= 1 {
			failed += 0.02 * (load - 1)
		}
		st := results.Step{N: n, Confirm: confirm, Pass: true}
		switch {
		case failed > sweepSLO.SLO.Errors:
			st.Pass, st.Why = false, fmt.Sprintf("errors %.1f%% over %s", failed*100, text.SharePercent(sweepSLO.SLO.Errors))
		case p99 > 50:
			st.Pass, st.Why = false, fmt.Sprintf("p99 %.1f ms over 50 ms", p99)
		case achieved < 0.99*rate:
			st.Pass, st.Why = false, fmt.Sprintf("achieved %.0f%% of the rate, under 99%%", achieved/rate*100)
		}
		bound := results.BoundNone
		if load > 0.85 {
			bound = c.bound
		}
		due := int64(rate * secs)
		bad := int64(float64(due) * failed)
		rows = append(rows, results.Row{Machine: "Xeon, 2 CPUs", Session: session, Proxy: c.proxy, Kind: c.kind, Group: c.group,
			Mode: mode, Load: results.LoadSweep, Rep: rep, Started: *at, Seconds: secs,
			Requests: int64(achieved*secs) - bad, Bytes: (int64(achieved*secs) - bad) * 44954, Errors: bad,
			P50Ms: math.Round(p99/4*1000) / 1000, P99Ms: p99, HasLatency: true,
			P999Ms: math.Round(math.Min(p99*2, 2000)*1000) / 1000, HasP999: true,
			CPUProxy: 0.9 * secs * math.Min(load, 1), CPUClient: 0.5 * secs, CPUOrigin: 0.3 * secs,
			BusyProxy: 0.9 * math.Min(load, 1), BusyClient: 0.5, BusyOrigin: 0.3,
			Bound: bound, PeakMemBytes: 30e6, Status: results.OK, Note: st.String(),
			OfferedRate: rate, HasOffered: true, HasPipes: true})
		*at = at.Add(time.Duration(secs+3) * time.Second)
		return st.Pass
	}
	var passes []float64
	fails := math.Inf(1)
	rate := sweepSLO.From
steps:
	for n := 1; n <= 14; n++ {
		if window(n, false, rate) {
			passes = append(passes, rate)
		} else {
			fails = math.Min(fails, rate)
		}
		for {
			best := 0.0 // the highest pass below the lowest failure
			for _, p := range passes {
				if p < fails {
					best = math.Max(best, p)
				}
			}
			switch {
			case math.IsInf(fails, 1):
				rate *= 2
				continue steps
			case best == 0:
				return rows // the first rate failed: no rate
			case (fails-best)/best > sweepSLO.Precision:
				rate = (best + fails) / 2
				continue steps
			}
			if window(0, true, best) {
				return rows
			}
			fails = best // the search goes on below the rate that failed to confirm
		}
	}
	return rows
}

// sweepDir holds the generated sweep session, its CSV and its metadata,
// which the tests write with -update and read back as bench report does.
var sweepDir = filepath.Join("testdata", "sweep")

const sweepCSV = "xeon-2-cpus-2026-12-01-sweep.csv"

// laterSweep is the session after the generated one, haproxy's capacity
// 20% higher, squid's 20% lower, the others' as they were: bench
// compare's new side in cmd/bench's tests, as the file laterSweepCSV.
func laterSweep() ([]results.Row, *results.Meta) {
	return sweepSession("2026-12-02-sweep", map[string]float64{"haproxy": 1.2, "squid": 0.8})
}

const laterSweepCSV = "xeon-2-cpus-2026-12-02-sweep.csv"

// TestSweepSessionFiles: the generated sessions' files are those under
// testdata/sweep, which the other tests read.
func TestSweepSessionFiles(t *testing.T) {
	for name, session := range map[string]func() ([]results.Row, *results.Meta){sweepCSV: generatedSweep, laterSweepCSV: laterSweep} {
		rows, meta := session()
		golden.Check(t, filepath.Join(sweepDir, name), encodeCSV(t, rows))
		m, err := json.MarshalIndent(meta, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		golden.Check(t, filepath.Join(sweepDir, results.MetaPath(name)), append(m, '\n'))
	}
}

// readSweepSession reads the generated session's files as bench report
// does.
func readSweepSession(t testing.TB) ([]results.Row, []results.SessionFile) {
	t.Helper()
	return readSession(t, []string{filepath.Join(sweepDir, sweepCSV)})
}

// readSession reads the session files at paths and their metadata, as
// bench report does.
func readSession(t testing.TB, paths []string) ([]results.Row, []results.SessionFile) {
	t.Helper()
	rows, err := results.ReadFiles(paths)
	if err != nil {
		t.Fatal(err)
	}
	files, err := results.ReadMetas(paths)
	if err != nil {
		t.Fatal(err)
	}
	return rows, files
}

// TestSweepGolden: the generated session's report, every format, as the
// golden files under testdata/golden have it.
func TestSweepGolden(t *testing.T) {
	rows, files := readSweepSession(t)
	for _, format := range []string{FormatMarkdown, FormatTSV, FormatJSON} {
		var b bytes.Buffer
		if err := Render(&b, rows, Options{Format: format, Files: files}); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, filepath.Join("testdata", "golden", "sweep."+format), b.Bytes())
	}
}

// TestSweepChartSVG: the structure of the chart of the generated
// session's first mix-http searches of no proxy, haproxy and tinyproxy
// (which found no rate), its elements with their classes, colours and
// titles, and its texts at their places rounded to a point.
func TestSweepChartSVG(t *testing.T) {
	rows, files := readSweepSession(t)
	rows = slices.DeleteFunc(rows, func(r results.Row) bool {
		return r.Mode != results.MixHTTP || r.Rep != 1 || !slices.Contains([]string{"no proxy", "haproxy", "tinyproxy"}, r.Proxy)
	})
	tables, err := Tables(rows, Options{Files: files})
	if err != nil {
		t.Fatal(err)
	}
	tb := tables[0]
	if tb.Kind != kindSweep || tb.Sweep == nil {
		t.Fatalf("the first table is %s of %s, its bounds %v; want the Sustainable rate with its bounds", tb.Kind, tb.Family, tb.Sweep)
	}
	svg, ok, err := sweepChart(tb, tb.Rows[0], tb.Sweep, NewPalette(tables))
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
	rows, files := readSweepSession(t)
	tables, err := Tables(rows, Options{Files: files})
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
func checkSweepPage(t *testing.T, rows []results.Row, files []results.SessionFile, tables []Table, name string, charts int, want string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, rows, Options{Format: FormatHTML, Files: files}); err != nil {
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
	cols := []sweepColumn{
		{"no proxy", "direct", results.Baseline, 1600, nil, results.BoundClient, 1, 0},
		{"stunnel", "stunnel", results.Copy, 3000, nil, results.BoundProxy, 1, 0.05},
		{"haproxy", "haproxy", results.Copy, 3000, nil, results.BoundProxy, 1, 0.05},
		{"nginx", "nginx", results.Copy, 3500, nil, results.BoundClient, 1, 0},
	}
	at := time.Date(2026, 12, 2, 13, 0, 0, 0, time.UTC)
	var rows []results.Row
	for _, c := range cols {
		rows = append(rows, simulateSearch(c, "tls", c.capacity, 1, results.MixTLS, &at)...)
	}
	tables, err := Tables(rows, Options{})
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
	paths, err := filepath.Glob(filepath.Join("..", "data", "sweeps", "*.csv"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no session file in ../data/sweeps: %v", err)
	}
	rows, files := readSession(t, paths)
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
	tables, err := Tables(rows, Options{Files: files})
	if err != nil {
		t.Fatal(err)
	}
	var found int
	for _, tb := range tables {
		if tb.Kind != kindSweep {
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
	r := stepRow(1, fail(1, "nginx exited during the run"), 500)
	r.P50Ms, r.P99Ms = 0.5, 0.5
	var b bytes.Buffer
	if err := Render(&b, []results.Row{r}, Options{Format: FormatHTML}); err != nil {
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

// TestSearchResultsUnconfirmed: a search whose confirms all failed is,
// for compare and the trends, the row of the step whose rate it ended
// with, noting that it was not confirmed and where it stopped.
func TestSearchResultsUnconfirmed(t *testing.T) {
	const p99 = "p99 63.2 ms over 50 ms"
	rows := ordered([]results.Row{stepRow(1, pass(1), 500), stepRow(1, fail(2, p99), 1000), stepRow(1, pass(3), 750),
		stepRow(1, fail(0, p99), 750), stepRow(1, fail(0, p99), 735)})
	got := SearchResults(rows)
	want := "not confirmed: the confirming window at 0.735k/s failed: p99 63.2 ms over 50 ms (bound: proxy)"
	if len(got) != 1 || got[0].Status != results.OK || got[0].OfferedRate != 500 || got[0].Note != want {
		t.Errorf("searchResults(%d rows) = %+v; want the step at 500/s, ok, noting %q", len(rows), got, want)
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

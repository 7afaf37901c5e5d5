package report

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"bench/internal/golden"
	"bench/report/internal/reporttest"
	"bench/results"
)

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
			reporttest.StepRow(1, reporttest.Pass(1), 500), reporttest.StepRow(1, reporttest.Pass(2), 1000), reporttest.StepRow(1, reporttest.Fail(3, p99), 2000),
			reporttest.StepRow(1, reporttest.Pass(4), 1500), reporttest.StepRow(1, reporttest.Fail(5, p99), 1750), reporttest.StepRow(1, reporttest.Pass(0), 1500)},
			1500, "step 5 at 1.75k/s failed: p99 63.2 ms over 50 ms (bound: proxy)"},
		// the confirming window fails at 1500/s; the search goes on
		// below it and confirms 1250/s
		{"confirm fails, a lower one passes", []results.Row{
			reporttest.StepRow(1, reporttest.Pass(1), 500), reporttest.StepRow(1, reporttest.Pass(2), 1000), reporttest.StepRow(1, reporttest.Fail(3, p99), 2000),
			reporttest.StepRow(1, reporttest.Pass(4), 1500), reporttest.StepRow(1, reporttest.Fail(0, "errors 0.4% over 0.1%"), 1500),
			reporttest.StepRow(1, reporttest.Pass(5), 1250), reporttest.StepRow(1, reporttest.Pass(0), 1250)},
			1250, "the confirming window at 1.50k/s failed: errors 0.4% over 0.1% (bound: proxy)"},
		// the first rate fails: no rate, and why
		{"no rate", []results.Row{reporttest.StepRow(1, reporttest.Fail(1, "errors 2.1% over 0.1%"), 500)},
			0, "step 1 at 0.500k/s failed: errors 2.1% over 0.1% (bound: proxy)"},
		// a run that failed fails its step, its note the why
		{"failed run", []results.Row{func() results.Row {
			r := reporttest.StepRow(1, reporttest.Fail(1, "the proxy exited"), 500)
			r.Status, r.Bound = results.Failed, ""
			return r
		}()}, 0, "step 1 at 0.500k/s failed: the proxy exited"},
		// the steps in the order they ran, whatever the file's
		{"out of order", func() []results.Row {
			rows := ordered([]results.Row{reporttest.StepRow(1, reporttest.Pass(1), 500), reporttest.StepRow(1, reporttest.Fail(2, p99), 1000), reporttest.StepRow(1, reporttest.Pass(0), 500)})
			rows[0], rows[2] = rows[2], rows[0]
			return rows
		}(), 500, "step 2 at 1.00k/s failed: p99 63.2 ms over 50 ms (bound: proxy)"},
		// a step that could not be measured, its row without a start
		// (a session from before they were stamped): it ended the search,
		// whatever its place among the measured ones
		{"unmeasured step last", func() []results.Row {
			rows := ordered([]results.Row{reporttest.StepRow(1, reporttest.Pass(1), 500), reporttest.StepRow(1, reporttest.Fail(2, p99), 1000), reporttest.StepRow(1, reporttest.Pass(3), 750)})
			crashed := reporttest.StepRow(1, reporttest.Fail(4, "nginx exited during the run"), 875)
			crashed.Status, crashed.Bound = results.Failed, ""
			return append([]results.Row{crashed}, rows...)
		}(), 0, "step 4 at 0.875k/s failed: nginx exited during the run"},
		// a search that could not start: its one row has no step
		{"did not start", []results.Row{func() results.Row {
			r := reporttest.StepRow(1, reporttest.Pass(1), 0)
			r.Note, r.Status, r.Bound, r.OfferedRate, r.HasOffered = "start squid: exit status 1", results.Failed, "", 0, false
			return r
		}()}, 0, "the search did not start: start squid: exit status 1"},
		// every confirm failed: the highest step that passed below
		// every failure, not confirmed (the name says so)
		{"not confirmed", []results.Row{
			reporttest.StepRow(1, reporttest.Pass(1), 500), reporttest.StepRow(1, reporttest.Pass(2), 1000), reporttest.StepRow(1, reporttest.Fail(3, p99), 2000),
			reporttest.StepRow(1, reporttest.Pass(4), 1500), reporttest.StepRow(1, reporttest.Fail(5, p99), 1750), reporttest.StepRow(1, reporttest.Fail(0, p99), 1500),
			reporttest.StepRow(1, reporttest.Fail(0, p99), 1470)},
			1000, "the confirming window at 1.47k/s failed: p99 63.2 ms over 50 ms (bound: proxy)"},
		// every confirm failed, and no step passed below them: none
		{"confirms failed, no pass below", []results.Row{
			reporttest.StepRow(1, reporttest.Pass(1), 500), reporttest.StepRow(1, reporttest.Fail(2, p99), 1000), reporttest.StepRow(1, reporttest.Fail(0, p99), 500)},
			0, "the confirming window at 0.500k/s failed: p99 63.2 ms over 50 ms (bound: proxy)"},
		// no failure: the rate, and no stop
		{"no step failed", []results.Row{reporttest.StepRow(1, reporttest.Pass(1), 500), reporttest.StepRow(1, reporttest.Pass(0), 500)}, 500, "no step failed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := searchOf(1, ptrs(c.steps))
			rate := 0.0
			if s.Rate != nil {
				rate = *s.Rate
			}
			if rate != c.rate || s.StopText() != c.stop {
				t.Errorf("searchOf(%s) = rate %g, stop %q; want %g, %q", c.name, rate, s.StopText(), c.rate, c.stop)
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
		if tb.Kind != KindSweep {
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
		for _, r := range []results.Row{reporttest.StepRow(i+1, reporttest.Pass(1), rate), reporttest.StepRow(i+1, reporttest.Fail(2, "p99 80 ms over 50 ms"), 2*rate), reporttest.StepRow(i+1, reporttest.Pass(0), rate)} {
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
	none := reporttest.StepRow(1, reporttest.Fail(1, "errors 2.1% over 0.1%"), 500)
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
		for _, it := range LegendOf(tb, mediansAlone) {
			marks[it.Mark] = it.Text
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

// TestSweepCells: a cell is the median of its repetitions' rates, the
// best bold, ‡ where the client or the origin set the pace of the window
// found (its step above it failing, whatever it was bound by), "none"
// where no search found a rate, "fails at every rate" where each search
// ended so, and no step in any other table.
func TestSweepCells(t *testing.T) {
	var rows []results.Row
	rows = append(rows, confirmed("no proxy", results.Baseline, 10000, 10200, 9800)...)
	// nginx's window found bound by the client, haproxy's by itself
	for _, r := range confirmed("nginx", results.Copy, 9100) {
		if r.Bound = results.BoundProxy; r.Note == reporttest.Pass(0).String() {
			r.Bound = results.BoundClient
		}
		rows = append(rows, r)
	}
	for _, r := range confirmed("haproxy", results.Copy, 8900) {
		r.Bound = results.BoundProxy
		rows = append(rows, r)
	}
	// stunnel: its load failed at every rate, half-closed exchanges cut
	for i, st := range []results.Step{reporttest.Fail(1, "failures 10.12% over 0.1% (253 of 2500 due)"), reporttest.Fail(2, "failures 12.32% over 0.1% (154 of 1250 due)"),
		{N: 3, Flat: true, Why: "failures 6.72% over 0.1% (42 of 625 due), as 10.12% at 500/s"}} {
		r := reporttest.StepRow(1, st, 500/float64(int(1)<<i))
		r.Proxy, r.Started = "stunnel", time.Date(2026, 12, 1, 7, i, 0, 0, time.UTC)
		r.Note += "; " + results.HalfCloseNote(42, "stunnel cuts them")
		rows = append(rows, r)
	}
	rows = append(rows, confirmed("squid", results.Copy, 4000, 5000, 4400, 6000)...)
	none := reporttest.StepRow(1, reporttest.Fail(1, "errors 2.1% over 0.1%"), 500)
	none.Proxy = "tinyproxy"
	rows = append(rows, none)
	// dante: rep 1 found 3000/s, reps 2 and 3 none
	rows = append(rows, confirmed("dante", results.Copy, 3000)...)
	for rep := 2; rep <= 3; rep++ {
		r := reporttest.StepRow(rep, reporttest.Fail(1, "errors 2.1% over 0.1%"), 500)
		r.Proxy = "dante"
		rows = append(rows, r)
	}
	// 3proxy: rep 1's confirms at 750/s and 735/s failed, its step at
	// 500/s passed below them
	for i, r := range []results.Row{reporttest.StepRow(1, reporttest.Pass(1), 500), reporttest.StepRow(1, reporttest.Fail(2, "p99 80 ms over 50 ms"), 1000), reporttest.StepRow(1, reporttest.Pass(3), 750),
		reporttest.StepRow(1, reporttest.Fail(0, "p99 80 ms over 50 ms"), 750), reporttest.StepRow(1, reporttest.Fail(0, "p99 80 ms over 50 ms"), 735)} {
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
		{"nginx", "9.10 ‡", false},                   // bound by the client; one search, no mark
		{"haproxy", "8.90", false},                   // bound by itself
		{"stunnel", "fails at every rate", false},    // no rate, its failures not the rate's
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
	if s := cells["stunnel"].Searches; len(s) != 1 || !s[0].Flat || !strings.Contains(s[0].String(), "step 3 at 0.125k/s failed, as at every rate: failures 6.72%") ||
		!strings.HasSuffix(s[0].String(), "; 42 of the failed exchanges half-closed: stunnel cuts them") {
		t.Errorf("stunnel's searches %+v; want one, failing at every rate, saying where, and why", s)
	}
	tables, err := Tables(rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range tables {
		if tb.Kind == KindSweep {
			continue
		}
		for _, r := range tb.Rows {
			if strings.Contains(r.Label, "sweep") {
				t.Errorf("the %s table of %s has a sweep's row %q", tb.Kind, tb.Family, r.Label)
			}
		}
	}
	if got := tables[0]; got.Family != FamMix || len(got.Rows) != 1 || got.Rows[0].Label != "mix-http-3k" || len(got.Rows[0].Cells) != 1 {
		t.Errorf("the mix table = %s with %+v; want mix-http-3k of nginx alone", got.Family, got.Rows)
	}
}

// sweepDir holds the generated sweep session, its CSV and its metadata,
// which the tests write with -update and read back as bench report does.
var sweepDir = filepath.Join("testdata", "sweep")

const sweepCSV = "xeon-2-cpus-2026-12-01-sweep.csv"

const laterSweepCSV = "xeon-2-cpus-2026-12-02-sweep.csv"

// TestSweepSessionFiles: the generated sessions' files are those under
// testdata/sweep, which the other tests read.
func TestSweepSessionFiles(t *testing.T) {
	for name, session := range map[string]func() ([]results.Row, *results.Meta){sweepCSV: reporttest.GeneratedSweep, laterSweepCSV: reporttest.LaterSweep} {
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
	return reporttest.ReadSession(t, []string{filepath.Join(sweepDir, sweepCSV)})
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

// TestSearchResultsUnconfirmed: a search whose confirms all failed is,
// for compare and the trends, the row of the step whose rate it ended
// with, noting that it was not confirmed and where it stopped.
func TestSearchResultsUnconfirmed(t *testing.T) {
	const p99 = "p99 63.2 ms over 50 ms"
	rows := ordered([]results.Row{reporttest.StepRow(1, reporttest.Pass(1), 500), reporttest.StepRow(1, reporttest.Fail(2, p99), 1000), reporttest.StepRow(1, reporttest.Pass(3), 750),
		reporttest.StepRow(1, reporttest.Fail(0, p99), 750), reporttest.StepRow(1, reporttest.Fail(0, p99), 735)})
	got := SearchResults(rows)
	want := "not confirmed: the confirming window at 0.735k/s failed: p99 63.2 ms over 50 ms (bound: proxy)"
	if len(got) != 1 || got[0].Status != results.OK || got[0].OfferedRate != 500 || got[0].Note != want {
		t.Errorf("searchResults(%d rows) = %+v; want the step at 500/s, ok, noting %q", len(rows), got, want)
	}
}

// TestSweepBaselineNote: where no proxy found no rate, or less than a
// proxy, the table notes why among its cells' notes, with where its
// search stopped; where it found the row's highest, nothing.
func TestSweepBaselineNote(t *testing.T) {
	none := reporttest.StepRow(1, reporttest.Fail(1, "p99 60 ms over 50 ms"), 500)
	none.Proxy, none.Group = "no proxy", results.Baseline
	for _, c := range []struct {
		name string
		base []results.Row
		want string
	}{
		{"none", []results.Row{none}, "no proxy found no rate: its search stopped where step 1 at 0.500k/s failed: p99 60 ms over 50 ms"},
		{"lower", confirmed("no proxy", results.Baseline, 8000), "no proxy found 8.00k/s, less than nginx's 9.10k/s"},
		{"higher", confirmed("no proxy", results.Baseline, 10000), ""},
	} {
		rows := append(slices.Clone(c.base), confirmed("nginx", results.Copy, 9100)...)
		tables, err := Tables(rows, Options{})
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(tables, func(tb Table) bool { return tb.Kind == KindSweep })
		var notes []string
		for _, n := range tables[i].RunNotes {
			notes = append(notes, n.text)
		}
		got := strings.Join(notes, "\n")
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) || len(tables[i].Notes) != len(notes) {
			t.Errorf("%s: notes %q (%d in the data); want %q", c.name, got, len(tables[i].Notes), c.want)
		}
	}
}

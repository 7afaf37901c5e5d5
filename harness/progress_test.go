package harness

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode"

	"bench/inputerr"
	"bench/proxies"
	"bench/report/compare"
	"bench/results"
	"bench/scenarios"
)

// A run's line gives its figure in the unit its table gives it.
func TestRunSummaryUnits(t *testing.T) {
	for _, c := range []struct {
		row  results.Row
		want string
	}{
		{results.Row{Mode: results.HTTP, Load: "ka-1k", Seconds: 10, Requests: 339000}, "33.9k req/s"},
		{results.Row{Mode: results.Relay, Load: "stream16", Seconds: 10, Bytes: 8e9}, "6.40 Gbit/s"},
		{results.Row{Mode: results.TLSHandshake, Load: "full", Seconds: 10, Requests: 2620}, "262 conn/s"},
	} {
		c.row.Status = results.OK
		if got := runSummary(c.row); !strings.HasPrefix(got, c.want+"  ") {
			t.Errorf("%s %s: %q; want it to begin with %q", c.row.Mode, c.row.Load, got, c.want)
		}
	}
}

// Every catalog scenario's line gives the figure compare gives its cell,
// in the same unit.
func TestRunSummaryUnitsAgreeWithReport(t *testing.T) {
	for _, sc := range scenarios.Catalog() {
		row := results.Row{Machine: "m", Session: "s", Proxy: "p", Group: results.Copy, Mode: sc.Mode, Load: sc.Load.Name,
			Rep: 1, Seconds: 10, Requests: 123456, Bytes: 9e9, Status: results.OK}
		if sc.Load.Name == results.LoadSweep {
			// a search's confirming window that passed, at the rate it
			// offered: that rate is the cell's figure
			row.OfferedRate, row.HasOffered, row.Note = 4000, true, results.Step{Confirm: true, Pass: true}.String()
			row.Requests = int64(row.OfferedRate * row.Seconds)
		}
		cmp, err := compare.Compare([]results.Row{row}, []results.Row{row}, compare.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ch := cmp.Cells[0]
		want := results.Unit(ch.Unit).Format(*ch.New.Median)
		if got := runSummary(row); !strings.HasPrefix(got, want+"  ") || !strings.Contains(want, ch.Unit) {
			t.Errorf("%s: %q; want it to begin with %q", sc.Name, got, want)
		}
	}
}

// A column's name and a run's note that hold a terminal's escapes, lines
// or tabs reach the terminal visible, none of them as it is: the lines
// hold no control character but the live line's carriage returns and
// their ends.
func TestProgressLinesEscape(t *testing.T) {
	var b strings.Builder
	p := &progress{w: &b, live: true, total: 1}
	r := RunSpec{Scenario: scenarios.Scenario{Name: "http-ka-1k"}, Column: proxies.Column{Name: "x\x1b]0;owned\a\x1b[2J\nx\ty"}, Rep: 1}
	p.begin(r)
	p.end(r, results.Row{Status: results.Failed, Note: "wrk: \x1b[31mred\x1b[0m\r\nline"}, time.Second)
	p.finish()
	out := b.String()
	if strings.ContainsFunc(out, func(c rune) bool { return unicode.IsControl(c) && c != '\r' && c != '\n' }) ||
		strings.Count(out, "\n") != 1 || !strings.Contains(out, `x\x1b]0;owned\a\x1b[2J\nx\ty`) || !strings.Contains(out, `FAILED: wrk: \x1b[31mred\x1b[0m\r\nline`) {
		t.Errorf("progress printed %q; want the name and the note escaped, one line", out)
	}
}

// A run's note, a tool's output in its error, is written as the reader
// of the CSV takes it: one line, its escapes visible, not too long.
func TestJoinNotesWritesWhatTheReaderTakes(t *testing.T) {
	for _, n := range []string{
		joinNotes(oneLine("wrk: exit status 1: \x1b[31munable\x1b[0m\tto\r\nconnect"), "scaled"),
		joinNotes(strings.Repeat("a tool's long output ", 200), "scaled", "negotiated TLSv1.3"),
	} {
		if err := results.CheckNote("the note", n); err != nil {
			t.Errorf("joinNotes wrote %v", err)
		}
	}
}

// An item of --proxy is a column's name: the label rule refuses one with
// a terminal's escape before it is looked up.
func TestLoadColumnsProxyLabel(t *testing.T) {
	_, err := LoadColumns("", "no proxy,x\x1b[2J")
	var ie *inputerr.Error
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), `a column name "x\x1b[2J" holds U+001B`) {
		t.Errorf("LoadColumns = %v; want the label rule's refusal of the item, as bad input", err)
	}
}

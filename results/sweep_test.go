package results

import (
	"encoding/csv"
	"strings"
	"testing"
)

// TestStep: a step's note reads back as the step, with other notes after
// it, and a note that is no step is told apart from a broken one.
func TestStep(t *testing.T) {
	for _, s := range []Step{
		{N: 1, Pass: true},
		{N: 7, Why: "p99 63.2 ms over 50 ms"},
		{Confirm: true, Pass: true},
		{Confirm: true, Why: "errors 0.4% over 0.1%"},
	} {
		for _, note := range []string{s.String(), s.String() + "; 3 connections did not open"} {
			got, ok, err := ParseStep(note)
			if err != nil || !ok || got != s {
				t.Errorf("ParseStep(%q) = %+v, %v, %v; want %+v", note, got, ok, err, s)
			}
		}
	}
	for _, c := range []struct {
		note    string
		ok, bad bool
	}{
		{"", false, false},                  // no note
		{"proxy exited", false, false},      // another note
		{"sweep step x: pass", false, true}, // no number
		{"sweep step 0: pass", false, true}, // steps count from 1
		{"sweep step 2", false, true},       // no verdict
		{"sweep step 2: fail: ", false, true},
		{"sweep middle: pass", false, true},
	} {
		_, ok, err := ParseStep(c.note)
		if ok != c.ok || (err != nil) != c.bad {
			t.Errorf("ParseStep(%q) = ok %v, error %v; want ok %v, an error %v", c.note, ok, err, c.ok, c.bad)
		}
		if err != nil && !strings.Contains(err.Error(), c.note) {
			t.Errorf("ParseStep(%q): error %q does not quote the note", c.note, err)
		}
	}
}

// TestSweepRows: the steps of one search share their run's cell and
// repetition and are told apart by their step and rate (RunID.Step), so
// that a file holds them a line each; the same step twice is refused,
// naming it.
func TestSweepRows(t *testing.T) {
	step := func(st Step, rate float64) Row {
		return Row{Machine: "ARM", Session: "s1", Proxy: "nginx", Kind: "nginx", Group: Copy, Mode: MixHTTP, Load: LoadSweep,
			Rep: 1, Seconds: 5, Requests: int64(rate * 5), Bound: BoundNone, Status: OK, Note: st.String(),
			OfferedRate: rate, HasOffered: true}
	}
	rows := []Row{
		step(Step{N: 1, Pass: true}, 500),
		step(Step{N: 2, Why: "p99 63.2 ms over 50 ms"}, 1000),
		step(Step{N: 3, Pass: true}, 750),
		step(Step{Confirm: true, Why: "p99 51 ms over 50 ms"}, 750),
		step(Step{N: 4, Pass: true}, 735),
		step(Step{Confirm: true, Pass: true}, 735),
	}
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.Write(Header)
	for _, r := range rows {
		w.Write(r.Record())
	}
	w.Flush()
	got, err := readFrom(strings.NewReader(b.String()), "m4.csv")
	if err != nil || len(got) != len(rows) {
		t.Fatalf("reading a search's %d steps = %d rows, %v; want them all", len(rows), len(got), err)
	}
	for i := range got {
		if id, want := got[i].ID(), rows[i].ID(); id != want || id.Step == "" {
			t.Errorf("row %d: ID() = %+v; want %+v, its step named", i+2, id, want)
		}
	}
	if id := got[3].ID().Step; id != "confirm at 750.0/s" {
		t.Errorf("the confirm's step = %q; want %q", id, "confirm at 750.0/s")
	}
	w.Write(rows[2].Record())
	w.Flush()
	_, err = readFrom(strings.NewReader(b.String()), "m4.csv")
	if want := "m4.csv:8: the run of nginx in mix-http-sweep, rep 1, step 3 at 750.0/s, of session s1 on machine ARM is also at m4.csv:4"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("a step twice: %v; want %q", err, want)
	}
}

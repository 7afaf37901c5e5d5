package harness

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"bench/harness/sweep"
	"bench/inputerr"
	"bench/results"
	"bench/scenarios"
)

func TestSweeping(t *testing.T) {
	search := sweep.Defaults()
	search.From = 1000
	cases := []struct {
		name      string
		scenario  string
		on, given bool
		want      string // the scenarios after; "" for an error
		sweeps    bool   // whether the settings have the search
		err       string
	}{
		// --sweep: the mix modes' sweeps
		{"sweep a mix", "mix-http", true, false, "mix-http-sweep", true, ""},
		{"sweep all", "all", true, true, "mix-http-sweep,mix-connect-sweep,mix-socks-sweep,mix-relay-sweep,mix-tls-sweep", true, ""},
		{"sweep mix-tls", "mix-tls", true, false, "mix-tls-sweep", true, ""},
		// a sweep named without --sweep is one too
		{"a sweep named", "http-ka-1k,mix-socks-sweep", false, true, "http-ka-1k,mix-socks-sweep", true, ""},
		// no sweep: the settings have none
		{"no sweep", "http-ka-1k", false, false, "http-ka-1k", false, ""},
		// refused: a closed loop swept, the search's flags without a sweep
		{"a closed loop", "relay-ka-1k", true, false, "", false, "no sweep of"},
		{"flags alone", "mix-http", false, true, "", false, "go with the sweeps"},
	}
	for _, c := range cases {
		st, err := Sweeping(results.Settings{Scenario: c.scenario}, SweepRequest{Sweeps: c.on, Search: search, SearchGiven: c.given})
		var ie *inputerr.Error
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err) || !errors.As(err, &ie)):
			t.Errorf("%s: Sweeping = %v; want an input error with %q", c.name, err, c.err)
		case c.err == "" && (err != nil || st.Scenario != c.want || (st.Sweep != nil) != c.sweeps):
			t.Errorf("%s: Sweeping = %q, sweep %+v, %v; want %q, sweep %v", c.name, st.Scenario, st.Sweep, err, c.want, c.sweeps)
		case c.err == "" && c.sweeps && *st.Sweep != search:
			t.Errorf("%s: the search %+v; want %+v", c.name, *st.Sweep, search)
		}
	}
	bad := search
	bad.From = 0
	if _, err := Sweeping(results.Settings{Scenario: "mix-http"}, SweepRequest{Sweeps: true, Search: bad, SearchGiven: true}); err == nil {
		t.Error("Sweeping with a first rate of 0 = nil; want an error")
	}
}

// sweepRow is a sweep's row of nginx in mix-http, rep 1, at rate with
// the step st.
func sweepRow(st results.Step, rate float64) results.Row {
	return results.Row{Machine: "m", Session: "s", Proxy: "nginx", Kind: "nginx", Group: results.Copy,
		Mode: results.MixHTTP, Load: results.LoadSweep, Rep: 1, Seconds: 5, Status: results.OK, Bound: results.BoundNone,
		Note: st.String(), OfferedRate: rate, HasOffered: true}
}

// TestReplaySweep: the steps a file has of a search replay into the
// search that goes on from the next window; one whose last step passed
// its confirm, or failed (a step that could not be measured), or that
// failed before its first step, had ended; steps that do not follow the
// search are refused, naming their place.
func TestReplaySweep(t *testing.T) {
	cfg := sweep.Defaults()
	partial := []results.Row{sweepRow(results.Step{N: 1, Pass: true}, 500), sweepRow(results.Step{N: 2, Why: "p99 60 ms over 50 ms"}, 1000)}
	s, done, err := replaySweep(cfg, partial)
	if rate, confirm, end := s.Next(); err != nil || done || rate != 750 || confirm || end {
		t.Errorf("two steps replayed: done %v, %v; Next() = %g, %v, %v; want step 3 at 750/s", done, err, rate, confirm, end)
	}
	aborted := append(partial[:2:2], sweepRow(results.Step{N: 3, Why: "bench mix exited"}, 750))
	aborted[2].Status = results.Failed
	if _, done, err := replaySweep(cfg, aborted); err != nil || !done {
		t.Errorf("a failed step replayed: done %v, %v; want the search ended", done, err)
	}
	unstarted := sweepRow(results.Step{}, 0)
	unstarted.HasOffered, unstarted.Status, unstarted.Note = false, results.Failed, "start nginx: gone"
	if _, done, err := replaySweep(cfg, []results.Row{unstarted}); err != nil || !done {
		t.Errorf("a search that could not start: done %v, %v; want it ended", done, err)
	}
	wrong := sweepRow(results.Step{N: 1, Pass: true}, 800)
	wrong.Source, wrong.Line = "m.csv", 2
	if _, _, err := replaySweep(cfg, []results.Row{wrong}); err == nil || !strings.Contains(err.Error(), "m.csv:2: the search of nginx in mix-http-sweep, rep 1") {
		t.Errorf("a step at another rate than the search's: %v; want an error at m.csv:2", err)
	}
}

// TestScheduleResumesSweep: a resumed session counts a search that had
// ended as done and one with steps to go as not, keeping its steps, and
// its plan says it goes on; the plan of a session with sweeps counts
// their windows.
func TestScheduleResumesSweep(t *testing.T) {
	out := t.TempDir()
	scs, err := scenarios.Select("mix-http-sweep")
	if err != nil {
		t.Fatal(err)
	}
	d := sweep.Defaults()
	cols, err := LoadColumns("", "no proxy")
	if err != nil {
		t.Fatal(err)
	}
	cfg := SessionConfig{Settings: results.Settings{Machine: "m", Session: "s", Reps: 2, Window: results.Span(10 * time.Second),
		Warmup: results.Span(2 * time.Second), Sweep: &d}, Scenarios: scs, Columns: cols, OutDir: out, Resume: true}
	csvPath, _ := SessionPaths(out, "m", "s")
	w, err := results.Create(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	ended := []results.Row{sweepRow(results.Step{N: 1, Why: "p99 60 ms over 50 ms"}, 500)}
	// halved from 500/s to the floor, 50/s, every step failed
	for rate := 250.0; ; rate = max(float64(int(rate/2+0.5)), sweep.Floor(d.SLO)) {
		ended = append(ended, sweepRow(results.Step{N: len(ended) + 1, Why: "p99 60 ms over 50 ms"}, rate))
		if rate == sweep.Floor(d.SLO) {
			break
		}
	}
	second := sweepRow(results.Step{N: 1, Pass: true}, 500)
	second.Rep = 2
	for _, r := range append(ended, second) {
		r.Proxy, r.Kind, r.Group = "no proxy", "direct", results.Baseline
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	s, err := NewSchedule(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Runs) != 2 {
		t.Fatalf("%d runs; want the 2 repetitions of no proxy's sweep", len(s.Runs))
	}
	first, then := s.Runs[0].Key(), s.Runs[1].Key()
	if !s.Done[first] || s.Done[then] || len(s.Steps[then]) != 1 {
		t.Errorf("done %v, %v, steps kept %d; want rep 1 done (no rate found), rep 2 going on from its one step", s.Done[first], s.Done[then], len(s.Steps[then]))
	}
	var b bytes.Buffer
	s.Print(&b)
	for _, want := range []string{
		"resuming the search of no proxy in mix-http-sweep, rep 2, after the 1 window the file has of it",
		"sweeps: from 500/s, doubled until a step fails, then halved to within 2%; a step passes with p99=50ms,errors=0.1%, 99% of its rate achieved",
		"each sweep: at most 15 windows, steps of 2s warm-up + 5s window (at most 13) and confirms of 2s + 10s: at most 4m29s;",
		"a window holds 998 exchanges due at least, to tell 0.1% of failures from chance: longer at low rates, up to 20s; the search halves no lower than 50/s",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the plan:\n%s\nwant %q", b.String(), want)
		}
	}
}

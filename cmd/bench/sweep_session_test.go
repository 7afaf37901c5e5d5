package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"bench/harness"
	"bench/harness/sweep"
	"bench/results"
	"bench/scenarios"
)

// searchRows are the rows of each search of a session's file, by column,
// in the file's order.
func searchRows(rows []results.Row) map[string][]results.Row {
	out := map[string][]results.Row{}
	for _, r := range rows {
		if r.Load == results.LoadSweep {
			out[r.Proxy] = append(out[r.Proxy], r)
		}
	}
	return out
}

// checkSearch checks the rows of one search: each a step's window of its
// own, after the one before, the rate the search asked for at that point
// (replayed through the search), each with its own sampler's figures
// and data, the search ended, keeping what every search owes
// (sweep.Verify); it logs and returns the rate the search ended with,
// and whether it was confirmed. A failed row, a step that could not be
// measured, is one only as the search's last, at a rate above every rate
// that passed: the doubling goes past the client's own ceiling (16000/s
// of no proxy on a small machine), where a step misses its grace. (It
// wanted every row ok, which held only where the machine was fast enough
// that the search ended before the doubling reached its ceiling.)
func checkSearch(t *testing.T, csvPath, proxy string, rows []results.Row, window time.Duration) (rate float64, confirmed bool) {
	t.Helper()
	s := sweep.New(sweep.Defaults())
	var last time.Time
	clientCPU := 0.0
	data, err := results.ReadRunData([]string{csvPath})
	if err != nil {
		t.Fatal(err)
	}
	var tried []sweep.Tried
	passed := 0.0
	for i, r := range rows {
		st, ok, err := results.ParseStep(r.Note)
		failedLast := r.Status == results.Failed && i == len(rows)-1
		if !ok || err != nil || !r.HasOffered || r.Status != results.OK && !failedLast {
			t.Fatalf("%s, row %d: note %q (%v), offered %v, status %s; want an ok step, or a failed one last", proxy, i+1, r.Note, err, r.HasOffered, r.Status)
		}
		if err := s.Replay(r.OfferedRate, st, sweep.FiguresOfRow(&r)); err != nil {
			t.Errorf("%s, row %d: %v", proxy, i+1, err)
		}
		tried = append(tried, sweep.Tried{Rate: r.OfferedRate, Step: st})
		if failedLast {
			if st.Pass || st.Confirm || r.OfferedRate <= passed {
				t.Errorf("%s, row %d: failed %s at %g/s; want a step that failed, above every rate that passed (%g/s)", proxy, i+1, st, r.OfferedRate, passed)
			}
			s.Stop() // as a session ends a search at a failed row
			break
		}
		if st.Pass {
			passed = max(passed, r.OfferedRate)
		}
		// lengthened at a low rate to hold the exchanges its failures
		// are judged by
		length := sweep.StepWindow(window)
		if st.Confirm {
			length = window
		}
		length = sweep.Length(sweep.DefaultSLO, r.OfferedRate, length)
		if r.Seconds != length.Seconds() || !r.Started.After(last) {
			t.Errorf("%s, %s: window of %gs from %v; want %v, after the last (%v)", proxy, st, r.Seconds, r.Started, length, last)
		}
		last = r.Started
		// /proc/stat counts in ticks of 10 ms: a 1 s step at 500/s may
		// leave the client's CPU none; the search's steps together do not
		clientCPU += r.CPUClient
		if r.Bound == "" {
			t.Errorf("%s, %s: client CPU %g, bound %q; want the sampler's figures of its window", proxy, st, r.CPUClient, r.Bound)
		}
		if d := data[r.ID()]; d == nil || d.Histogram == "" || len(d.Intervals) == 0 {
			t.Errorf("%s, %s: run data %+v; want the step's histogram and seconds", proxy, st, d)
		}
	}
	if clientCPU <= 0 {
		t.Errorf("%s: the client's CPU over the search's %d steps %g; want the sampler's figures of their windows", proxy, len(rows), clientCPU)
	}
	if _, _, done := s.Next(); !done {
		t.Errorf("%s: the search had not ended after its %d rows", proxy, len(rows))
	}
	if rate, confirmed = s.Result(); !confirmed {
		rate, _ = s.Unconfirmed()
	}
	if err := sweep.Verify(tried, rate, confirmed); err != nil {
		t.Errorf("%s: the search ended at %g/s (confirmed %v): %v", proxy, rate, confirmed, err)
	}
	if len(rows) > 0 {
		t.Logf("%s: %d windows, sustainable rate %g (confirmed %v), the last: %q", proxy, len(rows), rate, confirmed, rows[len(rows)-1].Note)
	}
	return rate, confirmed
}

// searchSession runs the sweep of list through no proxy and proxy, with
// a few hundred connections and windows of window, as session id, and
// returns it with its rows by search: the two searches' rows alone.
func searchSession(t *testing.T, id, list string, window time.Duration, proxy string) (testSession, map[string][]results.Row) {
	t.Helper()
	prefix, out := sessionFixture(t, proxy)
	ts := runTestSession(t, prefix, out, id, list, "--sweep", "--proxy", "no proxy,"+proxy,
		"--mix-conns", "200", "--reps", "1", "--duration", window.String(), "--warmup", "300ms")
	byProxy := searchRows(ts.rows)
	if len(byProxy) != 2 || len(ts.rows) != len(byProxy["no proxy"])+len(byProxy[proxy]) {
		t.Fatalf("rows of %d searches, %d rows; want the two searches' alone", len(byProxy), len(ts.rows))
	}
	return ts, byProxy
}

// TestRunSweepSession runs a sweep of mix-relay through no proxy and
// nginx, with a few hundred connections: the plan counts the windows, a
// row a step of each search with its offered rate and step, each search
// ended keeping what every search owes (checkSearch), the settings of
// the search in the metadata, and bench report reads the file. (It
// wanted the last row the confirm of the rate found: a confirm below a
// failed one that passes may now be followed by a confirm between the
// two that fails; checkSearch asserts that the rate passed its own
// confirm.)
func TestRunSweepSession(t *testing.T) {
	const window = 2 * time.Second
	ts, byProxy := searchSession(t, "sweep", "mix-relay", window, "nginx")
	for proxy, rows := range byProxy {
		checkSearch(t, ts.csvPath, proxy, rows, window)
	}
	m, err := results.ReadMeta(results.MetaPath(ts.csvPath))
	if err != nil {
		t.Fatal(err)
	}
	if m.Settings.Sweep == nil || *m.Settings.Sweep != sweep.Defaults() || m.Settings.Scenario != "mix-relay-sweep" {
		t.Errorf("metadata: sweep %+v, scenario %q; want the defaults, and mix-relay-sweep", m.Settings.Sweep, m.Settings.Scenario)
	}
	var stdout, stderr bytes.Buffer
	if err := dispatch(&stdout, &stderr, []string{"report", ts.csvPath}); err != nil {
		t.Errorf("bench report of the sweep: %v\n%s", err, stderr.String())
	}
}

// TestRunTLSSweepSession runs the sweep of mix-tls through no proxy (the
// origin's own TLS end) and stunnel, ending TLS in front of the mix's
// origin: each search a row a step, in mode mix-tls; every step's
// connections opened and verified in TLS (no exchange refused or wrong),
// a step of each search answered whole, and half-closed exchanges
// answered through TLS. Whether a search then confirms a rate is the
// machine's to say (a client-bound search may run out of windows), not
// this test's.
func TestRunTLSSweepSession(t *testing.T) {
	const window = 2 * time.Second
	ts, byProxy := searchSession(t, "tls-sweep", "mix-tls", window, "stunnel")
	for proxy, rows := range byProxy {
		checkSearch(t, ts.csvPath, proxy, rows, window)
		answered, halfClosed := false, int64(0)
		for i, r := range rows {
			if r.Mode != results.MixTLS {
				t.Errorf("%s: a row of mode %s; want mix-tls", proxy, r.Mode)
			}
			m := stepOutput(t, ts.csvPath, proxy, i+1)
			if m.Errors.Refused != 0 || m.Errors.Wrong != 0 {
				t.Errorf("%s, step %d: errors %+v; want no exchange refused or wrong: every connection opened and verified in TLS", proxy, i+1, m.Errors)
			}
			answered = answered || (m.Due > 0 && float64(m.Exchanges) >= 0.99*float64(m.Due))
			halfClosed += m.HalfClosed - m.HalfCloseFailed
		}
		if !answered || halfClosed == 0 {
			t.Errorf("%s: a step answered whole %v, half-closed exchanges answered %d; want a step, and some", proxy, answered, halfClosed)
		}
	}
}

// stepOutput is what bench mix printed for step n of proxy's search, of
// the first repetition of mix-tls-sweep in the session at csvPath.
func stepOutput(t *testing.T, csvPath, proxy string, n int) scenarios.MixResult {
	t.Helper()
	outs, _ := filepath.Glob(filepath.Join(results.RunsDir(csvPath),
		fmt.Sprintf("*-%s-mix-tls-sweep-1-w%02d.load.bench.out", results.Slug(proxy), n)))
	if len(outs) != 1 {
		t.Fatalf("%s, step %d: bench mix's output %v; want one file", proxy, n, outs)
	}
	b, err := os.ReadFile(outs[0])
	var m scenarios.MixResult
	if err == nil {
		lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
		err = json.Unmarshal(lines[len(lines)-1], &m)
	}
	if err != nil {
		t.Fatalf("%s, step %d: bench mix's output: %v", proxy, n, err)
	}
	return m
}

// TestRunSweepResume interrupts a sweep in the middle of its first search
// and resumes it: the search goes on from the window that was in flight,
// as the session says, no step twice, and it ends as a search does.
func TestRunSweepResume(t *testing.T) {
	prefix, out := sessionFixture(t, "nginx")
	const window = 2 * time.Second
	args := []string{"run", "--sweep", "--scenario", "mix-relay", "--proxy", "no proxy", "--mix-conns", "200",
		"--reps", "1", "--duration", window.String(), "--warmup", "300ms",
		"--out", out, "--session", "swept", "--machine", "m", "--prefix", prefix}
	csvPath, _ := harness.SessionPaths(out, "m", "swept")
	rowsIn := func() []results.Row {
		rows, _ := results.ReadFiles([]string{csvPath})
		return rows
	}
	errc := make(chan error, 1)
	var stderr bytes.Buffer
	go func() { errc <- dispatch(io.Discard, &syncWriter{w: &stderr}, args) }()
	deadline := time.Now().Add(2 * time.Minute)
	for len(rowsIn()) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("no two steps within 2 minutes")
		}
		select {
		case err := <-errc:
			t.Fatalf("session ended before it was interrupted: %v\n%s", err, stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("interrupted session returned %v; want an interruption", err)
	}
	before := rowsIn()
	stderr.Reset()
	if err := dispatch(io.Discard, &stderr, []string{"run", "--resume", "--out", out, "--prefix", prefix}); err != nil {
		t.Fatalf("resume: %v\n%s", err, stderr.String())
	}
	if want := "resuming the search of no proxy in mix-relay-sweep, rep 1, after the "; !strings.Contains(stderr.String(), want) {
		t.Errorf("resume said:\n%s\nwant %q", stderr.String(), want)
	}
	after := rowsIn() // a step twice would not read
	if len(after) <= len(before) {
		t.Fatalf("%d rows after resuming, %d before; want more", len(after), len(before))
	}
	checkSearch(t, csvPath, "no proxy", searchRows(after)["no proxy"], window)
	// The steps kept their output and data a file each.
	outs, _ := filepath.Glob(filepath.Join(results.RunsDir(csvPath), "*-w*.load."+scenarios.ToolBench+".out"))
	if len(outs) != len(after) {
		t.Errorf("%d steps' outputs kept; want one a row, %d", len(outs), len(after))
	}
	for _, f := range outs {
		b, _ := os.ReadFile(f)
		var r scenarios.MixResult
		if err := json.Unmarshal(b, &r); err != nil || r.Rate == 0 {
			t.Errorf("%s: %v, rate %g; want a step's result", f, err, r.Rate)
		}
	}
}

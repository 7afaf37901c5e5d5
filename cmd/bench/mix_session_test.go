package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"bench/proxies"
	"bench/results"
	"bench/scenarios"
)

// TestRunMixSession runs the mix scenarios through every packaged proxy
// that serves their modes, with a few hundred connections, against the
// session's real origin (nginx for the HTTP proxies, bench mix --serve
// for tunnels and relays): each completes with no wrong answer, its row
// counting bench mix's failures and timeouts, no failure beyond the
// half-closed exchanges a proxy does not pass on and the timeouts a
// stall of the machine makes but 1%, and the answers' bytes. (It allowed
// 1% of failures of every kind but the half-closed: through squid, 300
// exchanges in flight and a 2 s timeout, a stall of a loaded machine
// times out more than that, a figure of the machine's; the timeouts are
// now counted apart, in the row, as the code owes, and the bytes an
// exchange allow for the answers that timed out.)
func TestRunMixSession(t *testing.T) {
	prefix, out := sessionFixture(t, "nginx", "iperf3")
	const scenarioList = "mix-http,mix-connect,mix-socks,mix-relay"
	ts := runTestSession(t, prefix, out, "mix", scenarioList, "--mix-conns", "300", "--reps", "1", "--duration", "2s", "--warmup", "1s")
	runs := strings.TrimSuffix(ts.csvPath, ".csv") + ".runs"
	data, err := results.ReadRunData([]string{ts.csvPath})
	if err != nil {
		t.Fatal(err)
	}
	want := ts.each(t, func(s scenarios.Scenario, c proxies.Column, row *results.Row) {
		if row == nil || row.Status != results.OK {
			t.Errorf("%s / %s: no ok row: %+v", s.Name, c.Name, row)
			return
		}
		files, _ := filepath.Glob(filepath.Join(runs, "*-"+results.Slug(c.Name)+"-"+s.Name+"-1.load.bench.out"))
		if len(files) != 1 {
			t.Errorf("%s / %s: bench mix output %v; want one file", s.Name, c.Name, files)
			return
		}
		b, err := os.ReadFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		var r scenarios.MixResult
		if err := json.Unmarshal(mixReport(t, b), &r); err != nil {
			t.Fatalf("%s: %v", files[0], err)
		}
		if r.Conns != 300 || r.Exchanges < 100 {
			t.Errorf("%s / %s: %d connections, %d exchanges; want 300 and some hundreds", s.Name, c.Name, r.Conns, r.Exchanges)
		}
		// The failures are half-closed exchanges, which a proxy may not
		// pass on (that is its own), and timeouts, which a stall of a
		// slow proxy on a loaded machine makes as many as it lasts (the
		// machine's); of any other kind at most 1% of the exchanges, the
		// share the run's note speaks of. No answer is ever wrong, and
		// the row counts what bench mix said.
		failed := r.Errors.Failed() + r.Errors.Timeout
		if other := failed - r.HalfCloseFailed - r.Errors.Timeout; other*100 > r.Exchanges || r.Errors.Wrong > 0 {
			t.Errorf("%s / %s: errors %+v, %d of them half-closed; want no wrong answer and at most 1%% of %d exchanges failed otherwise but by a timeout",
				s.Name, c.Name, r.Errors, r.HalfCloseFailed, r.Exchanges)
		} else if failed > 0 {
			t.Logf("%s / %s: %d exchanges failed, %d of them half-closed: %+v", s.Name, c.Name, failed, r.HalfCloseFailed, r.Errors)
		}
		// The bytes are the answers': about the mix's mean each, but for
		// the window's edge. A fixed window counts the exchanges that
		// ended in it, so each connection's first is the one running as
		// the window began, and an answer that takes longer is likelier
		// to be running at a given moment: where time goes with size,
		// that one is of the size-biased mean (E[x²]/E[x], 3.6 times the
		// mean here), and with a few exchanges a connection in a short
		// window it shows (61.5 kB an exchange seen through haproxy).
		// An exchange that timed out is likelier a large one: the
		// least the rest may carry is the mix's share less the timeouts
		// all of the largest answer. (It wanted 0.7 of the mean whatever
		// timed out: 127 timeouts through squid on a loaded machine left
		// 18.8 kB an exchange.)
		n := float64(r.Exchanges + r.Errors.Late)
		mean := float64(r.Bytes) / n
		m, biased := scenarios.MixMeanSize(), sizeBiasedMean()
		edge := float64(r.Conns) * (biased - m) / n
		answers := scenarios.MixAnswers()
		largest, timeouts := float64(answers[len(answers)-1].Size), float64(r.Errors.Timeout)
		least := max(0, 0.7*m*(n+timeouts)-timeouts*largest) / n
		if mean < least || mean > 1.3*m+edge {
			t.Errorf("%s / %s: %.0f bytes an exchange; the mix's mean is %.0f (%.0f at least with %d timeouts, up to %.0f with its edge)", s.Name, c.Name, mean, m, least, r.Errors.Timeout, 1.3*m+edge)
		}
		if row.Requests != r.Exchanges || row.Bytes != r.Bytes || row.Errors != r.Errors.Failed() || row.Timeouts != r.Errors.Timeout {
			t.Errorf("%s / %s: the row has %d exchanges, %d bytes, %d errors, %d timeouts; bench mix said %d, %d, %d, %d", s.Name, c.Name,
				row.Requests, row.Bytes, row.Errors, row.Timeouts, r.Exchanges, r.Bytes, r.Errors.Failed(), r.Errors.Timeout)
		}
		// The row's window, which the CPU figures cover, is bench mix's
		// own, after the warm-up it ran itself: the session ran none apart.
		if row.Seconds != 2 || r.Seconds != 2 || !row.Started.Equal(r.Started.Truncate(time.Second)) {
			t.Errorf("%s / %s: the row's window %v for %vs; bench mix's %v for %vs", s.Name, c.Name, row.Started, row.Seconds, r.Started, r.Seconds)
		}
		if r.WarmupSeconds != 1 {
			t.Errorf("%s / %s: bench mix warmed up for %vs; want the session's 1s", s.Name, c.Name, r.WarmupSeconds)
		}
		// The run's data: its seconds add up to the row, and the
		// histogram is bench mix's.
		var sum int64
		for _, iv := range data[row.ID()].Intervals {
			sum += iv.Requests
		}
		if d := data[row.ID()]; d == nil || d.Histogram != r.Histogram || len(d.Intervals) != 2 || sum != row.Requests {
			t.Errorf("%s / %s: run data %+v; want bench mix's histogram and 2 seconds of %d exchanges", s.Name, c.Name, d, row.Requests)
		}
		if !row.HasP999 || math.Abs(row.P999Ms-r.P999Ms) > 0.001 {
			t.Errorf("%s / %s: the row's p99.9 %v (%v); bench mix said %v", s.Name, c.Name, row.P999Ms, row.HasP999, r.P999Ms)
		}
	})
	if len(ts.rows) != want {
		t.Errorf("%d rows; want %d", len(ts.rows), want)
	}
	if !strings.Contains(ts.report, "mix-relay") || !strings.Contains(ts.report, "proxy peak memory") {
		t.Errorf("the report lacks the mix tables:\n%s", ts.report)
	}
}

// sizeBiasedMean is the mean answer of the mix weighted by its size,
// E[x²]/E[x]: the mean of the answer running at a given moment where an
// answer's time goes with its size.
func sizeBiasedMean() float64 {
	var sum, sq float64
	for _, a := range scenarios.MixAnswers() {
		sum += float64(a.Size * a.Weight)
		sq += float64(a.Size) * float64(a.Size) * float64(a.Weight)
	}
	return sq / sum
}

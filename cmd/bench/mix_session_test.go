package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/harness"
	"bench/proxies"
	"bench/report/results"
	"bench/scenarios"
)

// TestRunMixSession runs the mix scenarios through every packaged proxy
// that serves their modes, with a few hundred connections, against the
// session's real origin (nginx for the HTTP proxies, bench mix --serve
// for tunnels and relays): each completes with no error but the
// half-closed exchanges a proxy does not pass on, no timeout, and the
// answers' bytes.
func TestRunMixSession(t *testing.T) {
	prefix, out := sessionFixture(t, "nginx", "iperf3")
	const scenarioList = "mix-http,mix-connect,mix-socks,mix-relay"
	ts := runTestSession(t, prefix, out, "mix", scenarioList, "--mix-conns", "300", "--reps", "1", "--duration", "2s", "--warmup", "0s")
	runs := strings.TrimSuffix(ts.csvPath, ".csv") + ".runs"
	want := ts.each(t, func(s scenarios.Scenario, c proxies.Column, row *results.Row) {
		if row == nil || row.Status != results.OK {
			t.Errorf("%s / %s: no ok row: %+v", s.Name, c.Name, row)
			return
		}
		files, _ := filepath.Glob(filepath.Join(runs, "*-"+harness.Slug(c.Name)+"-"+s.Name+"-1.load.bench.out"))
		if len(files) != 1 {
			t.Errorf("%s / %s: bench mix output %v; want one file", s.Name, c.Name, files)
			return
		}
		b, err := os.ReadFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		var r scenarios.MixResult
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%s: %v", files[0], err)
		}
		if r.Conns != 300 || r.Exchanges < 100 {
			t.Errorf("%s / %s: %d connections, %d exchanges; want 300 and some hundreds", s.Name, c.Name, r.Conns, r.Exchanges)
		}
		// Every failure is a half-closed exchange, and there is no
		// timeout: what a proxy does not pass on is its own, the rest
		// must work.
		if failed := r.Errors.Failed() + r.Errors.Timeout; failed != r.HalfCloseFailed {
			t.Errorf("%s / %s: errors %+v, %d of them half-closed; want none but half-closed ones", s.Name, c.Name, r.Errors, r.HalfCloseFailed)
		} else if failed > 0 {
			t.Logf("%s / %s: %d half-closed exchanges failed: %+v", s.Name, c.Name, failed, r.Errors)
		}
		// The bytes are the answers': about the mix's mean each.
		mean := float64(r.Bytes) / float64(r.Exchanges+r.Errors.Late)
		if m := scenarios.MixMeanSize(); mean < 0.7*m || mean > 1.3*m {
			t.Errorf("%s / %s: %.0f bytes an exchange; the mix's mean is %.0f", s.Name, c.Name, mean, m)
		}
		if row.Requests != r.Exchanges || row.Bytes != r.Bytes {
			t.Errorf("%s / %s: the row has %d exchanges, %d bytes; bench mix said %d, %d", s.Name, c.Name, row.Requests, row.Bytes, r.Exchanges, r.Bytes)
		}
	})
	if len(ts.rows) != want {
		t.Errorf("%d rows; want %d", len(ts.rows), want)
	}
	if !strings.Contains(ts.report, "mix-relay") || !strings.Contains(ts.report, "proxy peak memory") {
		t.Errorf("the report lacks the mix tables:\n%s", ts.report)
	}
}

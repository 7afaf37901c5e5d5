package main

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"bench/harness"
	"bench/proxies"
	"bench/results"
	"bench/scenarios"
)

// testSession is a short real session the tests ran: its file, its rows
// and the report bench run printed.
type testSession struct {
	list    string // the scenarios, as --scenario gave them
	csvPath string
	rows    []results.Row
	report  string
	status  int // what bench exits with: 0, or exitFailedRuns
}

// runTestSession runs bench run on the scenarios of list with flags
// (repetitions, window, ...) as session id of "test machine", under
// prefix, writing to out. A session that completed with failed runs is
// returned with its exit status; any other error ends the test.
func runTestSession(t testing.TB, prefix, out, id, list string, flags ...string) testSession {
	t.Helper()
	var stdout, stderr bytes.Buffer
	args := append([]string{"run", "--scenario", list, "--out", out, "--session", id,
		"--machine", "test machine", "--prefix", prefix}, flags...)
	err := dispatch(&stdout, &stderr, args)
	t.Logf("stderr:\n%s", stderr.String())
	if err != nil && !errors.As(err, new(failedRunsError)) {
		t.Fatalf("bench run: %v", err)
	}
	status := exitStatus(err, io.Discard)
	csvPath, _ := harness.SessionPaths(out, "test machine", id)
	rows, err := results.ReadFiles([]string{csvPath})
	if err != nil {
		t.Fatal(err)
	}
	return testSession{list: list, csvPath: csvPath, rows: rows, report: stdout.String(), status: status}
}

// each calls f with every scenario and column found here that the
// session ran, and the row of its first repetition (nil when there is
// none), and returns how many it called f with.
func (ts testSession) each(t *testing.T, f func(s scenarios.Scenario, c proxies.Column, row *results.Row)) int {
	t.Helper()
	scs, err := scenarios.Select(ts.list)
	if err != nil {
		t.Fatal(err)
	}
	cols, err := harness.LoadColumns("", "")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range scs {
		for _, c := range cols {
			if !proxies.Serves(c, s.Mode) || !scenarios.ForColumn(s, c.Group == results.Baseline) {
				continue
			}
			n++
			var row *results.Row
			for i := range ts.rows {
				r := &ts.rows[i]
				if r.Proxy == c.Name && r.Mode == s.Mode && r.Load == s.Load.Name && r.Rep == 1 {
					row = r
				}
			}
			f(s, c, row)
		}
	}
	return n
}

package results

import (
	"strings"
	"testing"
)

func TestFailures(t *testing.T) {
	for _, c := range []struct {
		name                      string
		load                      string
		requests, errors, timeout int64
		reads                     int64 // the closed column: -1 for a file without it
		closed, failures          int64
	}{
		// tinyproxy's ka-1k: a read error after each answer but the last
		// of each of wrk's connections
		{"closed after each answer", "ka-1k", 14933, 14913, 0, -1, 14913, 0},
		// tinyproxy's ka-50k-2000: the timeouts stay failures
		{"closed, and timeouts", "ka-50k-2000", 4095, 4095, 261, -1, 4095, 261},
		// squid's ka-50k-2000: timeouts alone
		{"timeouts", "ka-50k-2000", 6777, 0, 198, -1, 0, 198},
		// an error a run, far from one an answer
		{"a few errors", "close-1k", 7986, 1, 0, -1, 0, 1},
		// more errors than answers: the proxy failed exchanges
		{"more errors than answers", "ka-1k", 100, 150, 0, -1, 0, 150},
		// errors for most answers, but not one for one
		{"errors for 90% of the answers", "ka-1k", 1000, 900, 0, -1, 0, 900},
		// bench mix counts its reconnects itself: its errors are failures
		{"a mix", "mix-3k", 500, 500, 10, -1, 0, 510},
		// the tool told its reads apart: 1000 closed after an answer, 20 502s
		{"reads apart", "ka-1k", 1000, 1020, 0, 1000, 1000, 20},
		// reads apart, none closed: 502s as many as the answers are failures
		{"reads apart, none closed", "ka-1k", 500, 500, 0, 0, 0, 500},
	} {
		r := Row{Load: c.load, Requests: c.requests, Errors: c.errors, Timeouts: c.timeout}
		if c.reads >= 0 {
			r.ClosedReads, r.HasClosed = c.reads, true
		}
		if got := r.Closed(); got != c.closed {
			t.Errorf("%s: Closed(%d answers, %d errors) = %d; want %d", c.name, c.requests, c.errors, got, c.closed)
		}
		if got := r.Failures(); got != c.failures {
			t.Errorf("%s: Failures(%d answers, %d errors, %d timeouts) = %d; want %d", c.name, c.requests, c.errors, c.timeout, got, c.failures)
		}
	}
}

// TestReadClosed: the closed column reads where the file has it, and is
// unknown where its cell is empty or the file predates it; written back,
// it is what was read.
func TestReadClosed(t *testing.T) {
	in := minimalHeader + ",errors,closed\n" +
		"ARM,s1,tinyproxy,copy,http,ka-1k,1,5,14933,0,1,proxy,1000,ok,14913,14913\n" +
		"ARM,s1,squid,copy,http,ka-1k,1,5,7986,0,1,proxy,1000,ok,1,\n"
	rows, err := readFrom(strings.NewReader(in), "c.csv")
	if err != nil {
		t.Fatal(err)
	}
	if r := rows[0]; !r.HasClosed || r.ClosedReads != 14913 || r.Failures() != 0 {
		t.Errorf("row 1: closed %d (known %v), failures %d; want 14913 known, 0", r.ClosedReads, r.HasClosed, r.Failures())
	}
	if r := rows[1]; r.HasClosed || r.Failures() != 1 {
		t.Errorf("row 2: closed known %v, failures %d; want unknown, 1", r.HasClosed, r.Failures())
	}
	for i, want := range []string{"14913", ""} {
		if rec := rows[i].Record(); rec[len(rec)-1] != want {
			t.Errorf("Record of row %d ends %q; want %q", i+1, rec[len(rec)-1], want)
		}
	}
}

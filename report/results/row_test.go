package results

import "testing"

func TestFailures(t *testing.T) {
	for _, c := range []struct {
		name                      string
		load                      string
		requests, errors, timeout int64
		closed, failures          int64
	}{
		// tinyproxy's ka-1k: a read error after each answer but the last
		// of each of wrk's connections
		{"closed after each answer", "ka-1k", 14933, 14913, 0, 14913, 0},
		// tinyproxy's ka-50k-2000: the timeouts stay failures
		{"closed, and timeouts", "ka-50k-2000", 4095, 4095, 261, 4095, 261},
		// squid's ka-50k-2000: timeouts alone
		{"timeouts", "ka-50k-2000", 6777, 0, 198, 0, 198},
		// an error a run, far from one an answer
		{"a few errors", "close-1k", 7986, 1, 0, 0, 1},
		// more errors than answers: the proxy failed exchanges
		{"more errors than answers", "ka-1k", 100, 150, 0, 0, 150},
		// errors for most answers, but not one for one
		{"errors for 90% of the answers", "ka-1k", 1000, 900, 0, 0, 900},
		// bench mix counts its reconnects itself: its errors are failures
		{"a mix", "mix-3k", 500, 500, 10, 0, 510},
	} {
		r := Row{Load: c.load, Requests: c.requests, Errors: c.errors, Timeouts: c.timeout}
		if got := r.Closed(); got != c.closed {
			t.Errorf("%s: Closed(%d answers, %d errors) = %d; want %d", c.name, c.requests, c.errors, got, c.closed)
		}
		if got := r.Failures(); got != c.failures {
			t.Errorf("%s: Failures(%d answers, %d errors, %d timeouts) = %d; want %d", c.name, c.requests, c.errors, c.timeout, got, c.failures)
		}
	}
}

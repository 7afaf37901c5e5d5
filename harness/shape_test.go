package harness

import (
	"testing"

	"bench/harness/host"
	"bench/proxies"
	"bench/results"
	"bench/scenarios"
)

// A run's shape: a tls-tunnel through a proxy is two ends held to its
// load's suite, with the load off the client end's CPU (the baseline's
// load too, though it runs no ends); the handshakes are held to the
// page's TLS; a proxy's TLS is read back in both; every other run is one
// proxy in its mode.
func TestShape(t *testing.T) {
	for _, m := range results.Modes {
		for _, g := range results.Groups {
			r := RunSpec{Scenario: scenarios.Scenario{Mode: m}, Column: proxies.Column{Group: g}}
			proxy := g != results.Baseline
			var want shape
			switch m {
			case results.TLSTunnel:
				want = shape{tunnel: proxy, tls: suiteTLS, pinLoad: true, negotiates: proxy}
			case results.TLSHandshake:
				want = shape{tls: handshakeTLS, negotiates: proxy}
			}
			if got := r.shape(); got != want {
				t.Errorf("%s, %s: shape %+v, want %+v", m, g, got, want)
			}
		}
	}
}

// A run's note says why its proxy cut answers where its adapter says it
// does and exchanges that half-closed failed, and nothing otherwise.
func TestHalfCloseNote(t *testing.T) {
	stunnel := proxies.Column{Name: "stunnel", Kind: "stunnel"}
	cases := []struct {
		c      proxies.Column
		failed int64
		want   string
	}{
		// stunnel cuts them: its adapter's reason, with the count
		{stunnel, 12, "12 of the failed exchanges half-closed: " + proxies.Stunnel{}.HalfCloseCut()},
		// none failed: nothing to explain
		{stunnel, 0, ""},
		// nginx's adapter declares no cut: its failures are its own
		{proxies.Column{Name: "nginx", Kind: "nginx"}, 12, ""},
		// a kind no adapter knows
		{proxies.Column{Name: "x", Kind: "x"}, 12, ""},
	}
	for _, c := range cases {
		if got := halfCloseNote(c.c, scenarios.Measurement{HalfCloseFailed: c.failed}); got != c.want {
			t.Errorf("halfCloseNote(%q, %d) = %q; want %q", c.c.Kind, c.failed, got, c.want)
		}
	}
}

// The row of a run is filled from what was measured; a run in which no
// exchange completed fails, its row keeping the figures, and the notes of
// an ok run are its scaling, its TLS and its errors'.
func TestFillRow(t *testing.T) {
	x := measured{
		m:      scenarios.Measurement{Seconds: 10, Requests: 1000, Bytes: 5000, Errors: 20, P50Ms: 1, P99Ms: 2, HasLatency: true},
		sample: figures{cpu: map[host.Role]float64{host.RoleProxy: 9}, busy: map[host.Role]float64{host.RoleProxy: 0.9}, bound: results.BoundProxy, pipes: 3, counted: true},
		peak:   4096, tlsNote: "negotiated TLSv1.3",
	}
	r := RunSpec{Asked: 20000, Scenario: scenarios.Scenario{Load: scenarios.Load{Conns: 1000}}}
	var row results.Row
	if x.fill(&row, r); completed(&row) != nil {
		t.Fatal(completed(&row))
	}
	if row.Requests != 1000 || row.Bytes != 5000 || row.CPUProxy != 9 || row.BusyProxy != 0.9 || row.Bound != results.BoundProxy ||
		row.SplicePipes != 3 || !row.HasPipes || row.PeakMemBytes != 4096 || !row.HasLatency || row.P99Ms != 2 {
		t.Errorf("row %+v", row)
	}
	want := joinNotes(r.Scaled(), "negotiated TLSv1.3", errorNote(x.m, r.Scenario.Load.Name))
	if row.Note != want || row.Note == "" {
		t.Errorf("note %q, want %q", row.Note, want)
	}
	// No exchange completed: failed, though bytes of answers came (its
	// figure, exchanges a second, would be 0, which the reader refuses
	// of an ok run); none of a stream's bytes moved: failed.
	for _, c := range []struct {
		load  string
		bytes int64
	}{{"ka-1k", 0}, {"ka-1k", 5000}, {"stream1", 0}} {
		x.m.Requests, x.m.Bytes = 0, c.bytes
		r.Scenario.Load.Name = c.load
		row = results.Row{Load: c.load} // as rowOf names it
		if x.fill(&row, r); completed(&row) == nil || row.Errors != 20 || row.CPUProxy != 9 {
			t.Errorf("no exchange in %s, %d bytes: %v, row %+v", c.load, c.bytes, completed(&row), row)
		}
	}
	// A stream moves bytes and no exchange.
	x.m.Requests, x.m.Bytes, row = 0, 5000, results.Row{Load: "stream1"}
	if x.fill(&row, r); completed(&row) != nil {
		t.Errorf("a stream of 5000 bytes: %v", completed(&row))
	}
}

func TestErrorNote(t *testing.T) {
	for _, c := range []struct {
		name string
		load string
		m    scenarios.Measurement
		want string
	}{
		// 2% errors: the counts
		{"errors", "ka-1k", scenarios.Measurement{Requests: 1000, Errors: 20},
			"20 errors and 0 timeouts beside 1000 completed exchanges"},
		// timeouts alone
		{"timeouts", "ka-50k-2000", scenarios.Measurement{Requests: 1000, Timeouts: 30, HasClosed: true},
			"0 errors and 30 timeouts beside 1000 completed exchanges"},
		// within 1%: no note
		{"within 1%", "ka-1k", scenarios.Measurement{Requests: 1000, Errors: 5}, ""},
		// a read error after each answer (tinyproxy): named for what it is
		{"closed after each answer", "ka-1k", scenarios.Measurement{Requests: 14933, Errors: 14913},
			"14913 errors (reads on connections the proxy closed after its answer, not failed exchanges) and 0 timeouts beside 14933 completed exchanges"},
		// wrk's reads apart: its closed connections, and 2% 502s beside them
		{"closed, and status errors", "ka-1k", scenarios.Measurement{Requests: 1000, Errors: 1020, Closed: 1000, HasClosed: true},
			"1020 errors (1000 of them reads on connections the proxy closed after its answer, not failed exchanges) and 0 timeouts beside 1000 completed exchanges"},
		// wrk's reads apart, none closed: half the answers 502 are failures, though they match the answers one for one
		{"status errors matching the answers", "ka-1k", scenarios.Measurement{Requests: 500, Errors: 500, HasClosed: true},
			"500 errors and 0 timeouts beside 500 completed exchanges"},
		// the mixes count their reconnects themselves: their errors are errors
		{"a mix", "mix", scenarios.Measurement{Requests: 500, Errors: 500, Detail: "short 500"},
			"500 errors and 0 timeouts beside 500 completed exchanges: short 500"},
	} {
		if got := errorNote(c.m, c.load); got != c.want {
			t.Errorf("errorNote(%s) = %q; want %q", c.name, got, c.want)
		}
	}
}

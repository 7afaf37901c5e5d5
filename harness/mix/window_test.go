package mix

import (
	"math"
	"testing"
	"time"

	"bench/harness/mix/mixtest"
	"bench/scenarios"
)

// closedLoop is a closed-loop mix through proxy (a relay) to origin with
// a warm-up, for the window tests.
func closedLoop(proxy, origin string, conns, active int, warmup, window, timeout time.Duration) Config {
	return Config{
		Mode: Relay, Proxy: proxy, Origin: origin,
		Conns: conns, Active: active,
		Warmup: warmup, Duration: window, Timeout: timeout,
		OpenParallel: 32,
	}
}

// seenBracket checks the exchanges a closed loop of active at a time
// counted in its window against the answers its server ended in the same
// window: an answer the client counted was ended by the server before
// the client read it whole, so the two differ by those in flight at the
// window's start or end, at most active at each: the count is within
// active of what the server saw, whatever the machine's speed.
func seenBracket(t *testing.T, name string, r scenarios.MixResult, active int, ended *mixtest.Times) {
	t.Helper()
	window := time.Duration(r.Seconds * float64(time.Second))
	seen := int64(ended.In(r.Started, r.Started.Add(window)))
	t.Logf("%s: %d exchanges in the %.3fs window, the server passed on %d in it", name, r.Exchanges, r.Seconds, seen)
	if r.Exchanges < seen-int64(active) || r.Exchanges > seen+int64(active) {
		t.Errorf("%s: %d exchanges in the window; the server passed on %d in it: want within the %d in flight at a time", name, r.Exchanges, seen, active)
	}
}

// TestFixedWindow: a proxy holding 1 exchange in 100 for 1.5 s does not
// stretch the window. The exchanges counted are what the proxy passed on
// inside the window, within the 50 in flight at a time (seenBracket);
// the held exchanges are in the latency (p99 at least 1.5 s), those
// still held at the window's end too. The same proxy without holding,
// and the origin alone, count theirs so too. (It wanted the three
// ratios of the throughput to the server's within 2% of 1 and of each
// other: with under 3000 exchanges in a window of a loaded machine, the
// 50 in flight at an edge are 1.8%, a figure of the machine's speed.)
func TestFixedWindow(t *testing.T) {
	const (
		hold   = 1500 * time.Millisecond
		window = 3 * time.Second
	)
	o := mixtest.StartOrigin(t, mixtest.None)
	holding := mixtest.StartHolder(t, o.Addr, mixtest.Faults{HoldEvery: 100, Hold: hold})
	r := run(t, closedLoop(holding.Addr, o.Addr, 300, 50, 2*time.Second, window, 3*time.Second))
	if r.Seconds != window.Seconds() || r.WarmupSeconds != 2 {
		t.Errorf("window %vs after %vs; want the %v asked for, whatever its slowest exchange, after 2s", r.Seconds, r.WarmupSeconds, window)
	}
	seenBracket(t, "holding 1 in 100", r, 50, &holding.Ended)
	if r.Errors != (scenarios.MixErrors{}) {
		t.Errorf("errors %+v; want none (the hold is within the timeout)", r.Errors)
	}
	if ms := float64(hold.Milliseconds()); r.P99Ms < ms || r.OkP99Ms > r.P99Ms {
		t.Errorf("p99 %.1f ms (answered alone %.1f ms); want the hold's %.0f ms at least", r.P99Ms, r.OkP99Ms, ms)
	}
	// Held ones running at the end are in the latency, at their whole
	// time, beside the window's exchanges.
	if r.Due != r.Exchanges+r.Unfinished || r.Unfinished == 0 || r.Unfinished > 50 {
		t.Errorf("%d due, %d exchanges, %d unfinished; want due = exchanges + unfinished, 1 to 50 unfinished", r.Due, r.Exchanges, r.Unfinished)
	}

	plain := mixtest.StartHolder(t, o.Addr, mixtest.Faults{})
	seenBracket(t, "the same proxy without holding", run(t, closedLoop(plain.Addr, o.Addr, 300, 50, time.Second, window, 3*time.Second)), 50, &plain.Ended)
	o2 := mixtest.StartOrigin(t, mixtest.None)
	seenBracket(t, "no proxy", run(t, closedLoop(o2.Addr, o2.Addr, 300, 50, time.Second, window, 3*time.Second)), 50, &o2.Ended)
}

// TestCutAnswers: a proxy that resets 1 in 50 of the answers longer than
// 16 KB after their first 16 KB fails those exchanges (short: their head
// had come); none is retried or hidden.
func TestCutAnswers(t *testing.T) {
	o := mixtest.StartOrigin(t, mixtest.None)
	p := mixtest.StartHolder(t, o.Addr, mixtest.Faults{ResetEvery: 50, ResetAfter: 16 << 10})
	r := run(t, closedLoop(p.Addr, o.Addr, 200, 20, 500*time.Millisecond, 2*time.Second, 2*time.Second))
	cut := p.Resets.In(r.Started, r.Started.Add(2*time.Second))
	t.Logf("the proxy cut %d answers in the window; errors %+v, %d reconnects", cut, r.Errors, r.Reconnects)
	failed := r.Errors.Failed() + r.Errors.Timeout
	if cut < 20 || math.Abs(float64(failed-int64(cut))) > max(3, 0.02*float64(cut)) {
		t.Errorf("%d failed exchanges; want the %d the proxy cut (at least 20), within 2%%", failed, cut)
	}
	if r.Errors.Short < failed*9/10 || r.Reconnects != 0 {
		t.Errorf("errors %+v, %d reconnects; want the cut answers short and none retried", r.Errors, r.Reconnects)
	}
	if r.Due != r.Exchanges+failed+r.Unfinished {
		t.Errorf("%d due; want the %d exchanges, %d failed and %d unfinished", r.Due, r.Exchanges, failed, r.Unfinished)
	}
}

// TestReconnects: a proxy that closes kept-alive connections after an
// answer without a word (tinyproxy) costs no exchange: the next one on
// such a connection fails before any byte of its answer and is made
// again on a new connection, counted in reconnects.
func TestReconnects(t *testing.T) {
	o := mixtest.StartOrigin(t, mixtest.None)
	p := mixtest.StartHolder(t, o.Addr, mixtest.Faults{CloseEvery: 20})
	r := run(t, closedLoop(p.Addr, o.Addr, 100, 20, 0, 2*time.Second, 2*time.Second))
	closed := len(p.Closes.All())
	t.Logf("the proxy closed %d connections; %d reconnects", closed, r.Reconnects)
	if r.Errors != (scenarios.MixErrors{}) || r.Reconnects == 0 || r.Reconnects > int64(closed) {
		t.Errorf("errors %+v, %d reconnects; want none, and some reconnects, at most the %d closes", r.Errors, r.Reconnects, closed)
	}
}

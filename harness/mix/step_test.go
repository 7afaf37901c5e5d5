package mix

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"bench/harness/mix/mixtest"
	"bench/harness/sweep"
	"bench/results"
	"bench/scenarios"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// stepMix opens a fixed-rate mix of conns connections through proxy to
// origin, for stepping, closed at the test's end.
func stepMix(t *testing.T, proxy, origin string, conns int) *Mix {
	t.Helper()
	cfg := config(Relay, proxy, origin)
	cfg.Conns, cfg.Active, cfg.Rate = conns, 0, 1
	cfg.OpenParallel = 64
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m.Open(context.Background())
	t.Cleanup(func() { m.Close() })
	return m
}

// TestStep: windows at two rates over the same connections each count
// their own exchanges, at their own rate, from their own start, with
// every connection open when each begins and after the last (those
// half-closed at the end of each opened again), and the closed loop has
// no step.
func TestStep(t *testing.T) {
	o := mixtest.StartOrigin(t, mixtest.None)
	m := stepMix(t, o.Addr, o.Addr, 100)
	var last time.Time
	for _, rate := range []float64{200, 500} {
		before := time.Now()
		r, err := m.Step(context.Background(), time.Time{}, scenarios.MixWindow{Rate: rate, Warmup: 200 * time.Millisecond, Duration: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%g/s: %d exchanges, %d due, errors %+v, p99 %.2f ms", rate, r.Exchanges, r.Due, r.Errors, r.P99Ms)
		if r.Rate != rate || r.Seconds != 1 || r.WarmupSeconds != 0.2 {
			t.Errorf("step at %g/s: rate %g, window %gs after %gs; want the step's", rate, r.Rate, r.Seconds, r.WarmupSeconds)
		}
		if math.Abs(float64(r.Due)-rate) > rate*0.02 || r.Exchanges != r.Due || r.Errors != (scenarios.MixErrors{}) {
			t.Errorf("step at %g/s: %d exchanges of %d due, errors %+v; want the %g due in a second, all answered", rate, r.Exchanges, r.Due, r.Errors, rate)
		}
		if r.Conns != 100 {
			t.Errorf("step at %g/s began with %d connections open; want all 100", rate, r.Conns)
		}
		if !r.Started.After(last) || r.Started.Before(before.Add(200*time.Millisecond)) {
			t.Errorf("step at %g/s: window began %v; want after its warm-up from %v, and after the last (%v)", rate, r.Started, before, last)
		}
		last = r.Started
		if n := histCount(t, r.Histogram); n != r.Due {
			t.Errorf("step at %g/s: histogram of %d; want the step's %d due alone", rate, n, r.Due)
		}
	}
	if m.finishRefill(); m.open() != 100 {
		t.Errorf("%d connections open after the steps; want all 100 kept for the next", m.open())
	}
	closed := config(Relay, o.Addr, o.Addr)
	cm, err := New(closed)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cm.Step(context.Background(), time.Time{}, scenarios.MixWindow{Rate: 100, Duration: time.Second}); err != ErrClosedLoop {
		t.Errorf("a step of a closed loop = %v; want ErrClosedLoop", err)
	}
}

// histCount is the number of latencies in an encoded histogram.
func histCount(t *testing.T, enc string) int64 {
	t.Helper()
	h, err := hdrhistogram.Decode([]byte(enc))
	if err != nil {
		t.Fatal(err)
	}
	return h.TotalCount()
}

// search runs a whole sweep over m with the bound slo, steps of half of
// window after warmup, checks what every search owes (sweep.Verify), and
// returns the rate it ended with, whether that was confirmed, and its
// windows.
func search(t *testing.T, m *Mix, slo results.SLO, window, warmup time.Duration) (rate float64, confirmed bool, tried []sweep.Tried) {
	t.Helper()
	cfg := sweep.Defaults()
	cfg.SLO = slo
	s := sweep.New(cfg)
	err := s.Run(window, warmup, func(w sweep.Window) (sweep.Figures, error) {
		r, err := m.Step(context.Background(), time.Time{}, scenarios.MixWindow{Rate: w.Rate, Warmup: w.Warmup, Duration: w.Length})
		if err == nil {
			t.Logf("%g/s (%v): %d of %d due answered, errors %+v, p99 %.1f ms", w.Rate, w.Length, r.Exchanges, r.Due, r.Errors, r.P99Ms)
		}
		return sweep.FiguresOf(r), err
	}, func(w sweep.Window, st results.Step) error {
		t.Logf("  %s", st)
		tried = append(tried, sweep.Tried{Rate: w.Rate, Step: st})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(tried) != s.Windows() {
		t.Errorf("%d windows; the search counts %d", len(tried), s.Windows())
	}
	if rate, confirmed = s.Result(); !confirmed {
		rate, _ = s.Unconfirmed()
	}
	if err := sweep.Verify(tried, rate, confirmed); err != nil {
		t.Errorf("search ended at %g/s (confirmed %v): %v", rate, confirmed, err)
	}
	return rate, confirmed, tried
}

// The stand-in proxies of the sweep tests: a capacity far below what
// this machine does (standIn), a burst that lets the exchanges a stall
// of the machine bunched up pass (stallBurst), a bound on the p99 that a
// stall seldom reaches (standInSLO: a step at a quarter of the capacity
// read 283 ms beside real-time loops on both CPUs), and a hold of the
// exchanges over the capacity far past it, under the timeout of 2 s
// (standInHold).
const (
	stallBurst  = 300 * time.Millisecond
	standInHold = 1500 * time.Millisecond
)

var standInSLO = results.SLO{P99: results.Span(400 * time.Millisecond), Errors: 0.001}

// standInMost is the most capacity a stand-in is given: the 600
// connections of stepMix then carry a stall of 300 ms and the exchanges
// held beyond the capacity at 1.1 times it (110/s held 1.5 s) with room
// to spare. (Without it, at 8598/s, a quarter of an idle machine's rate,
// steps under the capacity ran out of connections in a stall and failed
// by their dropped exchanges alone.)
const standInMost = 1000

// standIn is a capacity for a stand-in proxy far below what this machine
// does at the time: a quarter of the rate a closed loop straight to the
// origin o reaches in a second, measured in the same test, in whole
// exchanges a second, and no more than standInMost.
func standIn(t *testing.T, o *mixtest.Origin) float64 {
	t.Helper()
	r := run(t, closedLoop(o.Addr, o.Addr, 300, 50, 200*time.Millisecond, time.Second, 2*time.Second))
	c := min(math.Round(float64(r.Exchanges)/r.Seconds/4), standInMost)
	if c < 100 {
		t.Fatalf("no proxy's closed loop reached %d exchanges in %.2fs; want 400 a second at least", r.Exchanges, r.Seconds)
	}
	t.Logf("no proxy: %.0f exchanges a second; the stand-in's capacity %.0f/s", float64(r.Exchanges)/r.Seconds, c)
	return c
}

// TestSweepCapacity: the search through a proxy limited to a capacity
// (standIn), a token bucket of exchanges a second with a burst beyond
// which they queue, keeps what every search owes (search) and ends with
// a rate no higher than the most a window can pass: a window
// of length T after a warm-up W at rate r sees a queue that grows from
// the warm-up's start, its p99 (r/c - 1)(W + 0.99 T) less the burst, so
// it passes up to c(1 + (p99 bound + burst)/(W + 0.99 T)): 1.28 c over
// the 2 s confirm, 1.47 c over a 1 s step, for a rate not confirmed. The
// failing steps fail by what the queue does, its latency. (It asserted a
// confirmed rate within 5% of capacities of 4000 and 1500/s, searching
// again once where the first search missed: on a loaded machine a stall
// over the bucket's 20 ms queued exchanges that hardly drained, steps
// passed up to 1.05 times the capacity where the confirms failed, and
// the search failed by the machine's speed, not by what it owes. How far
// below the capacity it ends is the machine's: on a shared machine a
// step at 900/s read a p99 of 600 ms with nothing held.)
func TestSweepCapacity(t *testing.T) {
	const window, warmup = 2 * time.Second, 500 * time.Millisecond
	o := mixtest.StartOrigin(t, mixtest.None)
	capacity := standIn(t, o)
	p := mixtest.StartHolder(t, o.Addr, mixtest.Faults{Capacity: capacity, Burst: stallBurst})
	m := stepMix(t, p.Addr, o.Addr, 600)
	rate, confirmed, tried := search(t, m, standInSLO, window, warmup)
	length := window
	if !confirmed {
		length = sweep.StepWindow(window)
	}
	most := capacity * (1 + (time.Duration(standInSLO.P99)+stallBurst).Seconds()/(warmup+length*99/100).Seconds())
	if rate > most {
		t.Errorf("ended at %g/s (confirmed %v); want at most the %.0f/s a window of %v can pass at a capacity of %g/s", rate, confirmed, most, length, capacity)
	}
	for _, w := range tried {
		if !w.Step.Pass && !strings.Contains(w.Step.Why, "p99") {
			t.Errorf("%s at %g/s; want the queue's latency among what failed", w.Step, w.Rate)
		}
	}
}

// TestSweepHoldShare: a proxy that holds 1.5 s, far past the p99 bound
// of 400 ms, the exchanges that come when its token bucket (a capacity
// c from standIn, a burst of 300 ms) is empty, and passes the rest at
// once: the share held is what a rate asks beyond the capacity, so a
// window of length T at r holds at least r T - c (T + burst) of the r T
// due in it, and passes (1% held at most) up to c (1 + burst/T)/0.99:
// 1.16 c over the 2 s confirm, 1.31 c over a 1 s step. Its throughput
// never gives out, its p99 does. The search keeps what every search owes
// and ends with a rate no higher than that, every failing step failing
// by its p99 (among what it names: where the held exchanges keep every
// connection busy, or the machine stalls, some are dropped too), and
// where a window asked more than c, the proxy held some. (It held 60 ms over a capacity of 2000/s and
// asserted a rate within 5% of 2020/s, searching again once where the
// first search missed: a hold near the bound, a burst of 20 ms and a
// capacity that a loaded machine barely reaches made its verdict the
// machine's, and so is how far below c it ends. It wanted the p99 alone
// to fail a step: beside real-time loops on both CPUs, a step at 1000/s
// dropped 418 of its exchanges too.)
func TestSweepHoldShare(t *testing.T) {
	const window, warmup = 2 * time.Second, 500 * time.Millisecond
	o := mixtest.StartOrigin(t, mixtest.None)
	capacity := standIn(t, o)
	p := mixtest.StartHolder(t, o.Addr, mixtest.Faults{Capacity: capacity, Burst: stallBurst, HoldOver: standInHold})
	m := stepMix(t, p.Addr, o.Addr, 600)
	rate, confirmed, tried := search(t, m, standInSLO, window, warmup)
	length := window
	if !confirmed {
		length = sweep.StepWindow(window)
	}
	most := capacity * (1 + stallBurst.Seconds()/length.Seconds()) / 0.99
	if rate > most {
		t.Errorf("ended at %g/s (confirmed %v); want at most the %.0f/s a window of %v can pass at a capacity of %g/s", rate, confirmed, most, length, capacity)
	}
	over := false
	for _, w := range tried {
		over = over || w.Rate > capacity*(1+stallBurst.Seconds()/sweep.StepWindow(window).Seconds())
		if st := w.Step; !st.Pass && !strings.HasPrefix(st.Why, "p99 ") {
			t.Errorf("%s at %g/s; want the p99 among what failed", st, w.Rate)
		}
	}
	if over && p.HeldOver.Load() == 0 {
		t.Error("the proxy held nothing; want the steps above its capacity and burst held")
	}
}

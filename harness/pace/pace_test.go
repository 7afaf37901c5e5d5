package pace

import (
	"math"
	"testing"
	"time"

	"bench/results"
)

func TestBound(t *testing.T) {
	// proxy: busy, thread, quota (of its one CPU), throttled share
	type pr struct{ busy, thread, quota, thr float64 }
	type l = Load
	tests := []struct {
		proxy          pr
		client, origin Load
		want           results.Bound
	}{
		{pr{0.95, 0, 0, 0}, l{}, l{}, results.BoundProxy},                        // proxy CPUs saturated
		{pr{0.5, 0.9, 0, 0}, l{}, l{}, results.BoundProxy},                       // one proxy thread at 90%
		{pr{0.95, 0, 0, 0}, l{Busy: 1}, l{}, results.BoundProxy},                 // the proxy wins ties of the rule
		{pr{0.5, 0, 0, 0}, l{Busy: 0.92}, l{Busy: 0.95}, results.BoundOrigin},    // the busier of client and origin
		{pr{0.5, 0, 0, 0}, l{Busy: 0.3, Thread: 0.97}, l{}, results.BoundClient}, // a client thread at its limit
		{pr{0.89, 0.89, 0, 0}, l{Busy: 0.89}, l{Busy: 0.1}, results.BoundNone},   // nobody at 90%
		{pr{}, l{}, l{}, results.BoundNone},                                      // nothing ran
		{pr{0.5, 0, 0, 0}, l{Busy: 0.95}, l{Thread: 0.96}, results.BoundOrigin},  // the larger of each role's two figures
		// Under a quota of half a CPU: its thread at the quota, or held
		// there most of the window, sets the pace whatever its CPU did.
		{pr{0.6, 0.5, 0.5, 0.2}, l{Busy: 0.95}, l{}, results.BoundProxy},
		{pr{0.3, 0.1, 0.5, 0.95}, l{Busy: 0.95}, l{}, results.BoundProxy},
		// The CPU's busy time is not held against the quota: it runs
		// other work too (here 0.8 of it, 1.6 times the quota).
		{pr{0.8, 0.3, 0.5, 0.1}, l{Busy: 0.95}, l{}, results.BoundClient},
		{pr{0.6, 0.44, 0.5, 0.5}, l{}, l{}, results.BoundNone},
		// A saturated CPU still sets the pace: the proxy could not have
		// had more of it.
		{pr{0.95, 0.3, 0.5, 0.1}, l{Busy: 0.95}, l{}, results.BoundProxy},
		// A quota of the whole CPU is no cap: the CPUs' rule.
		{pr{0.95, 0.5, 1, 0}, l{}, l{}, results.BoundProxy},
		{pr{0.5, 0.5, 1, 0.99}, l{}, l{}, results.BoundNone},
	}
	for _, tt := range tests {
		p := Proxy{Load: Load{Busy: tt.proxy.busy, Thread: tt.proxy.thread}, CPUs: 1, Quota: tt.proxy.quota, Throttled: tt.proxy.thr}
		if got := Bound(p, tt.client, tt.origin); got != tt.want {
			t.Errorf("Bound(%+v, %+v, %+v) = %q; want %q", p, tt.client, tt.origin, got, tt.want)
		}
	}
}

func TestThread(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	// obs makes the observations of (seconds, CPU seconds) pairs.
	obs := func(pairs ...float64) ([]time.Time, []uint64) {
		var ts []time.Time
		var ns []uint64
		for i := 0; i < len(pairs); i += 2 {
			ts, ns = append(ts, at(pairs[i])), append(ns, uint64(pairs[i+1]*1e9))
		}
		return ts, ns
	}
	tests := []struct {
		name         string
		lo, hi, want float64
		pairs        []float64 // (seconds, CPU seconds) observations
	}{
		// Alive through a 3 s window, saturated.
		{"whole window", 0, 3, 1, []float64{0, 5, 1, 6, 2, 7, 3, 8}},
		// Born 0.3 s in, ended between the polls at 3 and 3.5: its share
		// of the span it was seen in, not of the window.
		{"born and ended inside", 0, 3.5, 1, []float64{0.3, 0, 1, 0.7, 2, 1.7, 3, 2.7}},
		// Half busy over its span.
		{"half busy", 0, 3, 0.5, []float64{0.5, 0, 1.5, 0.5, 2.5, 1}},
		// Seen over 0.2 s only: charged over the window.
		{"short span", 0, 4, 0.05, []float64{2.8, 0, 3, 0.2}},
		// Seen over 1.2 s of a 2 s window: over half of it, its own span.
		{"over half a short window", 0, 2, 1, []float64{0.4, 0, 1.6, 1.2}},
		// Only the observations inside [lo, hi] count: busy before 2 s,
		// idle after.
		{"restricted", 2, 4, 0, []float64{0, 0, 1, 1, 2, 2, 3, 2, 4, 2}},
		{"restricted busy part", 0, 2, 1, []float64{0, 0, 1, 1, 2, 2, 3, 2, 4, 2}},
		{"no observation inside", 2, 4, 0, []float64{0, 0, 1, 1}},
		// A reading that went backwards (a reused thread ID) says nothing.
		{"counter back", 0, 3, 0, []float64{0, 5, 3, 1}},
	}
	for _, tt := range tests {
		ts, ns := obs(tt.pairs...)
		if got := Thread(ts, ns, at(tt.lo), at(tt.hi)); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: Thread = %.4f; want %.4f", tt.name, got, tt.want)
		}
	}
}

// TestPerSecond: a role's busy fraction each second of a window, from
// the readings nearest inside each second; a second without two readings
// ends the series.
func TestPerSecond(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	var ts []time.Time
	var proxy, client []uint64
	var p, c uint64
	// 2.5 s of readings 100 ms apart: in the first second the proxy's one
	// CPU is busy throughout (10 ticks a reading), the client's two half
	// the time between them; in the second the proxy idles.
	for i := 0; i <= 25; i++ {
		ts, proxy, client = append(ts, t0.Add(time.Duration(i)*100*time.Millisecond)), append(proxy, p), append(client, c)
		if i < 10 {
			p += 10
		}
		c += 10
	}
	for _, tt := range []struct {
		name  string
		ticks []uint64
		cpus  int
		want  []float64
	}{
		{"proxy", proxy, 1, []float64{1, 0, 0}},
		{"client", client, 2, []float64{0.5, 0.5, 0.5}},
		{"idle", make([]uint64, len(ts)), 1, []float64{0, 0, 0}},
	} {
		got := PerSecond(ts, tt.ticks, tt.cpus)
		if len(got) != len(tt.want) {
			t.Fatalf("PerSecond(%s) = %v; want %v", tt.name, got, tt.want)
		}
		for i := range tt.want {
			if math.Abs(got[i]-tt.want[i]) > 1e-9 {
				t.Errorf("PerSecond(%s) second %d = %v; want %v", tt.name, i, got[i], tt.want[i])
			}
		}
	}
	if got := PerSecond(ts[:1], proxy[:1], 1); len(got) != 0 {
		t.Errorf("PerSecond of one reading = %v; want nothing", got)
	}
	// A gap of two seconds without a reading ends the series there.
	gap := []time.Time{t0, t0.Add(time.Second), t0.Add(3 * time.Second)}
	if got := PerSecond(gap, []uint64{0, 100, 300}, 1); len(got) != 1 || got[0] != 1 {
		t.Errorf("PerSecond across a gap = %v; want [1]", got)
	}
}

func TestBusyAndThrottled(t *testing.T) {
	for _, tt := range []struct {
		name     string
		from, to uint64
		span     time.Duration
		cpus     int
		want     float64
	}{
		{"one CPU saturated", 0, 200, 2 * time.Second, 1, 1},
		{"two CPUs, half", 0, 200, 2 * time.Second, 2, 0.5},
		{"capped at 1 (tick rounding)", 0, 102, time.Second, 1, 1},
		{"no CPUs", 0, 100, time.Second, 0, 0},
		{"no span", 0, 100, 0, 1, 0},
		{"counter back", 100, 50, time.Second, 1, 0},
	} {
		if got := Busy(tt.from, tt.to, tt.span, tt.cpus); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("Busy(%s) = %v; want %v", tt.name, got, tt.want)
		}
	}
	for _, tt := range []struct {
		periods int64
		seconds float64
		want    float64
	}{
		{90, 10, 0.9}, {200, 10, 1}, {5, 0, 0}, {0, 10, 0},
	} {
		if got := ThrottledShare(tt.periods, tt.seconds); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("ThrottledShare(%d, %g) = %v; want %v", tt.periods, tt.seconds, got, tt.want)
		}
	}
}

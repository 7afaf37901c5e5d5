package host

import (
	"bench/harness/pace"
	"bench/results"
)

// figures are what a test reads of a window: its figures by
// harness/pace's rules, as the session reads them.
type figures struct {
	Seconds          float64
	CPU, Busy        map[Role]float64
	Thread           map[Role]float64
	Quota            float64
	ThrottledPeriods int64
	Throttled        float64
	Pipes            int
	Bound            results.Bound
}

// ThrottledShare is the share of the window the proxy was held at its
// quota.
func (f figures) ThrottledShare() float64 { return pace.ThrottledShare(f.ThrottledPeriods, f.Seconds) }

// read reads w as the session does.
func read(w Window) figures {
	f := figures{Seconds: w.To.Sub(w.From).Seconds(), CPU: map[Role]float64{}, Busy: map[Role]float64{}, Thread: map[Role]float64{},
		Quota: w.Quota, ThrottledPeriods: w.ThrottledPeriods, Throttled: w.Throttled.Seconds(), Pipes: w.Pipes}
	for _, r := range roles {
		f.Thread[r] = 0
		if ticks := w.Ticks[r]; len(ticks) >= 2 {
			n := len(ticks)
			f.Busy[r] = pace.Busy(ticks[0], ticks[n-1], w.Times[n-1].Sub(w.Times[0]), w.CPUs[r])
			f.CPU[r] = f.Busy[r] * f.Seconds * float64(w.CPUs[r])
		}
	}
	for _, t := range w.Threads {
		f.Thread[t.Role] = max(f.Thread[t.Role], pace.Thread(t.T, t.NS, w.From, w.To))
	}
	load := func(r Role) pace.Load { return pace.Load{Busy: f.Busy[r], Thread: f.Thread[r]} }
	f.Bound = pace.Bound(pace.Proxy{Load: load(RoleProxy), CPUs: w.CPUs[RoleProxy], Quota: w.Quota, Throttled: f.ThrottledShare()},
		load(RoleClient), load(RoleOrigin))
	return f
}

package harness

import (
	"bench/harness/host"
	"bench/harness/pace"
	"bench/results"
)

// figures are a run's CPU figures: what the sampler observed over the
// load tool's window (host.Window), as harness/pace reads it.
type figures struct {
	seconds float64
	// cpu, busy and thread are each role's CPU seconds, the busy fraction
	// of its CPUs and its busiest thread's share of the window.
	cpu, busy, thread map[host.Role]float64
	// perSecond is each role's busy fraction second by second.
	perSecond map[host.Role][]float64
	// quota, throttledPeriods and throttled: the proxy's CPU quota and
	// how the kernel held it there (0 without a quota).
	quota            float64
	throttledPeriods int64
	throttled        float64
	// pipes is the count of the proxy's pipes in the window, where one
	// was made in it (counted).
	pipes   int
	counted bool
	bound   results.Bound
	// windows are each host's sampler's window, where the roles are on
	// hosts of their own; clients each client host's busy share, where
	// several share the load.
	windows []results.HostWindow
	clients []float64
}

// figuresOf reads a window's observations as a run's figures.
func figuresOf(w host.Window) figures {
	f := figures{
		seconds: w.To.Sub(w.From).Seconds(),
		cpu:     map[host.Role]float64{}, busy: map[host.Role]float64{}, thread: map[host.Role]float64{},
		perSecond: map[host.Role][]float64{},
		quota:     w.Quota, throttledPeriods: w.ThrottledPeriods, throttled: w.Throttled.Seconds(),
		pipes: w.Pipes, counted: w.PipesCounted,
	}
	for r, ticks := range w.Ticks {
		n := len(ticks)
		if n < 2 {
			continue
		}
		times := w.TimesOf(r)
		if len(times) != n {
			continue
		}
		f.busy[r] = pace.Busy(ticks[0], ticks[n-1], times[n-1].Sub(times[0]), w.CPUs[r])
		f.cpu[r] = f.busy[r] * f.seconds * float64(w.CPUs[r])
		f.perSecond[r] = pace.PerSecond(times, ticks, w.CPUs[r])
	}
	clientHosts(&f, w)
	for _, h := range w.Hosts {
		f.windows = append(f.windows, results.HostWindow{Host: h.Dest.String(), Of: results.WindowSampler, From: h.From.UTC(), To: h.To.UTC()})
	}
	for _, t := range w.Threads {
		f.thread[t.Role] = max(f.thread[t.Role], pace.Thread(t.T, t.NS, w.From, w.To))
	}
	load := func(r host.Role) pace.Load { return pace.Load{Busy: f.busy[r], Thread: f.thread[r]} }
	f.bound = pace.Bound(pace.Proxy{Load: load(host.RoleProxy), CPUs: w.CPUs[host.RoleProxy], Quota: w.Quota,
		Throttled: pace.ThrottledShare(w.ThrottledPeriods, f.seconds)}, load(host.RoleClient), load(host.RoleOrigin))
	return f
}

// clientHosts makes the client's figures those of several client hosts
// sharing the load: its CPU time theirs summed, its busy share and
// per-second series the busiest host's, since a client host at its limit
// sets the pace as a client CPU does on one machine.
func clientHosts(f *figures, w host.Window) {
	if len(w.Clients) < 2 {
		return
	}
	f.cpu[host.RoleClient], f.busy[host.RoleClient] = 0, 0
	for _, c := range w.Clients {
		n := len(c.Ticks)
		if n < 2 || len(c.Times) != n {
			f.clients = append(f.clients, 0) // unread: no limit seen
			continue
		}
		busy := pace.Busy(c.Ticks[0], c.Ticks[n-1], c.Times[n-1].Sub(c.Times[0]), c.CPUs)
		f.clients = append(f.clients, busy)
		f.cpu[host.RoleClient] += busy * f.seconds * float64(c.CPUs)
		if busy >= f.busy[host.RoleClient] {
			f.busy[host.RoleClient] = busy
			f.perSecond[host.RoleClient] = pace.PerSecond(c.Times, c.Ticks, c.CPUs)
		}
	}
}

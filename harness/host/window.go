package host

import (
	"time"
)

// Window is what the sampler observed over a measured window, as it saw
// it (DESIGN.md, "Roles, CPU time and the pace-setter"; harness/pace reads
// it as figures).
type Window struct {
	// From and To bound the window.
	From, To time.Time
	// Planned is where the plan put the window's start: when the
	// sampler's loop was running, StartSampling returned and the tool
	// started, plus the plan's warm-up; zero without a plan.
	Planned time.Time
	// Times are the /proc/stat readings at or inside the window's bounds,
	// in time order, from the one nearest its start to the one nearest
	// its end (at most statPeriod from each); Ticks has, for each role,
	// the busy ticks (user+nice+system+irq+softirq+steal) of its CPUs
	// summed, at each reading.
	Times []time.Time
	Ticks map[Role][]uint64
	// RoleTimes, where a role's readings are another host's (a session
	// spread over hosts of their own), are its readings' times instead of
	// Times, on this machine's clock.
	RoleTimes map[Role][]time.Time
	// CPUs is each role's number of CPUs.
	CPUs map[Role]int
	// Clients are each client host's readings, where several share the
	// load (the first's are also the client's in Ticks, CPUs and
	// RoleTimes); none otherwise.
	Clients []Series
	// Hosts are each host's window on this machine's clock, where the
	// roles are on hosts of their own.
	Hosts []HostSpan
	// Threads are the threads of the roles' processes observed inside the
	// window, with their observations inside it.
	Threads []Thread
	// Polls are when the threads were polled inside the window.
	Polls []time.Time
	// Pipes is how many pipes the proxy's processes held beyond those
	// they held when it became ready (Host.ProxyReady), at the count made
	// at the window's last poll; PipesCounted says whether that count fell
	// inside the window.
	Pipes        int
	PipesCounted bool
	// Quota is the proxy's CPU quota in CPUs, 0 for none. With one,
	// ThrottledPeriods counts the CFS periods between the first and last
	// readings in which the kernel held the proxy's cgroup at its quota,
	// and Throttled is how long it held it (cpu.stat's nr_throttled and
	// throttled_time on v1, throttled_usec on v2).
	Quota            float64
	ThrottledPeriods int64
	Throttled        time.Duration
	// Cost is the CPU time the sampler used over the whole sampling: its
	// loop's thread, and its first and last polls where the caller made
	// them.
	Cost time.Duration
}

// HostSpan is a host's window: its readings' bounds, on this machine's
// clock.
type HostSpan struct {
	Dest     Destination
	From, To time.Time
}

// Series are one host's readings of a role: their times, on this
// machine's clock, the busy ticks of the role's CPUs summed at each, and
// how many CPUs.
type Series struct {
	Times []time.Time
	Ticks []uint64
	CPUs  int
}

// TimesOf are the times of role r's readings (Ticks[r]).
func (w Window) TimesOf(r Role) []time.Time {
	if t, ok := w.RoleTimes[r]; ok {
		return t
	}
	return w.Times
}

// window gathers what the sampler observed inside [lo, hi].
func (s *Sampler) window(snaps []cpuSnap, lo, hi time.Time) Window {
	w := Window{From: lo, To: hi, Planned: s.planned, Ticks: map[Role][]uint64{}, CPUs: map[Role]int{}, Cost: s.cost}
	var in []cpuSnap
	for _, sn := range snaps {
		if !sn.t.Before(lo) && !sn.t.After(hi) {
			in = append(in, sn)
		}
	}
	for _, r := range roles {
		cpus := s.h.layout.cpus(r)
		w.CPUs[r] = len(cpus)
		for _, sn := range in {
			var sum uint64
			for _, c := range cpus {
				sum += sn.busy[s.cpuIndex[c]]
			}
			w.Ticks[r] = append(w.Ticks[r], sum)
		}
	}
	for _, sn := range in {
		w.Times = append(w.Times, sn.t)
	}
	inside := func(t time.Time) bool { return !t.Before(lo) && !t.After(hi) }
	for _, p := range s.polls {
		if inside(p) {
			w.Polls = append(w.Polls, p)
		}
	}
	for _, t := range s.order {
		th := Thread{Role: t.role}
		for _, o := range t.obs {
			if inside(o.t) {
				th.T, th.NS = append(th.T, o.t), append(th.NS, o.ns)
			}
		}
		if len(th.T) > 0 {
			w.Threads = append(w.Threads, th)
		}
	}
	for _, p := range s.pipes {
		if inside(p.t) {
			w.Pipes, w.PipesCounted = max(w.Pipes, p.n), true
		}
	}
	if s.cpuStat != nil && len(in) >= 2 {
		a, b := in[0].thr, in[len(in)-1].thr
		w.Quota = s.h.cgroups.quota
		if b.throttled > a.throttled {
			w.ThrottledPeriods = int64(b.throttled - a.throttled)
		}
		if b.ns > a.ns {
			w.Throttled = time.Duration(b.ns - a.ns)
		}
	}
	return w
}

// maxTime returns the later of two times.
func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// minTime returns the earlier of two times.
func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// Package pace reads what the sampler observed over a measured window as
// the figures of a run: each role's CPU time and busy fraction, its
// busiest thread's share, the share of the window the proxy was held at
// its CPU quota, and which role set the pace (DESIGN.md, "Roles, CPU time
// and the pace-setter"). It takes plain values and touches nothing: the
// observing is harness/host's, the interpreting is here.
package pace

import (
	"time"

	"bench/results"
)

// Threshold is the reference results' 90% rule: a role whose CPUs, or one
// of whose threads, were busy at least this share of what it was allowed
// in the window set the pace (see Bound).
const Threshold = 0.9

// UserHZ is the unit of /proc/stat's times (USER_HZ, 100 on every Linux
// architecture).
const UserHZ = 100

// CFSPeriod is the CFS period a CPU quota is counted in: the kernel's
// default, which the harness sets on the proxy's cgroup.
const CFSPeriod = 100 * time.Millisecond

// MinThreadSpan is the shortest span over which a thread's share is its
// CPU time over that span; a thread observed for less (and less than half
// the window) is charged its CPU time over the whole window, since a
// share of a short span says little. The sampler polls the threads a
// second apart, so a thread seen at two polls is past it: a full second
// would put two polls a second apart on a knife's edge (a saturated
// thread seen over 0.9998 s read 0.25 of a 4 s window).
const MinThreadSpan = 900 * time.Millisecond

// Busy is the busy fraction of cpus CPUs between two readings of their
// busy ticks (summed over the CPUs) span apart, 0..1; 0 without CPUs or
// span.
func Busy(from, to uint64, span time.Duration, cpus int) float64 {
	if cpus <= 0 || span <= 0 || to <= from {
		return 0
	}
	return min(float64(to-from)/UserHZ/(span.Seconds()*float64(cpus)), 1)
}

// PerSecond is the busy fraction of cpus CPUs in each second from the
// first reading to the last: readings (in time order) at times t of the
// busy ticks summed over the CPUs; each second is measured between the
// readings nearest to its bounds inside it, and a second with fewer than
// two readings ends the series. A last part shorter than a second is a
// point too.
func PerSecond(t []time.Time, ticks []uint64, cpus int) []float64 {
	if len(t) < 2 || cpus <= 0 {
		return nil
	}
	var out []float64
	lo, hi := t[0], t[len(t)-1]
	i := 0
	for from := lo; from.Before(hi); from = from.Add(time.Second) {
		to := from.Add(time.Second)
		if to.After(hi) {
			to = hi
		}
		for i < len(t) && t[i].Before(from) {
			i++
		}
		j := i
		for j+1 < len(t) && !t[j+1].After(to) {
			j++
		}
		if j >= len(t) || j <= i {
			break
		}
		out = append(out, Busy(ticks[i], ticks[j], t[j].Sub(t[i]), cpus))
		i = j
	}
	return out
}

// Thread is a thread's share of a window [lo, hi]: its CPU time between
// its first and last observations inside the window (at times t, its
// CPU time ns in nanoseconds, in time order) over their span when that
// is at least MinThreadSpan or half the window, and over the window
// otherwise; 0 for a thread not observed in it.
func Thread(t []time.Time, ns []uint64, lo, hi time.Time) float64 {
	window := hi.Sub(lo)
	i, j := -1, -1
	for k := range t {
		if t[k].Before(lo) || t[k].After(hi) {
			continue
		}
		if i < 0 {
			i = k
		}
		j = k
	}
	if i < 0 || window <= 0 || ns[j] < ns[i] {
		return 0
	}
	cpu := time.Duration(ns[j] - ns[i])
	over := window
	if span := t[j].Sub(t[i]); span >= min(MinThreadSpan, window/2) {
		over = span
	}
	return min(cpu.Seconds()/over.Seconds(), 1)
}

// ThrottledShare is the share of a window of seconds whose CFS periods
// the proxy spent held at its quota, from the count of those periods,
// 0..1.
func ThrottledShare(periods int64, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return min(float64(periods)*CFSPeriod.Seconds()/seconds, 1)
}

// Load is what one role did over a window.
type Load struct {
	// Busy is the busy fraction of its CPUs, 0..1.
	Busy float64
	// Thread is its busiest thread's share of the window, 0..1.
	Thread float64
}

// of is the larger of a role's two figures: a thread has one CPU at most,
// so either reaching the threshold means the role had no more to give.
func (l Load) of() float64 { return max(l.Busy, l.Thread) }

// Proxy is what the proxy did and what it was allowed.
type Proxy struct {
	Load
	// CPUs is how many CPUs its cgroup is pinned to.
	CPUs int
	// Quota is its CPU quota in CPUs, 0 for none.
	Quota float64
	// Throttled is the share of the window's CFS periods in which the
	// kernel held it at its quota, 0..1 (ThrottledShare).
	Throttled float64
}

// Bound names the role that set the pace of a run, by the 90% rule,
// measured against what each role was allowed: the proxy if it was busy
// at least Threshold of what it was allowed in the window; otherwise the
// client or the origin if theirs were (the busier one, by the larger of
// its two figures); otherwise none.
//
// A role is allowed its CPUs: its CPUs busy at least Threshold of the
// window, or one of its threads (a thread has one CPU at most). A quota
// of q CPUs on the proxy (of its CPUs) allows it less: it also set the
// pace if one of its threads ran at least Threshold of min(q, 1) CPU, or
// if the kernel held it at its quota in at least Threshold of the
// window's CFS periods. Its CPUs' busy time is not divided by q: they
// run other work while the kernel holds the proxy, and the kernel's
// network work there is not charged to the quota.
func Bound(proxy Proxy, client, origin Load) results.Bound {
	p := proxy.of()
	if q := proxy.Quota; q > 0 && q < float64(proxy.CPUs) {
		p = max(p, proxy.Thread/min(q, 1), proxy.Throttled)
	}
	if p >= Threshold {
		return results.BoundProxy
	}
	c, o := client.of(), origin.of()
	switch {
	case c >= Threshold && c >= o:
		return results.BoundClient
	case o >= Threshold:
		return results.BoundOrigin
	}
	return results.BoundNone
}

package trend

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"bench/internal/text"
	"bench/report"
	"bench/report/changepoint"
	"bench/results"
)

// Change is a change point with its series, for the report's list.
type Change struct {
	Series *Series
	*Point
}

// Changes are the change points of every series, the newest first (by
// the session after the change), the largest step first within a
// session.
func (tr *Trends) Changes() []Change {
	var out []Change
	for i := range tr.Series {
		s := &tr.Series[i]
		for j := range s.Points {
			out = append(out, Change{s, &s.Points[j]})
		}
	}
	slices.SortStableFunc(out, func(a, b Change) int {
		return cmp.Or(b.After-a.After, report.CmpAbs(b.Step, a.Step))
	})
	return out
}

// NewRegressions are the changes for the worse past pct percent that
// fire the nightly's gate on the newest session of their machine
// (changepoint.Gate): a change fires once, on the first night its step
// is past the gate, and again only when it has grown by the gate once
// more, however its place moves or it drops out of a night's analysis
// and comes back. A session alone is never a change point
// (changepoint.MinSide), so a new level shows on the second session at
// it at the soonest.
func (tr *Trends) NewRegressions(pct float64) []Change {
	newest := tr.newest()
	var out []Change
	for i := range tr.Series {
		s := &tr.Series[i]
		if s.Sessions[len(s.Sessions)-1] != newest[s.Machine] {
			continue
		}
		fires := s.gate(pct).Fires(s.Runs, s.points(), tr.Options, nil)
		for j := range s.Points {
			if slices.ContainsFunc(fires, func(p changepoint.Point) bool { return p.At == s.Points[j].At }) {
				out = append(out, Change{s, &s.Points[j]})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Change) int {
		return cmp.Or(b.After-a.After, report.CmpAbs(b.Step, a.Step))
	})
	return out
}

// newest is the index of the newest session of each machine.
func (tr *Trends) newest() map[string]int {
	out := map[string]int{}
	for i, s := range tr.Sessions {
		out[s.Machine] = i
	}
	return out
}

// Undetectable are the series run by their machine's newest session
// whose noise and history cannot show a step of pct percent
// (Series.Detectable past it): a gate of that size cannot catch
// their regressions.
func (tr *Trends) Undetectable(pct float64) []*Series {
	newest := tr.newest()
	var out []*Series
	for i := range tr.Series {
		s := &tr.Series[i]
		if s.Sessions[len(s.Sessions)-1] == newest[s.Machine] && s.Detectable > pct {
			out = append(out, s)
		}
	}
	return out
}

// DescribeDetectable is a series' smallest step in a line: "Xeon, 2
// CPUs, http-ka-1k, nginx, throughput: 7.3%".
func (s *Series) DescribeDetectable() string {
	d := "no step yet: too few sessions at its level"
	if !math.IsInf(s.Detectable, 1) {
		// rounded up, so that a step past the gate never reads as the gate
		d = text.Fixed(math.Ceil(s.Detectable*10)/10, 1) + "%"
	}
	return fmt.Sprintf("%s, %s, %s, %s: %s", s.Machine, s.Scenario, s.Proxy, s.Metric, d)
}

// Describe is the change in a line: "Xeon, 2 CPUs, http-ka-1k, nginx,
// throughput: -6.1% (-7.9..-4.2%) from 2026-08-20-nightly to
// 2026-08-21-nightly".
func (c Change) Describe(tr *Trends) string {
	s := c.Series
	return fmt.Sprintf("%s, %s, %s, %s: %s (%s) from %s to %s", s.Machine, s.Scenario, s.Proxy, s.Metric,
		signedPct(c.Step), pctRange(c.Lo, c.Hi), tr.Sessions[c.Before].ID, tr.Sessions[c.After].ID)
}

// signedPct is a step in percent with its sign: "+6.1%", "−0.4%".
func signedPct(v float64) string { return fmt.Sprintf("%+.1f%%", v) }

// pctRange is an interval in percent: "-7.9..-4.2%".
func pctRange(lo, hi float64) string { return fmt.Sprintf("%+.1f..%+.1f%%", lo, hi) }

// Event is the changes of one column of a machine that began on
// one night: a step of the column itself (a new build, a new version)
// moves many of its series at once, and reads as one. A change whose
// new level begins a session either side of the night most of them
// begin on is the same event: the runs' noise moves where a series'
// point falls by one.
type Event struct {
	Machine, Proxy string
	// After is the index in Trends.Sessions of the session where the
	// new level of most of its changes begins.
	After   int
	Changes []Change // the largest step first
	// Of is how many series the column has on the machine by the
	// metrics of its changes.
	Of int
}

// eventReach is how many sessions of its machine apart a change's new
// level may begin from its event's and still be of it.
const eventReach = 1

// Events are the changes grouped into events, the newest first (by the
// session where the new level begins), then the one of the most series
// first, then the largest step.
func (tr *Trends) Events() []Event {
	// ord is each session's place among its machine's
	ord := make([]int, len(tr.Sessions))
	seen := map[string]int{}
	for i, s := range tr.Sessions {
		ord[i] = seen[s.Machine]
		seen[s.Machine]++
	}
	type key struct{ machine, proxy string }
	byColumn := map[key][]Change{}
	var keys []key
	for _, c := range tr.Changes() {
		k := key{c.Series.Machine, c.Series.Proxy}
		if byColumn[k] == nil {
			keys = append(keys, k)
		}
		byColumn[k] = append(byColumn[k], c)
	}
	var out []Event
	for _, k := range keys {
		changes := byColumn[k] // the newest first
		for len(changes) > 0 {
			// the night most of those left begin on (the newer of two as
			// many): a lone change found a few nights late is an event of
			// its own, and does not name its neighbours' night after its own
			count := map[int]int{}
			for _, c := range changes {
				count[c.After]++
			}
			at := changes[0].After
			for si, n := range count {
				if n > count[at] || (n == count[at] && si > at) {
					at = si
				}
			}
			ev := Event{Machine: k.machine, Proxy: k.proxy, After: at}
			var rest []Change
			for _, c := range changes {
				if d := ord[c.After] - ord[at]; d >= -eventReach && d <= eventReach {
					ev.Changes = append(ev.Changes, c)
				} else {
					rest = append(rest, c)
				}
			}
			slices.SortStableFunc(ev.Changes, func(a, b Change) int { return report.CmpAbs(b.Step, a.Step) })
			ev.Of = tr.seriesOf(ev)
			out = append(out, ev)
			changes = rest
		}
	}
	slices.SortStableFunc(out, func(a, b Event) int {
		return cmp.Or(b.After-a.After, len(b.Changes)-len(a.Changes), report.CmpAbs(b.Changes[0].Step, a.Changes[0].Step))
	})
	return out
}

// seriesOf is how many series ev's column has on its machine by the
// metrics of its changes.
func (tr *Trends) seriesOf(ev Event) int {
	n := 0
	for i := range tr.Series {
		s := &tr.Series[i]
		if s.Machine == ev.Machine && s.Proxy == ev.Proxy &&
			slices.ContainsFunc(ev.Changes, func(c Change) bool { return c.Series.Metric == s.Metric }) {
			n++
		}
	}
	return n
}

// Step is the median of the event's steps, in percent.
func (e Event) Step() float64 {
	return medianBy(e.Changes, func(c Change) float64 { return c.Step })
}

// medianBy is the median of f over xs.
func medianBy[T any](xs []T, f func(T) float64) float64 {
	v := make([]float64, len(xs))
	for i, x := range xs {
		v[i] = f(x)
	}
	return results.Median(v)
}

// Worse is how many of the event's changes are for the worse.
func (e Event) Worse() int {
	n := 0
	for _, c := range e.Changes {
		if c.Worse {
			n++
		}
	}
	return n
}

// OutlierNight is the series of a machine that stood out alone on
// one session: a bad night of the machine when it is many of them.
type OutlierNight struct {
	Session int // its index in Trends.Sessions
	Series  []OutlierOf
}

// OutlierOf is an outlier with its series.
type OutlierOf struct {
	Series *Series
	Off    float64
}

// Off is the median of the night's outliers' distances from their
// levels, in percent.
func (n OutlierNight) Off() float64 {
	return medianBy(n.Series, func(o OutlierOf) float64 { return o.Off })
}

// OutlierNights are the outliers of every series grouped by their
// session, the newest first, each in the series' order.
func (tr *Trends) OutlierNights() []OutlierNight {
	at := map[int]int{}
	var out []OutlierNight
	for i := range tr.Series {
		s := &tr.Series[i]
		for _, o := range s.Outliers {
			j, ok := at[o.Session]
			if !ok {
				j = len(out)
				at[o.Session] = j
				out = append(out, OutlierNight{Session: o.Session})
			}
			out[j].Series = append(out[j].Series, OutlierOf{s, o.Off})
		}
	}
	slices.SortStableFunc(out, func(a, b OutlierNight) int { return b.Session - a.Session })
	return out
}

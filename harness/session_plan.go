package harness

import (
	"fmt"
	"time"

	"bench/proxies"
	"bench/report/results"
	"bench/scenarios"
)

// RunSpec is one run of a session: a column measured under one scenario in
// one repetition.
type RunSpec struct {
	Index    int // 1..N, in the order the runs happen
	Rep      int // 1..reps
	Scenario scenarios.Scenario
	Column   proxies.Column
}

// Key identifies a run across a resumed session.
func (r RunSpec) Key() RunKey {
	return RunKey{Proxy: r.Column.Name, Mode: string(r.Scenario.Mode), Load: r.Scenario.Load.Name, Rep: r.Rep}
}

// RunKey is what makes a row of a session file unique.
type RunKey struct {
	Proxy, Mode, Load string
	Rep               int
}

// runsFor orders the runs of a session: repetition by repetition, each
// scenario in catalog order, and within it the columns that can serve its
// mode in their order rotated by one for each repetition, as the
// reference sessions did, so that no column always runs first after a
// scenario change. The columns that cannot serve a scenario's mode are
// left out and counted in skipped (once, not per repetition).
func runsFor(scs []scenarios.Scenario, cols []proxies.Column, reps int, supports func(proxies.Column, results.Mode) bool) (runs []RunSpec, skipped int) {
	for rep := 1; rep <= reps; rep++ {
		for _, sc := range scs {
			var able []proxies.Column
			for _, c := range cols {
				if supports(c, sc.Mode) {
					able = append(able, c)
				} else if rep == 1 {
					skipped++
				}
			}
			for i := range able {
				c := able[(i+rep-1)%len(able)]
				runs = append(runs, RunSpec{Index: len(runs) + 1, Rep: rep, Scenario: sc, Column: c})
			}
		}
	}
	return runs, skipped
}

// Estimate is the expected wall time of n runs of the given window and
// warm-up, with overhead for each run's start, readiness and stop.
func Estimate(n int, window, warmup, overhead time.Duration) time.Duration {
	return time.Duration(n) * (window + warmup + overhead)
}

// FormatDuration prints d for people: 45s, 12m05s, 3h04m.
func FormatDuration(d time.Duration) string {
	d = d.Round(time.Second)
	h, m, s := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	switch {
	case h > 0:
		return fmt.Sprintf("%dh%02dm", h, m)
	case m > 0:
		return fmt.Sprintf("%dm%02ds", m, s)
	default:
		return fmt.Sprintf("%ds", s)
	}
}

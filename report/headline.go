package report

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"

	"bench/internal/text"
	"bench/results"
)

// Headline is the answer of a row of a ranked table: its fastest column,
// how much faster than the runner-up and than no proxy, and whether the
// difference to the runner-up is real. A row of a fixed-rate load
// (results.FixedRate), where every healthy proxy delivers the rate
// asked, ranks by its p99 latency instead, lowest first, among the cells
// that failed no more than ErrorWarn of their exchanges; those that did
// are named apart.
type Headline struct {
	Label   string `json:"label"`
	Fastest string `json:"fastest"`
	// Metric is what the row ranks by: empty for its figure (higher is
	// better), MetricP99 at a fixed rate (lower is better); Value the
	// fastest's p99 there, in milliseconds.
	Metric string  `json:"metric,omitempty"`
	Value  float64 `json:"value,omitempty"`
	// RunnerUp is the next column by median, empty where the row has no
	// other proxy; Ratio the fastest's median over its, Err the ratio's
	// uncertainty from the two cells' ranges.
	RunnerUp string  `json:"runner_up,omitempty"`
	Ratio    float64 `json:"ratio,omitempty"`
	Err      float64 `json:"err,omitempty"`
	// Real: the two can be told apart, by Test (TestU or TestRange), as
	// bench compare decides, and the ratio's interval excludes no change
	// (Ratio ± Err does not reach 1); Wide where the test told them
	// apart but the interval reaches 1. P is the U test's.
	Real bool `json:"real"`
	Wide bool `json:"wide,omitempty"`
	// Level: the row has a runner-up and the two cannot be told apart
	// (not Real): the headline names no leader, it says they are level
	// (or, on one run a side, not told apart).
	Level bool `json:"level,omitempty"`
	// NeverSpliced: the fastest is a splicing column that never spliced
	// in the row (†): its figure is a copying proxy's.
	NeverSpliced bool     `json:"never_spliced,omitempty"`
	Test         string   `json:"test,omitempty"`
	P            *float64 `json:"p,omitempty"`
	// Baseline is no proxy's column, empty where the row has none; the
	// fastest's median over its, and the ratio's uncertainty.
	Baseline     string  `json:"baseline,omitempty"`
	BaseRatio    float64 `json:"base_ratio,omitempty"`
	BaseRatioErr float64 `json:"base_ratio_err,omitempty"`
	// Beyond says why the fastest beat no proxy, where it did
	// (beyondBaseline); empty where it did not.
	Beyond string `json:"beyond_baseline,omitempty"`
	// FastestFailed is the fastest's failure mark where some of its
	// exchanges failed (FailureText): "!0.3%".
	FastestFailed string `json:"fastest_failed,omitempty"`
	// Failing are the cells left out of the row's ranking, having failed
	// more of their exchanges than the fewest any proxy's cell did (at a
	// fixed rate, also those beyond ErrorWarn): "squid !62%".
	Failing []string `json:"failing,omitempty"`
}

// Headlined reports whether t's rows get headlines: a ranked table whose
// columns are the proxies of one machine (not a tunnel's directions, nor
// the combined layout's averages over machines).
func Headlined(t Table) bool {
	return Ranked(t) && t.Family != FamTunnel && t.Family != FamHandshake && t.Family != famCombined
}

// rowLoad is the load of a row's runs, empty where none of its cells has
// one.
func rowLoad(r TableRow) string {
	for _, c := range r.Cells {
		if len(c.IDs) > 0 {
			return c.IDs[0].Load
		}
	}
	return ""
}

// ranking is what a row's headline ranks its cells by.
type ranking int

const (
	byFigure ranking = iota // the cells' figures, higher is better
	byP99                   // at a fixed rate, the cells' p99, lower is better
)

// rankingOf is the ranking of the rows of load.
func rankingOf(load string) ranking {
	if results.FixedRate(load) {
		return byP99
	}
	return byFigure
}

// rankedBy is what a headline ranks a cell by, as rank says: its figure
// or its p99 (its median and its runs'); ok false for a cell that takes
// no part.
func rankedBy(c Cell, rank ranking) (m float64, runs []float64, ok bool) {
	if rank == byP99 {
		if c.P99 == nil || len(c.p99s) == 0 {
			return 0, nil, false
		}
		return *c.P99, c.p99s, true
	}
	if c.Median == nil || len(c.Runs) == 0 {
		return 0, nil, false
	}
	return *c.Median, c.Runs, true
}

// ranked is a cell as a headline ranks it: its figure (or p99) and its
// runs'.
type ranked struct {
	c    Cell
	m    float64
	runs []float64
}

// rowCandidates are the cells of row r as a headline ranks them by rank:
// the proxies' that failed the fewest of their exchanges, fastest first
// (the rule of the marks, markBest: a cell leads only over cells that
// failed no less), no proxy's, and the others by name and share (at a
// fixed rate, those beyond ErrorWarn too).
func rowCandidates(r TableRow, rank ranking) (proxies []ranked, base *ranked, failing []string) {
	var all []ranked
	least := math.Inf(1) // the fewest of their exchanges a proxy's cell failed
	for _, c := range r.Cells {
		m, runs, ok := rankedBy(c, rank)
		switch {
		case rank == byP99 && Erring(c):
			failing = append(failing, c.Proxy+" "+FailureText(c))
		case !ok:
		case c.Group == results.Baseline:
			base = &ranked{c, m, runs}
		default:
			all = append(all, ranked{c, m, runs})
			least = min(least, failedShare(c))
		}
	}
	for _, p := range all {
		if failedShare(p.c) > least {
			failing = append(failing, p.c.Proxy+" "+FailureText(p.c))
			continue
		}
		proxies = append(proxies, p)
	}
	slices.SortStableFunc(proxies, func(a, b ranked) int {
		if rank == byP99 {
			a, b = b, a // the lowest latency first
		}
		return cmp.Compare(b.m, a.m)
	})
	return proxies, base, failing
}

// Headlines are the headlines of t's rows that have a fastest proxy and
// something to set it against.
func Headlines(t Table) []Headline {
	if !Headlined(t) {
		return nil
	}
	var out []Headline
	for _, r := range t.Rows {
		load := rowLoad(r)
		rank := rankingOf(load)
		proxies, base, failing := rowCandidates(r, rank)
		if len(proxies) == 0 || (len(proxies) == 1 && base == nil && len(failing) == 0) {
			continue
		}
		first := proxies[0]
		h := Headline{Label: r.Label, Fastest: first.c.Proxy, Failing: failing, NeverSpliced: first.c.NoSplice,
			FastestFailed: FailureText(first.c)}
		if rank == byP99 {
			h.Metric, h.Value = MetricP99, first.m
		}
		if len(proxies) > 1 {
			next := proxies[1]
			h.RunnerUp = next.c.Proxy
			h.Ratio, h.Err = ratio(first.m, first.runs, next.m, next.runs)
			h.Real, h.Test, h.P = Decide(next.runs, first.runs)
			if h.Real && math.Abs(h.Ratio-1) <= h.Err {
				h.Real, h.Wide = false, true
			}
			h.Level = !h.Real
		}
		if base != nil {
			h.Baseline = base.c.Proxy
			h.BaseRatio, h.BaseRatioErr = ratio(first.m, first.runs, base.m, base.runs)
			if better := h.BaseRatio > 1 != (rank == byP99); better && h.BaseRatio != 1 {
				h.Beyond = beyondBaseline(load, base.c, h.BaseRatio, h.BaseRatioErr)
			}
		}
		out = append(out, h)
	}
	return out
}

// beyondBaseline says why a proxy beat no proxy by q ± e in a row of
// load, where base is no proxy's cell: within the ±, no change; no
// proxy's runs paced by the client or the origin (they share CPUs, and
// without a proxy they had the more work); a load that opens a
// connection for each exchange, which a proxy keeps open to the origin;
// else what the files do not explain.
func beyondBaseline(load string, base Cell, q, e float64) string {
	switch {
	case math.Abs(q-1) <= e:
		return "faster than no proxy within the ±: no change"
	case base.pace.Elsewhere():
		return "faster than no proxy: the " + string(base.pace) + " set the pace of no proxy's runs"
	case strings.HasPrefix(load, "close"):
		return "faster than no proxy: it keeps its connections to the origin open, where without it each exchange opens one"
	}
	return "faster than no proxy beyond the ±, which neither the runs' pace nor the load explains"
}

// ratio is a over b, the medians of the runs ra and rb, and its
// uncertainty as hyperfine gives it, with half of each cell's range in
// place of the standard deviation.
func ratio(a float64, ra []float64, b float64, rb []float64) (float64, float64) {
	if b == 0 {
		return math.Inf(1), 0
	}
	half := func(runs []float64, m float64) float64 {
		if m == 0 {
			return 0
		}
		return (slices.Max(runs) - slices.Min(runs)) / 2 / m
	}
	q := a / b
	return q, q * math.Hypot(half(ra, a), half(rb, b))
}

// String is the headline as the page and the markdown print it:
// "ka-1k, k req/s: nginx: 1.23 ± 0.05 times haproxy (real, range),
// 0.81 ± 0.02 times no proxy"; where the two cannot be told apart, no
// leader: "ka-1k, k req/s: nginx and haproxy level: 1.00 ± 0.05 (within
// noise, range), nginx 0.81 ± 0.02 times no proxy"; at
// a fixed rate "mix-http-3k, p99 at its fixed rate: nginx !0.2%: 4.10
// ms, 0.52 ± 0.10 times haproxy's (real, range); left out, having failed
// more of their exchanges: squid !62%". A fastest that never spliced
// says so.
func (h Headline) String() string {
	times := func(q, e float64, of string) string {
		s := ratioText(q, e)
		if h.Metric != "" {
			of += "'s"
		}
		return s + " times " + of
	}
	label, parts := h.Label, []string(nil)
	if h.Metric != "" {
		label += ", " + h.Metric + " at its fixed rate"
		parts = append(parts, Millis(h.Value)+" ms")
	}
	if h.RunnerUp != "" {
		v := "within noise, " + h.Test
		switch {
		case h.Test == TestOneRun:
			v = "one run: no spread to tell it from noise"
		case h.Real:
			v = "real, " + h.Test
		case h.Wide:
			v = "within noise: the ± reaches no change, though " + h.Test + " tells them apart"
		}
		if h.P != nil {
			v += " p=" + strconv.FormatFloat(*h.P, 'f', 3, 64)
		}
		r := times(h.Ratio, h.Err, h.RunnerUp)
		if h.Level && h.Test != TestOneRun { // the two named already: the ratio alone
			r = ratioText(h.Ratio, h.Err)
		}
		parts = append(parts, r+" ("+v+")")
	}
	who := h.Fastest
	if h.FastestFailed != "" {
		who += " " + h.FastestFailed
	}
	if h.NeverSpliced {
		who += " (" + neverSplicedLead + ")"
	}
	if h.Baseline != "" {
		b := times(h.BaseRatio, h.BaseRatioErr, h.Baseline)
		if h.Beyond != "" {
			b += " (" + h.Beyond + ")"
		}
		if h.Level {
			b = who + " " + b
		}
		parts = append(parts, b)
	}
	switch {
	case h.Level && h.Test == TestOneRun:
		who = h.Fastest + " and " + h.RunnerUp + ", not told apart"
	case h.Level:
		who = h.Fastest + " and " + h.RunnerUp + " level"
	}
	s := label + ": " + who
	if len(parts) > 0 {
		s += ": " + strings.Join(parts, ", ")
	}
	if len(h.Failing) > 0 {
		s += "; left out, having failed more of their exchanges: " + strings.Join(h.Failing, ", ")
	}
	return s
}

// neverSplicedLead says of a row's fastest that it never spliced (†).
const neverSplicedLead = "never spliced: its lead is a copying proxy's"

// HeadlineNote says how the headlines read, under them.
const HeadlineNote = "Fastest of each row by median, of the cells that failed the fewest of their exchanges (none, where one failed none) " +
	"(at a fixed rate, the lowest p99, where every healthy proxy delivers the rate asked, of those that failed no more than 1% too); ± from the two cells' ranges (slowest to fastest run); " +
	"real to the runner-up as bench compare decides it (U test where there are runs enough, " +
	"else range: real when their runs' ranges do not overlap; nothing where a cell has one run) and only where the ± does not reach no change, " +
	"else within noise, and the two level: no leader."

// ratioText is a ratio q and its uncertainty e as a headline prints them:
// "1.23 ± 0.05", the ± left out where it rounds to nothing.
func ratioText(q, e float64) string {
	s := text.Fixed(q, 2)
	if e >= 0.005 {
		s += " ± " + text.Fixed(e, 2)
	}
	return s
}

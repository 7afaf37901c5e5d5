package changepoint

import (
	"math"
	"slices"

	"bench/results"
)

// The gate of a nightly (bench trend --fail-new) over the life of a
// change, the sessions that stand out alone, and the smallest step a
// series can show.

// FollowSessions is how far, in sessions, a change's place may move from
// one night's analysis to the next and still be the same change: a
// marginal split moves by a session or two as sessions are added, and a
// point that dropped out for a night comes back near where it was.
const FollowSessions = 4

// Gate is the rule of a nightly's gate: a change for the worse fires
// once, on the first night its step is past Percent (with its interval
// beyond Options.MinStep, as every point Find keeps, and past it without
// the newest session too where the change has more sessions after it
// than MinSide), and again only when it has grown by Percent past the
// most it showed before. Whether it fired before is read
// from the series itself: the analyses of the series without its newest
// sessions, one night at a time, back to the change's first sessions,
// so that the gate needs no record beside the history.
type Gate struct {
	// Percent is the gate: a step for the worse past it, in percent.
	Percent float64
	// Lower says lower is better: a latency, where a step up is for
	// the worse.
	Lower bool
}

// Worse reports whether p is a step for the worse.
func (g Gate) Worse(p Point) bool { return (p.Step < 0) != g.Lower }

// step is the size of p's step for the worse, in percent, p a point of
// the analysis of runs (all of its points, pts): 0 for a step for the
// better. The newest session alone never carries a step past the gate:
// where the sessions after the change run to the newest and are more
// than MinSide, the step is also measured without the newest, and the
// smaller counts.
func (g Gate) step(p Point, pts []Point, runs [][]float64) float64 {
	if !g.Worse(p) {
		return 0
	}
	step := math.Abs(p.Step)
	last := !slices.ContainsFunc(pts, func(q Point) bool { return q.At > p.At })
	if n := len(runs) - p.At; last && n > MinSide {
		after := make([]float64, 0, n-1)
		for _, r := range runs[p.At : len(runs)-1] {
			after = append(after, results.Median(r))
		}
		without := pct(results.Median(after), p.From)
		if (without < 0) != (p.Step < 0) {
			return 0 // without the newest, no step that way
		}
		step = min(step, math.Abs(without))
	}
	return step
}

// Fires are the points of now, the change points Analyse gives of runs
// (a series' sessions, the newest last), that fire the gate on the
// night of the newest session: in force, for the worse past the gate,
// and on no night before since the change's first sessions past the
// gate (a first alarm) or past tonight's step less the gate (another):
// a night's point of the change is one of its analysis of the same sign
// within FollowSessions of it.
//
// memo keeps the analyses of the nights before by their count of
// sessions, for a caller that runs the gate night after night; nil for
// none.
func (g Gate) Fires(runs [][]float64, now []Point, opt Options, memo Memo) []Point {
	opt = opt.WithDefaults()
	if memo == nil {
		memo = Memo{}
	}
	var out []Point
	for _, p := range now {
		step := g.step(p, now, runs)
		if step <= g.Percent || !p.InForce {
			continue
		}
		// the most a night before may have shown of it: under the gate
		// for a first alarm, the gate less than tonight's for another
		bound := max(g.Percent, step-g.Percent)
		fire := true
		// a night of n sessions could show a point at n-MinSide at the
		// latest
		for j := 1; fire && len(runs)-j >= max(p.At-FollowSessions+MinSide, 2*MinSide); j++ {
			n := len(runs) - j
			pts, ok := memo[n]
			if !ok {
				pts, _ = Analyse(runs[:n], opt)
				memo[n] = pts
			}
			for _, q := range pts {
				if g.Worse(q) && abs(q.At-p.At) <= FollowSessions && g.step(q, pts, runs[:n]) > bound {
					fire = false
				}
			}
		}
		if fire {
			out = append(out, p)
		}
	}
	return out
}

// Memo is the analyses (Analyse) of a series' first n sessions, by n.
type Memo map[int][]Point

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// Analyse finds the change points of a series of sessions (Find) and
// its outliers (Outliers), the points found again without the outliers,
// so that one bad night pulls no split towards it: the points' At and
// the outliers are indexes of runs.
func Analyse(runs [][]float64, opt Options) (points []Point, outliers []int) {
	opt = opt.WithDefaults()
	points = Find(runs, opt)
	medians := make([]float64, len(runs))
	for i, r := range runs {
		medians[i] = results.Median(r)
	}
	outliers = Outliers(medians, points, opt.MinStep)
	if len(outliers) == 0 {
		return points, nil
	}
	var keep []int // the indexes of the sessions kept
	var kept [][]float64
	for i, r := range runs {
		if !slices.Contains(outliers, i) {
			keep = append(keep, i)
			kept = append(kept, r)
		}
	}
	points = Find(kept, opt)
	for i := range points {
		points[i].At = keep[points[i].At]
	}
	return points, outliers
}

// OutlierSpread is how far, in robust standard deviations of its
// segment's sessions (1.4826 times their median absolute deviation), a
// session stands from its segment's median to be an outlier: under
// normal noise a session is as far by chance once in 1.7 million.
const OutlierSpread = 5

// Outliers are the indexes of the sessions that stand out alone from the
// segment they lie in between the change points (their At): farther
// from the segment's median than OutlierSpread robust deviations of its
// sessions, and by more than minStep percent. A segment of fewer than
// 2*MinSide+1 sessions has none: it has no spread to stand out from.
// One bad night is such a session, never a change (MinSide).
func Outliers(medians []float64, points []Point, minStep float64) []int {
	at := make([]int, len(points))
	for i, p := range points {
		at[i] = p.At
	}
	slices.Sort(at)
	var out []int
	for _, b := range segments(at, len(medians)) {
		seg := medians[b[0]:b[1]]
		if len(seg) < 2*MinSide+1 {
			continue
		}
		med := results.Median(seg)
		dev := make([]float64, len(seg))
		for i, v := range seg {
			dev[i] = math.Abs(v - med)
		}
		spread := 1.4826 * results.Median(dev)
		for i, v := range seg {
			if math.Abs(v-med) > OutlierSpread*spread && math.Abs(pct(v, med)) > minStep {
				out = append(out, b[0]+i)
			}
		}
	}
	return out
}

// Detectable is the smallest step, in percent, the series can show
// after its last change point (points, their At): a step halfway
// through its newest segment whose interval would just clear
// Options.MinStep, from the spread of the segment's sessions' medians
// (the standard error of a median of n of them, 1.2533 sd/√n, each
// half's, at Options.Confidence). A step the size of a gate the series
// cannot show is one its nightly cannot catch, however real; +Inf for a
// segment of fewer than 2*MinSide sessions.
func Detectable(medians []float64, points []Point, opt Options) float64 {
	opt = opt.WithDefaults()
	start := 0
	for _, p := range points {
		start = max(start, p.At)
	}
	seg := medians[start:]
	n := len(seg)
	if n < 2*MinSide {
		return math.Inf(1)
	}
	med := results.Median(seg)
	dev := make([]float64, n)
	for i, v := range seg {
		dev[i] = math.Abs(v - med)
	}
	sd := 1.4826 * results.Median(dev) / math.Abs(med) * 100
	half := float64(n) / 2
	se := 1.2533 * sd / math.Sqrt(half) * math.Sqrt2 // the two halves' difference
	z := math.Sqrt2 * math.Erfinv(opt.Confidence)
	return max(opt.MinStep, 0) + z*se
}

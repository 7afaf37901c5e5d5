package changepoint

import (
	"math"
	"math/rand/v2"
	"slices"

	"bench/results"
)

// Point is a change point of a series of sessions, measured.
type Point struct {
	// At is the index of the first session after the change; the
	// session before it is At-1.
	At int
	// Step is the median of the segment after the change over that of
	// the segment before it, less one, in percent: each segment's median
	// of its sessions' medians.
	Step float64
	// From and To are the medians of the segments before and after.
	From, To float64
	// Lo and Hi bound the step's interval, in percent, at
	// Options.Confidence: the percentiles of the step over resamples of
	// the two segments (Interval).
	Lo, Hi float64
	// InForce says whether the newest segment's median is still nearer
	// the level after the step than the level before it.
	InForce bool
	// Provisional says the point is the newest sessions' (newestRun),
	// too few yet for E-Divisive to find.
	Provisional bool
	// Noise is the series' run-to-run noise, in percent (Noise): what
	// tells one session's runs apart, for the reader; a long history
	// shows steps well inside it.
	Noise float64
	// MinStep is the least step kept (Options.MinStep), which the
	// step's whole interval passes.
	MinStep float64
}

// Beyond reports whether the step's whole interval lies beyond the
// least step kept, on one side: the levels' own uncertainty, over the
// sessions and their runs on either side, does not reach across it.
func (p Point) Beyond() bool { return p.Lo >= p.MinStep || p.Hi <= -p.MinStep }

// Find finds the change points of a series of sessions, given the runs of
// each in time order (a session without runs has no place in it): E-Divisive
// (Divisive) on the sessions' medians, and the newest sessions when they
// lie beyond every session before them (newestRun: a Provisional point,
// which E-Divisive finds too once more sessions follow), each point then measured
// between the segments on either side of it (Point). It keeps the points
// whose whole interval lies beyond the run-to-run noise (Point.Beyond,
// Noise): a split the permutation test passes but whose step may be no
// more than what tells the runs of one session apart is not a change
// anyone can act on.
func Find(runs [][]float64, opt Options) []Point {
	opt = opt.WithDefaults()
	medians := make([]float64, len(runs))
	for i, r := range runs {
		medians[i] = results.Median(r)
	}
	at := Divisive(medians, opt)
	provisional := -1
	if k := newestRun(medians, at, opt.PValue); k > 0 {
		provisional = len(medians) - k
		at = append(at, provisional)
	}
	bounds := segments(at, len(runs))
	newest := results.Median(medians[bounds[len(bounds)-1][0]:])
	rng := rand.New(rand.NewPCG(opt.Draws, 0x626f6f74)) // "boot"
	noise := Noise(runs)
	var out []Point
	for i, a := range at {
		before, after := bounds[i], bounds[i+1]
		b, f := results.Median(medians[before[0]:before[1]]), results.Median(medians[after[0]:after[1]])
		p := Point{At: a, Step: pct(f, b), From: b, To: f, Noise: noise, MinStep: max(opt.MinStep, 0), Provisional: a == provisional}
		p.Lo, p.Hi = interval(runs[before[0]:before[1]], runs[after[0]:after[1]], opt, rng)
		p.InForce = math.Abs(newest-f) < math.Abs(newest-b)
		if p.Beyond() {
			out = append(out, p)
		}
	}
	return out
}

// newestRun is the count of the newest sessions that lie, each of them,
// beyond every session of the segment before them, on one side, where
// that is significant at level: under no change, every order of the
// segment's values is as likely, and the chance that the newest k are
// its k lowest or its k highest is 2/C(n, k). It finds the change that
// E-Divisive cannot yet, with a few sessions after it: two sessions
// beyond all of 64 or more pass at 0.1%. One session never passes at
// such a level, however far it is: of a history of hundreds of series,
// some series' newest session is its most extreme by chance every
// night. The count is the largest that passes; 0 for none.
func newestRun(medians []float64, points []int, level float64) int {
	start := 0
	if len(points) > 0 {
		start = slices.Max(points)
	}
	seg := medians[start:]
	n := len(seg)
	found := 0
	for k := MinSide; k <= n/2; k++ {
		head, tail := seg[:n-k], seg[n-k:]
		beyond := slices.Max(tail) < slices.Min(head) || slices.Min(tail) > slices.Max(head)
		if beyond && 2/binomial(n, k) <= level {
			found = k
		}
	}
	return found
}

// binomial is n choose k.
func binomial(n, k int) float64 {
	c := 1.0
	for i := 1; i <= k; i++ {
		c = c * float64(n-k+i) / float64(i)
	}
	return c
}

// Noise is the run-to-run noise of a series of sessions, in percent: the
// median over its sessions of half the range of a session's runs over
// their median, the ± bench compare gives a change between two sessions.
func Noise(runs [][]float64) float64 {
	var half []float64
	for _, r := range runs {
		if len(r) < 2 {
			continue
		}
		m := results.Median(r)
		half = append(half, (slices.Max(r)-slices.Min(r))/2/math.Abs(m)*100)
	}
	if len(half) == 0 {
		return 0
	}
	return results.Median(half)
}

// pct is after over before, less one, in percent.
func pct(after, before float64) float64 { return (after/before - 1) * 100 }

// interval is the interval of the step from the sessions before to those
// after, in percent, at opt.Confidence: the percentiles of the step over
// opt.Resamples resamples of each side by the two-stage bootstrap of
// nested data (Davison and Hinkley, "Bootstrap Methods and their
// Application", 1997, section 3.8), which keeps both of its spreads:
// sessions drawn with replacement, then runs of each session drawn,
// the side's figure the median of the runs drawn. A side of one session
// is thus the spread of its runs.
func interval(before, after [][]float64, opt Options, rng *rand.Rand) (lo, hi float64) {
	steps := make([]float64, opt.Resamples)
	b, a := newPool(before), newPool(after)
	for k := range steps {
		from := b.draw(rng)
		steps[k] = pct(a.draw(rng), from)
	}
	slices.Sort(steps)
	tail := (1 - opt.Confidence) / 2
	return quantile(steps, tail), quantile(steps, 1-tail)
}

// pool is a side's runs for the bootstrap: each run by its rank among
// the side's values, so that the median of a resample is found by
// counting the ranks drawn rather than sorting the values.
type pool struct {
	sorted   []float64 // the side's values
	sessions [][]int   // each session's runs, by rank in sorted
	count    []int     // room to count a resample's ranks
	drawn    int       // the runs a resample draws
}

func newPool(side [][]float64) *pool {
	p := &pool{}
	for _, s := range side {
		p.sorted = append(p.sorted, s...)
	}
	slices.Sort(p.sorted)
	used := make([]int, len(p.sorted)) // ties: each value its own rank
	for _, s := range side {
		ranks := make([]int, len(s))
		for i, v := range s {
			r, _ := slices.BinarySearch(p.sorted, v)
			for used[r] > 0 && r+1 < len(p.sorted) && p.sorted[r+1] == v {
				r++
			}
			used[r]++
			ranks[i] = r
		}
		p.sessions = append(p.sessions, ranks)
		p.drawn += len(s)
	}
	p.count = make([]int, len(p.sorted))
	return p
}

// draw is the median of one resample: as many sessions as the side's
// drawn with replacement, of each as many runs as it has drawn with
// replacement.
func (p *pool) draw(rng *rand.Rand) float64 {
	clear(p.count)
	n := 0
	for range p.sessions {
		s := p.sessions[rng.IntN(len(p.sessions))]
		for range s {
			p.count[s[rng.IntN(len(s))]]++
			n++
		}
	}
	// the values at places (n-1)/2 and n/2 of the resample, sorted
	lo, hi := (n-1)/2, n/2
	var vlo float64
	seen := 0
	for r, c := range p.count {
		if c == 0 {
			continue
		}
		if seen <= lo && lo < seen+c {
			vlo = p.sorted[r]
		}
		if seen <= hi && hi < seen+c {
			return (vlo + p.sorted[r]) / 2
		}
		seen += c
	}
	return math.NaN()
}

// quantile is the q-quantile of sorted x, interpolated between its
// neighbours (the median of an even count the mean of the middle two).
func quantile(sorted []float64, q float64) float64 {
	pos := q * float64(len(sorted)-1)
	i := int(math.Floor(pos))
	if i >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (pos-float64(i))*(sorted[i+1]-sorted[i])
}

// Package changepoint finds where the level of a series moved for good:
// E-Divisive means (Matteson and James, "A Nonparametric Approach for
// Multiple Change Point Analysis of Multivariate Data", JASA 2014) as
// MongoDB's CI runs it on its performance results (Daly et al., "The Use
// of Change Point Detection to Identify Software Performance Regressions
// in a Continuous Integration System", ICPE 2020; their implementation is
// github.com/mongodb/signal-processing-algorithms, whose tests this
// package's port). Each change point found is then measured: the step
// between the segments on either side, its interval from their spread,
// and whether the newest segment is still on its far side.
//
// The package is pure: values in, change points out, every random draw
// from a generator started at Options.Draws, so that a series gives the
// same answer every time.
package changepoint

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
)

// Options are the parameters of the detection.
type Options struct {
	// PValue is the permutation test's level: a candidate is a change
	// point when no more than this share of the permuted series split
	// as well as the series does (DefaultPValue when 0); and the level of
	// Find's test of the newest sessions.
	PValue float64
	// Permutations is the count of permuted series a candidate is tested
	// against (DefaultPermutations when 0).
	Permutations int
	// Confidence is the level of a step's interval (DefaultConfidence
	// when 0).
	Confidence float64
	// Resamples is the count of bootstrap resamples a step's interval is
	// drawn from (DefaultResamples when 0).
	Resamples int
	// MinStep is the least step, in percent, a change point is kept
	// for: its whole interval must lie beyond it (Point.Beyond);
	// DefaultMinStep when 0, none when negative.
	MinStep float64
	// Draws is where the generator of the permutations and the
	// resamples starts: one value, one answer.
	Draws uint64
}

// The defaults of Options.
const (
	// DefaultPValue is a tenth of the level the reference
	// implementation's tests use (1%): a history holds hundreds of
	// series, every cell by two metrics, and at 1% a few of them would
	// split by chance on any night.
	DefaultPValue = 0.001
	// DefaultPermutations is the fewest that can pass a split at
	// DefaultPValue: one permuted series in a thousand may split as
	// well. (The permutations stop as soon as the test has failed, so
	// a series without a change is rejected after a few.)
	DefaultPermutations = 1000
	// DefaultConfidence is a step's interval's level: 95%.
	DefaultConfidence = 0.95
	// DefaultResamples is enough resamples for the 2.5th and 97.5th
	// percentiles of a bootstrap to settle to a tenth of a percent.
	DefaultResamples = 1000
	// DefaultMinStep is the spread of the runs of the reference
	// session's quietest cells (docs/trend.md): 12 of its
	// 168 cells spread 2% or less (half the range of their runs over
	// their median; the median cell 9.6%), so a step under 2% is one
	// that even those cells' own runs within a session differ by, and
	// only the longest histories could show; past it, whether a step is
	// real is for the levels' own uncertainty to say.
	DefaultMinStep = 2.0
	// MinSide is the fewest sessions on each side of a split: one
	// session that stands out is an outlier (Outliers), never a
	// change.
	MinSide = 2
	// tolerance is the relative difference under which a permuted
	// series' statistic counts as equal to the series': the same
	// values summed in another order differ by rounding (3e-11 seen).
	tolerance = 1e-9
)

// WithDefaults is o with the defaults in place of its zeros.
func (o Options) WithDefaults() Options {
	if o.PValue == 0 {
		o.PValue = DefaultPValue
	}
	if o.Permutations == 0 {
		o.Permutations = DefaultPermutations
	}
	if o.Confidence == 0 {
		o.Confidence = DefaultConfidence
	}
	if o.Resamples == 0 {
		o.Resamples = DefaultResamples
	}
	if o.MinStep == 0 {
		o.MinStep = DefaultMinStep
	}
	return o
}

// Divisive returns the change points of series in ascending order, each
// the index of the first value after its change: E-Divisive means. The
// series is split where the energy statistic of the two sides, weighted
// by their sizes, is greatest, with MinSide values a side at the least;
// the split is kept when the permutation test finds it significant
// (p = (better+1)/(Permutations+1) <= PValue, better the count of
// shuffles of the segments that split as well, up to a relative
// tolerance for rounding), and the segments are split again until no
// split is.
func Divisive(series []float64, opt Options) []int {
	opt = opt.WithDefaults()
	rng := rand.New(rand.NewPCG(opt.Draws, 0x65646976)) // "ediv"
	var points []int
	best := map[[2]int]split{} // the best split of each segment, once computed
	stats := make([]float64, len(series))
	// the most permuted series that may split as well for the candidate
	// to pass: (better+1)/(permutations+1) <= pvalue
	allowed := int(math.Floor(opt.PValue*float64(opt.Permutations+1)+1e-9)) - 1
	for {
		bounds := segments(points, len(series))
		cand := split{at: -1}
		for _, b := range bounds {
			s, ok := best[b]
			if !ok {
				s = bestSplit(series[b[0]:b[1]], stats)
				s.at += b[0]
				best[b] = s
			}
			if s.t > cand.t || cand.at < 0 {
				cand = s
			}
		}
		if cand.at <= 0 || cand.t <= 0 {
			return points
		}
		segs := make([]ranked, len(bounds))
		for i, b := range bounds {
			segs[i] = newRanked(series[b[0]:b[1]])
		}
		better := 0
		for range opt.Permutations {
			if splitsAsWell(segs, cand.t, stats, rng) {
				better++
				if better > allowed {
					break // the test has failed whatever the rest do
				}
			}
		}
		if better > allowed {
			return points
		}
		points = append(points, cand.at)
		slices.Sort(points)
	}
}

// split is a segment's best split: before index at, with statistic t.
type split struct {
	at int
	t  float64
}

// segments are the bounds [start, end) of the segments the points cut a
// series of n values into.
func segments(points []int, n int) [][2]int {
	var out [][2]int
	start := 0
	for _, p := range points {
		out = append(out, [2]int{start, p})
		start = p
	}
	return append(out, [2]int{start, n})
}

// ranked is a segment with each value's rank and distances to the
// others (ranks), and room for a shuffle of them.
type ranked struct {
	x, total, shuffledX, shuffledTotal []float64
	rank, shuffledRank                 []int
	fenwick                            fenwick
}

func newRanked(x []float64) ranked {
	rank, total := ranks(x)
	n := len(x)
	return ranked{x: x, total: total, rank: rank,
		shuffledX: make([]float64, n), shuffledTotal: make([]float64, n), shuffledRank: make([]int, n),
		fenwick: fenwick{make([]int, n+1), make([]float64, n+1)}}
}

// splitsAsWell shuffles each segment and reports whether one of the
// shuffled segments has a split whose statistic is t or more, up to the
// tolerance. A shuffle moves each value with its rank and its distances
// to the segment's others, which are the segment's whatever its order.
func splitsAsWell(segs []ranked, t float64, stats []float64, rng *rand.Rand) bool {
	for _, s := range segs {
		n := len(s.x)
		if n < 2*MinSide {
			continue
		}
		x, rank, total := s.shuffledX, s.shuffledRank, s.shuffledTotal
		copy(x, s.x)
		copy(rank, s.rank)
		copy(total, s.total)
		rng.Shuffle(n, func(i, j int) {
			x[i], x[j] = x[j], x[i]
			rank[i], rank[j] = rank[j], rank[i]
			total[i], total[j] = total[j], total[i]
		})
		statisticsRanked(x, rank, total, stats[:n], s.fenwick)
		if bestOf(stats[:n]).t >= t*(1-tolerance) {
			return true
		}
	}
	return false
}

// bestSplit is the split of x whose statistic is greatest, the first of
// equals, with MinSide values on each side; stats is room for len(x)
// statistics. A segment too short to split has none (at 0).
func bestSplit(x []float64, stats []float64) split {
	if len(x) < 2*MinSide {
		return split{}
	}
	statistics(x, stats[:len(x)])
	return bestOf(stats[:len(x)])
}

// bestOf is the greatest of the statistics of the splits with MinSide
// values on each side, the first of equals.
func bestOf(stats []float64) split {
	best := split{}
	for tau := MinSide; tau <= len(stats)-MinSide; tau++ {
		if t := stats[tau]; t > best.t {
			best = split{tau, t}
		}
	}
	return best
}

// statistics writes to out[tau] the statistic of splitting x before tau:
// the energy distance of X = x[:tau] and Y = x[tau:] weighted by their
// sizes, |X||Y|/(|X|+|Y|) * (2 E|X-Y| - E|X-X'| - E|Y-Y'|), the means
// over all pairs (statisticsRanked).
func statistics(x []float64, out []float64) {
	rank, total := ranks(x)
	statisticsRanked(x, rank, total, out, fenwick{make([]int, len(x)+1), make([]float64, len(x)+1)})
}

// ranks are x[i]'s place among x's values by value, 1-based, and its
// distances to all of x, which the sorted values give.
func ranks(x []float64) (rank []int, total []float64) {
	n := len(x)
	order := make([]int, n) // x's indexes by value
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(x[a], x[b]) })
	rank = make([]int, n)
	total = make([]float64, n)
	var sum, below float64
	for _, i := range order {
		sum += x[i]
	}
	for k, i := range order {
		rank[i] = k + 1
		total[i] = x[i]*float64(k) - below + (sum - below - x[i]) - x[i]*float64(n-k-1)
		below += x[i]
	}
	return rank, total
}

// statisticsRanked is statistics given x's ranks and distances to all
// (ranks). It keeps the three sums of distances as tau moves right, as
// the reference does, and finds x[tau]'s distances to those left of it
// from the count and sum of the smaller ones among them (a Fenwick tree
// over the values' ranks) and to the others from its distances to all:
// n log n where the reference's pairwise sums are n².
func statisticsRanked(x []float64, rank []int, total []float64, out []float64, tree fenwick) {
	n := len(x)
	var rest float64 // sums over pairs i<j: both in X, one in each, both in Y
	for _, t := range total {
		rest += t / 2
	}
	count, sums := tree.count, tree.sums // the Fenwick tree of X's values by rank
	clear(count)
	clear(sums)
	var within, across, left float64
	for tau := range n {
		out[tau] = statistic(2*within, 2*rest, across, tau, n-tau)
		v := x[tau]
		c, s := 0, 0.0 // X's values below v: their count and sum
		for r := rank[tau] - 1; r > 0; r -= r & -r {
			c, s = c+count[r], s+sums[r]
		}
		toX := v*float64(c) - s + (left - s) - v*float64(tau-c) // x[tau]'s distances to X
		toY := total[tau] - toX                                 // and to the rest of Y
		across += toY - toX
		within += toX
		rest -= toY
		for r := rank[tau]; r <= n; r += r & -r {
			count[r]++
			sums[r] += v
		}
		left += v
	}
}

// fenwick is room for statisticsRanked's tree of n values: n+1 counts
// and sums.
type fenwick struct {
	count []int
	sums  []float64
}

// statistic is the weighted energy distance of samples of sizes n and m
// from the sums of their distances: within each (over ordered pairs) and
// across.
func statistic(withinX, withinY, across float64, n, m int) float64 {
	fn, fm := float64(n), float64(m)
	var xy, xx, yy float64
	if n > 0 && m > 0 {
		xy = across / (fn * fm)
	}
	if n > 0 {
		xx = withinX / (fn * fn)
	}
	if m > 0 {
		yy = withinY / (fm * fm)
	}
	return fn * fm / (fn + fm) * (2*xy - xx - yy)
}

package results

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/stat"
)

// Figure is the figure the tables rank a run by, in its cell's unit
// (UnitOf); a sweep's step's is the rate it offered (RateFigure), so that
// a search's result has the rate the search found.
func (r *Row) Figure() float64 {
	if r.Load == LoadSweep {
		return RateFigure(r.OfferedRate)
	}
	return r.Cell().Unit().Of(r)
}

// Measured reports whether run r measured what its figure counts: an
// exchange completed, for a figure a second, a byte moved, for Gbit/s,
// a rate offered, for a sweep's step. A run that did not has no figure
// (0, and infinitely far behind any other): the harness fails it, and
// the reader refuses a row that says it is ok.
func (r *Row) Measured() bool {
	switch {
	case r.Load == LoadSweep:
		return r.OfferedRate > 0
	case r.Cell().Unit() == Gbits:
		return r.Bytes > 0
	}
	return r.Requests > 0
}

// RateFigure is a rate, in exchanges a second, in the unit of a sweep's
// cell (UnitOf: k req/s), as the tables, compare and the trends give it.
func RateFigure(perSecond float64) float64 { return perSecond / 1e3 }

// Median returns the median of x, sorting x in place; NaN-free input is
// assumed. With an even number of values it is the mean of the middle two.
func Median(x []float64) float64 {
	sort.Float64s(x)
	n := len(x)
	switch {
	case n == 0:
		return 0
	case n%2 == 1:
		return stat.Quantile(0.5, stat.Empirical, x, nil)
	default:
		return stat.Mean(x[n/2-1:n/2+1], nil)
	}
}

// MedianShift is how far a single run moves the median of figures: the
// largest change of the median when any one of them is left out,
// relative to the median. Unlike the spread of the runs, which only grows
// as runs are added, it shrinks as the runs close in around the median,
// and one outlier among them hardly moves it. With fewer than two figures
// (or a median of 0) it is +Inf: nothing is known.
func MedianShift(figures []float64) float64 {
	if len(figures) < 2 {
		return math.Inf(1)
	}
	x := append([]float64(nil), figures...)
	m := Median(x) // sorts x
	if m == 0 {
		return math.Inf(1)
	}
	shift := 0.0
	rest := make([]float64, 0, len(x)-1)
	for i := range x {
		rest = append(append(rest[:0], x[:i]...), x[i+1:]...)
		shift = max(shift, math.Abs(Median(rest)-m))
	}
	return shift / math.Abs(m)
}

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

// Median returns the median of x, NaN for none; x is left as it is, and
// NaN-free input is assumed. With an even number of values it is the mean
// of the middle two, (a+b)/2.
func Median(x []float64) float64 {
	n := len(x)
	if n == 0 {
		return math.NaN()
	}
	sorted := append([]float64(nil), x...)
	sort.Float64s(sorted)
	if n%2 == 1 {
		return stat.Quantile(0.5, stat.Empirical, sorted, nil)
	}
	return stat.Mean(sorted[n/2-1:n/2+1], nil)
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
	m := Median(figures)
	if m == 0 {
		return math.Inf(1)
	}
	shift := 0.0
	rest := make([]float64, 0, len(figures)-1)
	for i := range figures {
		rest = append(append(rest[:0], figures[:i]...), figures[i+1:]...)
		shift = max(shift, math.Abs(Median(rest)-m))
	}
	return shift / math.Abs(m)
}

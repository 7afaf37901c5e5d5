package report

import (
	"slices"

	"golang.org/x/perf/benchmath"
)

// The tests that decide whether a change is real.
const (
	// TestU is the Mann-Whitney U test, as benchstat applies it: real
	// when p <= 0.05. It decides where both sides have runs enough for
	// it to ever find a difference (4 and 4, 3 and 5, ...).
	TestU = "U"
	// TestRange is the tables' rule, which decides where there are fewer
	// runs: real when the ranges of the two sides' runs, slowest to
	// fastest, do not overlap.
	TestRange = "range"
	// TestOneRun is what decides where a side has a single run: nothing,
	// as a run alone shows no spread to tell a change from noise
	// (benchstat too says ~ where it has too few).
	TestOneRun = "one run"
)

// thresholds are benchstat's: alpha 0.05.
var thresholds = benchmath.DefaultThresholds

// Decide says whether the runs old and new (their figures) can be told
// apart, and by which test: by the U test (TestU, with its p-value) where
// the two sides have runs enough for it to ever find a difference, by the
// tables' rule (TestRange) otherwise, real when the ranges of the runs do
// not overlap. It is the one rule of "real" of bench: compare's cells
// and the page's headlines. Without a run on a side nothing is real and
// test is empty; with one run on a side nothing is real either
// (TestOneRun).
func Decide(old, new []float64) (real bool, test string, p *float64) {
	if len(old) == 0 || len(new) == 0 {
		return false, "", nil
	}
	if len(old) == 1 || len(new) == 1 {
		return false, TestOneRun, nil
	}
	if uDecides(len(old), len(new)) {
		cmp := uTest(old, new)
		return cmp.P <= cmp.Alpha, TestU, &cmp.P
	}
	oldLow, oldHigh := slices.Min(old), slices.Max(old)
	newLow, newHigh := slices.Min(new), slices.Max(new)
	overlap := reaches(oldHigh, newLow) && reaches(newHigh, oldLow)
	return !overlap, TestRange, nil
}

// uDecides reports whether the U test can ever tell apart samples of n1
// and n2 runs: whether it does for two that do not overlap at all. With
// 3 runs a side it cannot (p is at least 0.1); with 4 it can.
func uDecides(n1, n2 int) bool {
	a, b := make([]float64, n1), make([]float64, n2)
	for i := range a {
		a[i] = float64(i)
	}
	for i := range b {
		b[i] = float64(n1 + i)
	}
	cmp := uTest(a, b)
	return cmp.P <= cmp.Alpha
}

// uTest is benchstat's comparison of two samples: Mann-Whitney U.
func uTest(a, b []float64) benchmath.Comparison {
	// NewSample sorts its values in place; a cell's runs keep their order
	return benchmath.AssumeNothing.Compare(
		benchmath.NewSample(slices.Clone(a), &thresholds),
		benchmath.NewSample(slices.Clone(b), &thresholds))
}

// plusMinus is Change.PlusMinus of the two sides' runs.
func plusMinus(old, new summary) *float64 {
	if old.low <= 0 || old.med == 0 {
		return nil
	}
	pm := (new.high/old.low - new.low/old.high) / 2 * 100
	return &pm
}

// Worse reports whether the cell's change is real and for the worse:
// slower, or with a latency metric, longer.
func (ch *Change) Worse(c *Comparison) bool {
	return ch.Real && ch.Change != nil && (*ch.Change < 0) == (c.Metric == "")
}

// Better reports whether the cell's change is real and for the better.
func (ch *Change) Better(c *Comparison) bool {
	return ch.Real && ch.Change != nil && *ch.Change != 0 && !ch.Worse(c)
}

// compared reports whether both sides have ok runs and a change.
func (ch *Change) compared() bool { return ch.Change != nil }

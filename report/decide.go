package report

import (
	"fmt"
	"math"
	"slices"

	"bench/inputerr"
	"bench/results"
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

// Thresholds are benchstat's: alpha 0.05.
var Thresholds = benchmath.DefaultThresholds

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
	if UDecides(len(old), len(new)) {
		cmp := uTest(old, new)
		return cmp.P <= cmp.Alpha, TestU, &cmp.P
	}
	oldLow, oldHigh := slices.Min(old), slices.Max(old)
	newLow, newHigh := slices.Min(new), slices.Max(new)
	overlap := reaches(oldHigh, newLow) && reaches(newHigh, oldLow)
	return !overlap, TestRange, nil
}

// UDecides reports whether the U test can ever tell apart samples of n1
// and n2 runs: whether it does for two that do not overlap at all. With
// 3 runs a side it cannot (p is at least 0.1); with 4 it can.
func UDecides(n1, n2 int) bool {
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
		benchmath.NewSample(slices.Clone(a), &Thresholds),
		benchmath.NewSample(slices.Clone(b), &Thresholds))
}

// PlusMinus is Change.PlusMinus of the two sides' runs.
func PlusMinus(old, new Summary) *float64 {
	if old.Low <= 0 || old.Median == 0 {
		return nil
	}
	pm := (new.High/old.Low - new.Low/old.High) / 2 * 100
	return &pm
}

// The metrics of compare.Options.Metric.
const (
	MetricThroughput = "throughput"
	MetricP50        = "p50"
	MetricP99        = "p99"
	MetricP999       = "p99.9"
)

// Metric is how a comparison reads a run: its figure (NaN where the run
// has none), the figure's unit, and whether lower is better.
type Metric struct {
	Of    func(*results.Row) float64
	Unit  func(results.Cell) string
	Lower bool
}

// MetricOf returns the metric named name.
func MetricOf(name string) (Metric, error) {
	switch name {
	case "", MetricThroughput:
		return Metric{Of: (*results.Row).Figure, Unit: func(c results.Cell) string { return string(c.Unit()) }}, nil
	case MetricP50, MetricP99, MetricP999:
		return Metric{Of: percentile(name), Unit: func(results.Cell) string { return "ms" }, Lower: true}, nil
	}
	return Metric{}, inputerr.Bad(fmt.Errorf("unknown metric %q (want %s, %s, %s or %s)", name, MetricThroughput, MetricP50, MetricP99, MetricP999))
}

// Runs is one side of a cell: the figures of its ok runs, in the order
// they ran, their median and range, and how many runs failed.
type Runs struct {
	Median  *float64  `json:"median"` // null without an ok run
	Slowest *float64  `json:"slowest"`
	Fastest *float64  `json:"fastest"`
	Runs    []float64 `json:"runs"`
	Failed  int       `json:"failed"`
}

// RunsOf is one side of a cell from the summary of its ok runs.
func RunsOf(s Summary, failed int) *Runs {
	r := &Runs{Runs: s.Runs, Failed: failed}
	if r.Runs == nil {
		r.Runs = []float64{}
	}
	if s.OK {
		med, low, high := s.Median, s.Low, s.High
		r.Median, r.Slowest, r.Fastest = &med, &low, &high
	}
	return r
}

// CmpAbs compares a and b by their magnitude.
func CmpAbs(a, b float64) int {
	switch a, b = math.Abs(a), math.Abs(b); {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

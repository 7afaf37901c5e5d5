package changepoint

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// fill is n copies of v.
func fill(n int, v float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// cat joins series.
func cat(parts ...[]float64) []float64 { return slices.Concat(parts...) }

// set returns x with x[i] = v.
func set(x []float64, i int, v float64) []float64 { x[i] = v; return x }

// reference are the options of the reference implementation's tests:
// 1%, 100 permutations, seed 1234 (of another generator than numpy's,
// so that only a marginal split could differ; none does).
var reference = Options{PValue: 0.01, Permutations: 100, Draws: 1234}

// TestDivisive: the series of the reference implementation's tests
// (tests/test_e_divisive.py and tests/test_detection.py, their
// univariate cases) with the change points they expect, at the level
// and with the permutations they test with (reference).
func TestDivisive(t *testing.T) {
	// the random-ish series of test_random_ish_data: three runs of
	// randint from disjoint intervals
	randomIsh := []float64{
		41, 18, 23, 3, 32, 11, 40, 13, 29, 48, 47, 35, 18, 21, 6, 2, 23, 3, 4, 7,
		120, 103, 102, 81, 71, 62, 115, 61, 108, 63, 70, 98, 65, 96, 64, 74, 70, 113, 90, 114,
		208, 196, 153, 150, 225, 179, 206, 165, 177, 151, 218, 217, 244, 245, 229, 195, 225, 229, 176, 250,
	}
	tests := []struct {
		name   string
		series []float64
		want   []int
	}{
		// test_absolute_certainty_univariate: a thousand 0s, a thousand 1s
		{"absolute certainty", cat(fill(1000, 0), fill(1000, 1)), []int{1000}},
		// test_random_ish_data
		{"random-ish", randomIsh, []int{20, 40}},
		// test_finds_simple_regression: 15 of 50, 15 of 100
		{"simple regression", cat(fill(15, 50), fill(15, 100)), []int{15}},
		// test_finds_ahead: a value between the levels just before the step
		{"ahead", cat(fill(14, 50), []float64{74}, fill(15, 100)), []int{15}},
		// test_finds_behind: a value nearer the new level just before it
		{"behind", cat(fill(14, 50), []float64{76}, fill(15, 100)), []int{14}},
		// test_finds_simple_regression2: an outlier early on
		{"outlier before the step", set(cat(fill(15, 50), fill(15, 100)), 2, 100), []int{15}},
		// test_regression_and_recovery: its first split (at 33) is
		// matched by 26 of 1000 shuffles, p = 2.7% > 1%; the
		// reference's better/(permutations+1) of its 100 passed it
		// by its draws' luck, (better+1)/(permutations+1) does not
		{"regression and recovery", set(set(cat(fill(15, 50), fill(15, 100), fill(15, 50)), 2, 100), 32, 100), nil},
		// test_two_regressions
		{"two regressions", set(cat(fill(15, 50), fill(15, 100), fill(15, 150)), 2, 100), []int{15, 30}},
		// test_no_regressions
		{"no regression", fill(30, 50), nil},
		// profiling/short.json: eleven 1s
		{"short", fill(11, 1), nil},
	}
	for _, tc := range tests {
		got := Divisive(tc.series, reference)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: Divisive = %v; want %v", tc.name, got, tc.want)
		}
	}
}

// TestDivisiveProfiles: the reference's longer series, which its tests
// check by the count of change points found (test_small, test_medium,
// test_long_series).
func TestDivisiveProfiles(t *testing.T) {
	profile := func(name string) ([]float64, int) {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		var p struct {
			Series   []float64
			Expected int
		}
		if err := json.Unmarshal(b, &p); err != nil {
			var s []float64 // long_series.json is the series alone
			if err2 := json.Unmarshal(b, &s); err2 != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return s, 4
		}
		return p.Series, p.Expected
	}
	for _, name := range []string{"small.json", "medium.json", "long_series.json"} {
		series, want := profile(name)
		got := Divisive(series, reference)
		if len(got) != want {
			t.Errorf("Divisive(%s) = %d change points %v; want %d", name, len(got), got, want)
		}
	}
}

// TestStatistics: the statistic of a split is the reference's test
// statistic of the two sides (tests/test_energy_statistics.py).
func TestStatistics(t *testing.T) {
	rng := func(lo, hi, step float64) []float64 {
		var out []float64
		for v := lo; v < hi; v += step {
			out = append(out, v)
		}
		return out
	}
	tests := []struct {
		name string
		x, y []float64
		want float64
	}{
		// test_energy_statistics_similar_distributions
		{"similar", rng(1, 100, 1), rng(1, 105, 1), 8.136},
		// test_energy_statistics_different_distributions
		{"different", rng(1, 100, 1), rng(10000, 13000, 14), 1481794.709},
		// test_energy_statistics_univariate_ndarray
		{"univariate", rng(1, 300, 1), rng(1000, 5000, 10), 728381.015},
		// test_energy_statistics_same_distribution
		{"same", rng(10, 70, 1), rng(10, 70, 1), 0},
	}
	for _, tc := range tests {
		x := cat(tc.x, tc.y)
		stats := make([]float64, len(x))
		statistics(x, stats)
		if got := stats[len(tc.x)]; math.Abs(got-tc.want) > 1.5e-3 { // numpy's assert_almost_equal to 3 decimals
			t.Errorf("%s: statistics(...)[%d] = %.3f; want %.3f", tc.name, len(tc.x), got, tc.want)
		}
	}
}

// TestDivisiveSeeded: a seed gives one answer; the permutation test is
// what decides, so a series without a change gives none under any.
func TestDivisiveSeeded(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	noise := make([]float64, 120)
	for i := range noise {
		noise[i] = 100 + r.NormFloat64()
	}
	stepped := slices.Clone(noise)
	for i := 80; i < len(stepped); i++ {
		stepped[i] -= 3
	}
	for seed := range uint64(5) {
		a, b := Divisive(stepped, Options{Draws: seed}), Divisive(stepped, Options{Draws: seed})
		if !slices.Equal(a, b) {
			t.Errorf("seed %d: Divisive = %v, then %v; want one answer", seed, a, b)
		}
		if !slices.Equal(a, []int{80}) {
			t.Errorf("seed %d: Divisive(a 3-sigma step at 80) = %v; want [80]", seed, a)
		}
		if got := Divisive(noise, Options{Draws: seed}); len(got) != 0 {
			t.Errorf("seed %d: Divisive(noise) = %v; want none", seed, got)
		}
	}
}

// TestFind: the steps measured, their intervals and whether they are in
// force.
func TestFind(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	session := func(level float64) []float64 {
		out := make([]float64, 3)
		for k := range out {
			out[k] = level * (1 + 0.02*r.NormFloat64())
		}
		return out
	}
	var runs [][]float64
	level := func(n int, v float64) {
		for range n {
			runs = append(runs, session(v))
		}
	}
	// 100 for 40 sessions, 90 for 30, back to 100 for 30: a regression
	// of 10% at 40 no longer in force, its recovery at 70 in force
	level(40, 100)
	level(30, 90)
	level(30, 100)
	got := Find(runs, Options{Draws: 1})
	if len(got) != 2 {
		t.Fatalf("Find = %+v; want two points", got)
	}
	down, up := got[0], got[1]
	if down.At != 40 || down.InForce || math.Abs(down.Step+10) > 1.5 || !(down.Lo < down.Step && down.Step < down.Hi && down.Hi < 0) {
		t.Errorf("Find: the first point = %+v; want at 40, about -10%% inside its interval, not in force", down)
	}
	if up.At != 70 || !up.InForce || math.Abs(up.Step-11.1) > 1.5 || !(up.Lo > 0 && up.Lo < up.Step && up.Step < up.Hi) {
		t.Errorf("Find: the second point = %+v; want at 70, about +11%% inside its interval, in force", up)
	}
}

// TestNewestRun: the newest sessions beyond every one before them count
// once they are too many to be chance at the level.
func TestNewestRun(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	level := func(n int, v float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = v + r.NormFloat64()
		}
		return out
	}
	tests := []struct {
		name   string
		series []float64
		points []int
		want   int
	}{
		// two of 66 below all the others: 2/C(66,2), 0.09%
		{"two of 66", cat(level(64, 100), level(2, 90)), nil, 2},
		// one of 65: 2/65, 3%
		{"one of 65", cat(level(64, 100), level(1, 90)), nil, 0},
		// two of 12: 2/C(12,2), 3%
		{"two of 12", cat(level(10, 100), level(2, 90)), nil, 0},
		// two above all of 66 after a change point at 10: 2/C(56,2), 0.13%
		{"two of 56 past a point", cat(level(10, 50), level(54, 100), level(2, 110)), []int{10}, 0},
		// three of 59 past it: 2/C(59,3), 0.006%
		{"three of 59 past a point", cat(level(10, 50), level(56, 100), level(3, 110)), []int{10}, 3},
		// two, but not beyond every one before them
		{"within", set(cat(level(64, 100), level(2, 90)), 5, 85), nil, 0},
	}
	for _, tc := range tests {
		if got := newestRun(tc.series, tc.points, DefaultPValue); got != tc.want {
			t.Errorf("%s: newestRun = %d; want %d", tc.name, got, tc.want)
		}
	}
}

// TestStatisticsPairwise: statistics is the reference's pairwise sums'
// statistic at every split, of series with ties and without (the test
// of the C extension against numpy, tests/test_calculator.py).
func TestStatisticsPairwise(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for _, n := range []int{1, 2, 3, 10, 101} {
		for _, levels := range []int{3, 1000} { // 3: many ties
			x := make([]float64, n)
			for i := range x {
				x[i] = float64(r.IntN(levels))
			}
			got := make([]float64, n)
			statistics(x, got)
			for tau := range n {
				var within, rest, across float64
				for i := range n {
					for j := i + 1; j < n; j++ {
						d := math.Abs(x[i] - x[j])
						switch {
						case j < tau:
							within += d
						case i >= tau:
							rest += d
						default:
							across += d
						}
					}
				}
				if want := statistic(2*within, 2*rest, across, tau, n-tau); math.Abs(got[tau]-want) > 1e-9*math.Max(1, math.Abs(want)) {
					t.Errorf("statistics(%d values of %d levels)[%d] = %v; want %v", n, levels, tau, got[tau], want)
				}
			}
		}
	}
}

package results

import (
	"fmt"
	"math"
	"testing"
)

func TestMedian(t *testing.T) {
	cases := []struct {
		in   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{5, 5, 1}, 5},
	}
	for _, c := range cases {
		in := fmt.Sprint(c.in)
		if got := Median(c.in); got != c.want {
			t.Errorf("Median(%s) = %v; want %v", in, got, c.want)
		}
		if after := fmt.Sprint(c.in); after != in {
			t.Errorf("Median(%s) left its input %s", in, after)
		}
	}
	if got := Median(nil); !math.IsNaN(got) {
		t.Errorf("Median(nil) = %v; want NaN", got)
	}
}

func TestMedianShift(t *testing.T) {
	for _, tt := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{95, 100, 105}, 0.025},       // either neighbour moves it halfway
		{[]float64{2.7, 4.7, 4.6}, 0.95 / 4.6}, // without 4.7: (2.7 + 4.6) / 2
		{[]float64{2.7, 4.7, 4.6, 4.5}, 0.05 / 4.55},
		{[]float64{100, 100, 100}, 0},
		{[]float64{100}, math.Inf(1)},
		{nil, math.Inf(1)},
	} {
		if got := MedianShift(tt.in); math.Abs(got-tt.want) > 1e-9 && got != tt.want {
			t.Errorf("MedianShift(%v) = %.4f; want %.4f", tt.in, got, tt.want)
		}
	}
}

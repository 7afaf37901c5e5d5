package text

import (
	"math"
	"testing"
)

func TestFixed(t *testing.T) {
	for _, c := range []struct {
		v    float64
		prec int
		want string
	}{
		{35.04, 1, "35.0"},
		{35.05, 2, "35.05"},
		{0.2125, 3, "0.212"},
		{1613.5, 0, "1614"},
		{-2.25, 1, "-2.2"},
		{math.Inf(1), 1, "–"},
		{math.Inf(-1), 0, "–"},
		{math.NaN(), 2, "–"},
	} {
		if got := Fixed(c.v, c.prec); got != c.want {
			t.Errorf("Fixed(%v, %d) = %q; want %q", c.v, c.prec, got, c.want)
		}
	}
}

func TestThousands(t *testing.T) {
	cases := map[float64]string{0: "0", 12: "12", 999.6: "1,000", 1613.2: "1,613", 6518: "6,518", 1234567: "1,234,567", -1500: "-1,500", -999.4: "-999"}
	for in, want := range cases {
		if got := Thousands(in); got != want {
			t.Errorf("Thousands(%v) = %q; want %q", in, got, want)
		}
	}
}

func TestPercent(t *testing.T) {
	for _, c := range []struct {
		v            float64
		whole, share string
	}{
		{0.123, "12%", "12%"},
		{0.034, "3%", "3%"},
		{0.004, "0%", "0.4%"},
		{0.0094, "1%", "0.9%"},
		{0.0095, "1%", "1%"},
		{0, "0%", "0.0%"},
		{1.5, "150%", "150%"},
	} {
		if got := Percent(c.v); got != c.whole {
			t.Errorf("Percent(%v) = %q; want %q", c.v, got, c.whole)
		}
		if got := SharePercent(c.v); got != c.share {
			t.Errorf("SharePercent(%v) = %q; want %q", c.v, got, c.share)
		}
	}
}

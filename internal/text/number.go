package text

import (
	"math"
	"strconv"
	"strings"
)

// Fixed formats v with prec decimals; a figure that is not one (a ratio
// over zero, a figure out of range) as "–".
func Fixed(v float64, prec int) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// Thousands formats v rounded to an integer with commas between
// thousands: 1613.2 -> "1,613".
func Thousands(v float64) string {
	n := int64(math.Round(v))
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Percent formats a share as a whole percentage: 0.123 -> "12%".
func Percent(v float64) string { return Fixed(v*100, 0) + "%" }

// SharePercent formats a share as a percentage, a decimal below 1%:
// 0.034 -> "3%", 0.004 -> "0.4%".
func SharePercent(v float64) string {
	if v*100 < 0.95 {
		return Fixed(v*100, 1) + "%"
	}
	return Percent(v)
}

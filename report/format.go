package report

import (
	"bench/results"
	"math"
	"strconv"
	"strings"
)

// Per-run figures, derived as DESIGN.md states them.

func gbits(r *results.Row) float64 { return r.Gbps() }

func kreqs(r *results.Row) float64 { return r.PerSecond() / 1e3 }

func reqs(r *results.Row) float64 { return r.PerSecond() }

func usPerReq(r *results.Row) float64 { return r.CPUProxy / float64(r.Requests) * 1e6 }

func sPerGB(r *results.Row) float64 { return r.CPUProxy / (float64(r.Bytes) / 1e9) }

func megabytes(r *results.Row) float64 { return float64(r.PeakMemBytes) / 1e6 }

// fixed formats v with prec decimals.
func fixed(v float64, prec int) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return "–" // a ratio over zero, a figure out of range
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// thousands formats v rounded to an integer with commas between
// thousands: 1613.2 -> "1,613".
func thousands(v float64) string {
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

// short returns a machine's short label for a table's corner: the label up
// to its parenthesis, "ARM (M4)" -> "ARM".
func short(machine string) string {
	if i := strings.Index(machine, " ("); i > 0 {
		return machine[:i]
	}
	return machine
}

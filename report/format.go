package report

import (
	"strings"

	"bench/results"
)

// Per-run figures, derived as DESIGN.md states them.

func gbits(r *results.Row) float64 { return r.Gbps() }

func kreqs(r *results.Row) float64 { return r.PerSecond() / 1e3 }

func reqs(r *results.Row) float64 { return r.PerSecond() }

func usPerReq(r *results.Row) float64 { return r.CPUProxy / float64(r.Requests) * 1e6 }

func sPerGB(r *results.Row) float64 { return r.CPUProxy / (float64(r.Bytes) / 1e9) }

func megabytes(r *results.Row) float64 { return float64(r.PeakMemBytes) / 1e6 }

// short returns a machine's short label for a table's corner: the label up
// to its parenthesis, "ARM (M4)" -> "ARM".
func short(machine string) string {
	if i := strings.Index(machine, " ("); i > 0 {
		return machine[:i]
	}
	return machine
}

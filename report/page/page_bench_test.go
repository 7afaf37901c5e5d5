package page

import (
	"io"
	"testing"

	"bench/report"
	"bench/report/internal/reporttest"
	"bench/results"
)

// BenchmarkRenderHTML renders the page of 100,000 runs: the tables, their
// bar charts and the latency tables (the runs have no data of their own
// beyond their rows). The goal is under 2 s an iteration.
func BenchmarkRenderHTML(b *testing.B) {
	rows := reporttest.BenchRows(100000)
	for i := range rows {
		rows[i].P50Ms, rows[i].P99Ms, rows[i].HasLatency = 1.2, 9.8, !results.Stream(rows[i].Load)
	}
	b.ResetTimer()
	for b.Loop() {
		if err := Render(io.Discard, rows, report.Options{Format: report.FormatHTML}); err != nil {
			b.Fatal(err)
		}
	}
}

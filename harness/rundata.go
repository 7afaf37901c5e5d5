package harness

import (
	"bench/harness/host"
	"bench/report/results"
	"bench/scenarios"
)

// keepData writes beside the runs' output the data the report's charts
// draw of run name (results.RunData): the load tool's series and
// histogram, where it gives them, and the roles' busy fraction each
// second of the window. It is kept as the tools' output is: a run whose
// data cannot be written still counts.
func (s *Session) keepData(name string, row *results.Row, m scenarios.Measurement, sample host.Sample) {
	d := results.RunData{RunID: row.ID(), Started: row.Started, Intervals: m.Intervals, Histogram: m.Histogram,
		CPU: map[string][]float64{}}
	for r, v := range sample.PerSecond {
		d.CPU[string(r)] = v
	}
	_ = results.WriteRunData(s.OutputDir, name, d)
}

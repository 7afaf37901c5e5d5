package harness

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"bench/results"
	"bench/scenarios"
)

// keepData writes beside the runs' output the data the report's charts
// draw of run name (results.RunData): the load tool's series and
// histogram, where it gives them, and the roles' busy fraction each
// second of the window, and how its proxy was profiled (prof, nil where
// it was not). It is kept as the tools' output is: a run whose
// data cannot be written still counts.
func (s *runner) keepData(name string, row *results.Row, m scenarios.Measurement, sample figures, prof *results.ProfileNote) {
	d := results.RunData{RunID: row.ID(), Started: row.Started, Intervals: m.Intervals, Histogram: m.Histogram,
		CPU: map[string][]float64{}, Profile: prof}
	for r, v := range sample.perSecond {
		d.CPU[string(r)] = v
	}
	d.Windows = append(slices.Clone(sample.windows), m.Windows...)
	_ = results.WriteRunData(s.OutputDir, name, d)
}

// ReadRunData reads the data the runs of rows kept beside the session
// files at csvPaths (results.ReadRunData). A run that kept none, as in
// sessions before bench kept it, gets what its load tool's kept output
// holds: bench mix's histogram (and its seconds where it printed them),
// iperf3's intervals; it has no CPU series then.
func ReadRunData(csvPaths []string, rows []results.Row) (map[results.RunID]*results.RunData, error) {
	data, err := results.ReadRunData(csvPaths)
	if err != nil {
		return nil, err
	}
	// The kept outputs by their runs directory and the run they name,
	// without its index: "<column>-<scenario>-<rep>" for
	// "0007-nginx-http-ka-1k-1.load.wrk.out". The directory is RunsDir's
	// here and below, whatever the spelling of the CSV's path.
	outputs := map[string]string{}
	for _, p := range csvPaths {
		dir := results.RunsDir(p)
		for _, tool := range []string{scenarios.ToolBench, scenarios.ToolIperf3} {
			files, _ := filepath.Glob(filepath.Join(dir, "*.load."+tool+".out"))
			for _, f := range files {
				name := strings.TrimSuffix(filepath.Base(f), ".load."+tool+".out")
				if _, run, ok := strings.Cut(name, "-"); ok {
					outputs[dir+"\x00"+run] = f
				}
			}
		}
	}
	for i := range rows {
		r := &rows[i]
		if r.Status != results.OK || data[r.ID()] != nil {
			continue
		}
		var drv scenarios.Driver
		switch {
		case results.Stream(r.Load) || r.Mode == results.TLSTunnel:
			drv = scenarios.Iperf3{}
		case strings.HasPrefix(string(r.Mode), "mix-"):
			drv = scenarios.Mix{}
		default:
			continue
		}
		run := fmt.Sprintf("%s-%s-%d", results.Slug(r.Proxy), results.ScenarioName(r.Mode, r.Load), r.Rep)
		f, ok := outputs[results.RunsDir(r.Source)+"\x00"+run]
		if !ok {
			continue
		}
		b, err := results.ReadInput(f)
		if err != nil {
			return nil, err
		}
		m, err := drv.Parse(b)
		if err != nil {
			continue // a run whose output says nothing more than its row
		}
		if len(m.Intervals) > 0 || m.Histogram != "" {
			data[r.ID()] = &results.RunData{RunID: r.ID(), Started: r.Started, Intervals: m.Intervals, Histogram: m.Histogram}
		}
	}
	return data, nil
}

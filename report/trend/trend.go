// Package trend is what bench trend writes: the trends of a history
// (history.Sessions), each cell of each machine, by each metric, as a
// series of its sessions in time order, searched for change points
// (package changepoint), in markdown or as a page with a chart of each
// series.
package trend

import (
	"cmp"
	"fmt"
	"math"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"bench/inputerr"
	"bench/report"
	"bench/report/changepoint"
	"bench/results"
)

// Options narrow a history and set the detection's parameters.
type Options struct {
	Since    time.Time // sessions started on or after it; zero for all
	Machine  Globs     // machines whose label or slug matches; nil for all
	Scenario Globs     // scenarios whose name matches; nil for all
	Proxy    []string  // columns by name; nil for all
	Detect   changepoint.Options
}

// Globs are comma-separated path.Match patterns: a name is matched when
// one of them matches it.
type Globs []string

// ParseGlobs parses a flag's comma-separated globs; a bad glob is input
// refused.
func ParseGlobs(spec string) (Globs, error) {
	if spec == "" {
		return nil, nil
	}
	var out Globs
	for _, g := range strings.Split(spec, ",") {
		g = strings.TrimSpace(g)
		if _, err := path.Match(g, ""); err != nil || g == "" {
			return nil, inputerr.Bad(fmt.Errorf("glob %q in %q: want names or globs separated by commas", g, spec))
		}
		out = append(out, g)
	}
	return out, nil
}

// Match reports whether one of the globs matches one of names; nil globs
// match anything.
func (gs Globs) Match(names ...string) bool {
	if gs == nil {
		return true
	}
	for _, g := range gs {
		for _, n := range names {
			if ok, _ := path.Match(g, n); ok {
				return true
			}
		}
	}
	return false
}

// Series is a cell of a machine, by one metric, over the sessions of
// the history that ran it.
type Series struct {
	Machine  string
	Scenario string // the cell's scenario name
	Mode     results.Mode
	Load     string
	Proxy    string
	Group    results.Group
	Metric   string // MetricThroughput or MetricP99
	Unit     string
	Lower    bool // lower is better: a latency
	// Sessions are the indexes in Trends.Sessions of the sessions with
	// an ok run of the cell, in time order; Runs their ok runs' figures,
	// Medians their medians.
	Sessions []int
	Runs     [][]float64
	Medians  []float64
	Points   []Point
	// Outliers are the sessions that stand out alone from their level
	// (changepoint.Outliers): a bad night, named as one and never a
	// change.
	Outliers []Outlier
	// Detectable is the smallest step, in percent, the series can show
	// at its newest level (changepoint.Detectable).
	Detectable float64
}

// Point is a change point of a series: where its level moved
// beyond the noise of its runs.
type Point struct {
	changepoint.Point
	Before, After int // the indexes in Trends.Sessions of the sessions either side
	// Worse says the step is for the worse: a slower cell, a longer
	// latency.
	Worse bool
	// Versions are what changed between the two sessions of the cell's
	// column and of bench: "nginx 1.22.1 → 1.24.0".
	Versions []string
}

// Trends are a history's series and their change points.
type Trends struct {
	Sessions []Session
	Series   []Series
	Options  changepoint.Options // as used, the defaults filled in
}

// trendMetrics are the metrics of a cell's series: the tables' figure
// (a sweep's: the sustainable rate its searches found, searchResults),
// and the p99 latency where the runs have it (not a sweep's, which its
// search holds to its bounds).
var trendMetrics = []string{report.MetricThroughput, report.MetricP99}

// Of builds the series of the sessions that opt keeps and finds their
// change points.
func Of(sessions []Session, opt Options) (*Trends, error) {
	tr := &Trends{Options: opt.Detect.WithDefaults()}
	for _, s := range sessions {
		if s.Started.Before(opt.Since) || !opt.Machine.Match(s.Machine, results.Slug(s.Machine)) {
			continue
		}
		tr.Sessions = append(tr.Sessions, s)
	}
	metrics := make([]report.Metric, len(trendMetrics))
	for i, name := range trendMetrics {
		m, err := report.MetricOf(name)
		if err != nil {
			return nil, err
		}
		metrics[i] = m
	}
	type key struct {
		machine, proxy string
		mode           results.Mode
		load, metric   string
	}
	index := map[key]int{}
	for si := range tr.Sessions {
		s := &tr.Sessions[si]
		rows := report.SearchResults(s.rows)
		for i := range rows {
			r := &rows[i]
			if r.Status != results.OK || (opt.Proxy != nil && !slices.Contains(opt.Proxy, r.Proxy)) {
				continue
			}
			c := r.Cell()
			scen := c.Scenario()
			if !opt.Scenario.Match(scen) {
				continue
			}
			for mi, m := range metrics {
				v := m.Of(r)
				if math.IsNaN(v) || math.IsInf(v, 0) || (m.Lower && r.Load == results.LoadSweep) {
					continue
				}
				k := key{s.Machine, r.Proxy, r.Mode, r.Load, trendMetrics[mi]}
				at, ok := index[k]
				if !ok {
					at = len(tr.Series)
					index[k] = at
					tr.Series = append(tr.Series, Series{Machine: s.Machine, Scenario: scen, Mode: r.Mode, Load: r.Load,
						Proxy: r.Proxy, Group: r.Group, Metric: trendMetrics[mi], Unit: m.Unit(c), Lower: m.Lower})
				}
				ts := &tr.Series[at]
				if n := len(ts.Sessions); n == 0 || ts.Sessions[n-1] != si {
					ts.Sessions = append(ts.Sessions, si)
					ts.Runs = append(ts.Runs, nil)
				}
				ts.Runs[len(ts.Runs)-1] = append(ts.Runs[len(ts.Runs)-1], v)
			}
		}
	}
	slices.SortFunc(tr.Series, func(a, b Series) int {
		return cmp.Or(cmp.Compare(a.Machine, b.Machine), cmp.Compare(familyIndex(a.Mode, a.Load), familyIndex(b.Mode, b.Load)),
			cmp.Compare(a.Scenario, b.Scenario), cmp.Compare(a.Proxy, b.Proxy), cmp.Compare(a.Metric, b.Metric))
	})
	work := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				tr.detect(&tr.Series[i])
			}
		}()
	}
	for i := range tr.Series {
		work <- i
	}
	close(work)
	wg.Wait()
	return tr, nil
}

// familyIndex is the place of the family of mode and load in the
// tables' order.
func familyIndex(mode results.Mode, load string) int {
	return slices.Index(report.Families, report.FamilyOf(mode, load))
}

// detect finds the change points of ts.
func (tr *Trends) detect(ts *Series) {
	ts.Medians = make([]float64, len(ts.Runs))
	for i, r := range ts.Runs {
		ts.Medians[i] = results.Median(r)
	}
	points, outliers := changepoint.Analyse(ts.Runs, tr.Options)
	for _, p := range points {
		tp := Point{Point: p, Before: ts.Sessions[p.At-1], After: ts.Sessions[p.At]}
		tp.Worse = ts.gate(0).Worse(p)
		tp.Versions = tr.versionsChanged(ts.Proxy, tp.Before, tp.After)
		ts.Points = append(ts.Points, tp)
	}
	for _, i := range outliers {
		start, end := 0, len(ts.Medians) // i's segment
		for _, p := range points {
			if p.At <= i {
				start = max(start, p.At)
			} else {
				end = min(end, p.At)
			}
		}
		level := results.Median(ts.Medians[start:end])
		ts.Outliers = append(ts.Outliers, Outlier{Session: ts.Sessions[i], Off: (ts.Medians[i]/level - 1) * 100})
	}
	ts.Detectable = changepoint.Detectable(ts.Medians, points, tr.Options)
}

// Outlier is a session of a series that stands out alone.
type Outlier struct {
	Session int     // its index in Trends.Sessions
	Off     float64 // its median over its level's, less one, in percent
}

// gate is the nightly's gate of pct percent on the series.
func (ts *Series) gate(pct float64) changepoint.Gate {
	return changepoint.Gate{Percent: pct, Lower: ts.Lower}
}

// points are the series' change points as Find gives them.
func (ts *Series) points() []changepoint.Point {
	out := make([]changepoint.Point, len(ts.Points))
	for i, p := range ts.Points {
		out[i] = p.Point
	}
	return out
}

// versionsChanged says what changed of bench and of column's version
// from session before to session after.
func (tr *Trends) versionsChanged(column string, before, after int) []string {
	b, a := &tr.Sessions[before], &tr.Sessions[after]
	var out []string
	if b.Bench != a.Bench {
		out = append(out, "bench "+orUnknown(b.Bench)+" → "+orUnknown(a.Bench))
	}
	if vb, va := b.Versions[column], a.Versions[column]; vb != va {
		out = append(out, column+" "+orUnknown(vb)+" → "+orUnknown(va))
	}
	return out
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

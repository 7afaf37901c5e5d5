package report

import (
	"cmp"
	"fmt"
	"math"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"bench/report/changepoint"
	"bench/report/results"
)

// The trends of a history (results.HistorySessions): each cell of each
// machine, by each metric, as a series of its sessions in time order,
// searched for change points (package changepoint).

// TrendSession is a session of a history: its file, what it ran on and
// when, and the versions it ran.
type TrendSession struct {
	Path    string
	Machine string    // the tables' label
	ID      string    // the session's id
	Started time.Time // its start
	// Bench is the build of bench that ran it: the history's record of
	// its commit, else the metadata's; empty when neither says.
	Bench string
	// Versions are its columns' versions: the metadata's, with the
	// commit the history records of the column where it does.
	Versions map[string]string
	rows     []results.Row
}

// Date is the session's start date.
func (s *TrendSession) Date() string { return s.Started.UTC().Format(time.DateOnly) }

// ReadTrendHistory reads every session of the history at root, in time
// order. A file that cannot be read is an InputError naming it.
func ReadTrendHistory(root string) ([]TrendSession, error) {
	paths, err := results.HistorySessions(root)
	if err != nil {
		return nil, err
	}
	out := make([]TrendSession, len(paths))
	errs := make([]error, len(paths))
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = readTrendSession(paths[i], &out[i])
			}
		}()
	}
	for i := range paths {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	slices.SortStableFunc(out, func(a, b TrendSession) int {
		return cmp.Or(a.Started.Compare(b.Started), cmp.Compare(a.Machine, b.Machine), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// readTrendSession reads the session file at p, with its metadata and
// its history record, into s.
func readTrendSession(p string, s *TrendSession) error {
	rows, err := results.ReadFiles([]string{p})
	if err != nil {
		return err
	}
	metas, err := results.ReadMetas([]string{p})
	if err != nil {
		return err
	}
	hist, err := results.ReadHistory(p)
	if err != nil {
		return err
	}
	*s = TrendSession{Path: p, Machine: rows[0].Machine, ID: rows[0].Session, rows: rows, Versions: map[string]string{}}
	m := metas[0].Meta
	switch {
	case m != nil:
		s.Started = m.Started
	default:
		s.Started = rows[0].Started
		for _, r := range rows {
			if !r.Started.IsZero() && r.Started.Before(s.Started) {
				s.Started = r.Started
			}
		}
	}
	if s.Started.IsZero() {
		// the folder's date, where neither the metadata nor a run has one
		dir := filepath.Base(filepath.Dir(p))
		d, err := time.Parse(time.DateOnly, dir[:min(len(time.DateOnly), len(dir))])
		if err != nil {
			return &results.InputError{File: p, Err: fmt.Errorf("no start time in the session's runs or metadata, nor a date at the start of its folder's name %q", dir)}
		}
		s.Started = d
	}
	if m != nil {
		if m.Bench != nil {
			s.Bench = m.Bench.String()
		}
		for _, c := range m.Columns {
			s.Versions[c.Name] = c.Version
		}
	}
	if hist != nil {
		if hist.BenchCommit != "" {
			s.Bench = hist.BenchCommit
		}
		for col, commit := range hist.ProxyCommits {
			s.Versions[col] = strings.TrimSpace(s.Versions[col] + " " + commit)
		}
	}
	return nil
}

// TrendOptions narrow a history and set the detection's parameters.
type TrendOptions struct {
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
			return nil, results.BadInput(fmt.Errorf("glob %q in %q: want names or globs separated by commas", g, spec))
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

// TrendSeries is a cell of a machine, by one metric, over the sessions of
// the history that ran it.
type TrendSeries struct {
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
	Points   []TrendPoint
	// Outliers are the sessions that stand out alone from their level
	// (changepoint.Outliers): a bad night, named as one and never a
	// change.
	Outliers []TrendOutlier
	// Detectable is the smallest step, in percent, the series can show
	// at its newest level (changepoint.Detectable).
	Detectable float64
}

// TrendPoint is a change point of a series: where its level moved
// beyond the noise of its runs.
type TrendPoint struct {
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
	Sessions []TrendSession
	Series   []TrendSeries
	Options  changepoint.Options // as used, the defaults filled in
}

// trendMetrics are the metrics of a cell's series: the tables' figure
// (a sweep's: the sustainable rate its searches found, searchResults),
// and the p99 latency where the runs have it (not a sweep's, which its
// search holds to its bounds).
var trendMetrics = []string{MetricThroughput, MetricP99}

// Trend builds the series of the sessions that opt keeps and finds their
// change points.
func Trend(sessions []TrendSession, opt TrendOptions) (*Trends, error) {
	tr := &Trends{Options: opt.Detect.WithDefaults()}
	for _, s := range sessions {
		if s.Started.Before(opt.Since) || !opt.Machine.Match(s.Machine, results.Slug(s.Machine)) {
			continue
		}
		tr.Sessions = append(tr.Sessions, s)
	}
	metrics := make([]metric, len(trendMetrics))
	for i, name := range trendMetrics {
		m, err := metricOf(name)
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
		rows := searchResults(s.rows)
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
				v := m.of(r)
				if math.IsNaN(v) || math.IsInf(v, 0) || (m.lower && r.Load == results.LoadSweep) {
					continue
				}
				k := key{s.Machine, r.Proxy, r.Mode, r.Load, trendMetrics[mi]}
				at, ok := index[k]
				if !ok {
					at = len(tr.Series)
					index[k] = at
					tr.Series = append(tr.Series, TrendSeries{Machine: s.Machine, Scenario: scen, Mode: r.Mode, Load: r.Load,
						Proxy: r.Proxy, Group: r.Group, Metric: trendMetrics[mi], Unit: m.unit(c), Lower: m.lower})
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
	slices.SortFunc(tr.Series, func(a, b TrendSeries) int {
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
	return slices.Index(families, familyOf(mode, load))
}

// detect finds the change points of ts.
func (tr *Trends) detect(ts *TrendSeries) {
	ts.Medians = make([]float64, len(ts.Runs))
	for i, r := range ts.Runs {
		ts.Medians[i] = changepoint.Median(r)
	}
	points, outliers := changepoint.Analyse(ts.Runs, tr.Options)
	for _, p := range points {
		tp := TrendPoint{Point: p, Before: ts.Sessions[p.At-1], After: ts.Sessions[p.At]}
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
		level := changepoint.Median(ts.Medians[start:end])
		ts.Outliers = append(ts.Outliers, TrendOutlier{Session: ts.Sessions[i], Off: (ts.Medians[i]/level - 1) * 100})
	}
	ts.Detectable = changepoint.Detectable(ts.Medians, points, tr.Options)
}

// TrendOutlier is a session of a series that stands out alone.
type TrendOutlier struct {
	Session int     // its index in Trends.Sessions
	Off     float64 // its median over its level's, less one, in percent
}

// gate is the nightly's gate of pct percent on the series.
func (ts *TrendSeries) gate(pct float64) changepoint.Gate {
	return changepoint.Gate{Percent: pct, Lower: ts.Lower}
}

// points are the series' change points as Find gives them.
func (ts *TrendSeries) points() []changepoint.Point {
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

// TrendChange is a change point with its series, for the report's list.
type TrendChange struct {
	Series *TrendSeries
	*TrendPoint
}

// Changes are the change points of every series, the newest first (by
// the session after the change), the largest step first within a
// session.
func (tr *Trends) Changes() []TrendChange {
	var out []TrendChange
	for i := range tr.Series {
		s := &tr.Series[i]
		for j := range s.Points {
			out = append(out, TrendChange{s, &s.Points[j]})
		}
	}
	slices.SortStableFunc(out, func(a, b TrendChange) int {
		return cmp.Or(b.After-a.After, cmpAbs(b.Step, a.Step))
	})
	return out
}

// NewRegressions are the changes for the worse past pct percent that
// fire the nightly's gate on the newest session of their machine
// (changepoint.Gate): a change fires once, on the first night its step
// is past the gate, and again only when it has grown by the gate once
// more, however its place moves or it drops out of a night's analysis
// and comes back. A session alone is never a change point
// (changepoint.MinSide), so a new level shows on the second session at
// it at the soonest.
func (tr *Trends) NewRegressions(pct float64) []TrendChange {
	newest := tr.newest()
	var out []TrendChange
	for i := range tr.Series {
		s := &tr.Series[i]
		if s.Sessions[len(s.Sessions)-1] != newest[s.Machine] {
			continue
		}
		fires := s.gate(pct).Fires(s.Runs, s.points(), tr.Options, nil)
		for j := range s.Points {
			if slices.ContainsFunc(fires, func(p changepoint.Point) bool { return p.At == s.Points[j].At }) {
				out = append(out, TrendChange{s, &s.Points[j]})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b TrendChange) int {
		return cmp.Or(b.After-a.After, cmpAbs(b.Step, a.Step))
	})
	return out
}

// newest is the index of the newest session of each machine.
func (tr *Trends) newest() map[string]int {
	out := map[string]int{}
	for i, s := range tr.Sessions {
		out[s.Machine] = i
	}
	return out
}

// Undetectable are the series run by their machine's newest session
// whose noise and history cannot show a step of pct percent
// (TrendSeries.Detectable past it): a gate of that size cannot catch
// their regressions.
func (tr *Trends) Undetectable(pct float64) []*TrendSeries {
	newest := tr.newest()
	var out []*TrendSeries
	for i := range tr.Series {
		s := &tr.Series[i]
		if s.Sessions[len(s.Sessions)-1] == newest[s.Machine] && s.Detectable > pct {
			out = append(out, s)
		}
	}
	return out
}

// DescribeDetectable is a series' smallest step in a line: "Xeon, 2
// CPUs, http-ka-1k, nginx, throughput: 7.3%".
func (s *TrendSeries) DescribeDetectable() string {
	d := "no step yet: too few sessions at its level"
	if !math.IsInf(s.Detectable, 1) {
		d = fixed(s.Detectable, 1) + "%"
	}
	return fmt.Sprintf("%s, %s, %s, %s: %s", s.Machine, s.Scenario, s.Proxy, s.Metric, d)
}

// Describe is the change in a line: "Xeon, 2 CPUs, http-ka-1k, nginx,
// throughput: -6.1% (-7.9..-4.2%) from 2026-08-20-nightly to
// 2026-08-21-nightly".
func (c TrendChange) Describe(tr *Trends) string {
	s := c.Series
	return fmt.Sprintf("%s, %s, %s, %s: %s (%s) from %s to %s", s.Machine, s.Scenario, s.Proxy, s.Metric,
		signedPct(c.Step), pctRange(c.Lo, c.Hi), tr.Sessions[c.Before].ID, tr.Sessions[c.After].ID)
}

// signedPct is a step in percent with its sign: "+6.1%", "−0.4%".
func signedPct(v float64) string { return fmt.Sprintf("%+.1f%%", v) }

// pctRange is an interval in percent: "-7.9..-4.2%".
func pctRange(lo, hi float64) string { return fmt.Sprintf("%+.1f..%+.1f%%", lo, hi) }

// TrendEvent is the changes of one column of a machine that began on
// one night: a step of the column itself (a new build, a new version)
// moves many of its series at once, and reads as one. A change whose
// new level begins a session either side of the night most of them
// begin on is the same event: the runs' noise moves where a series'
// point falls by one.
type TrendEvent struct {
	Machine, Proxy string
	// After is the index in Trends.Sessions of the session where the
	// new level of most of its changes begins.
	After   int
	Changes []TrendChange // the largest step first
	// Of is how many series the column has on the machine by the
	// metrics of its changes.
	Of int
}

// eventReach is how many sessions of its machine apart a change's new
// level may begin from its event's and still be of it.
const eventReach = 1

// Events are the changes grouped into events, the newest first (by the
// session where the new level begins), then the one of the most series
// first, then the largest step.
func (tr *Trends) Events() []TrendEvent {
	// ord is each session's place among its machine's
	ord := make([]int, len(tr.Sessions))
	seen := map[string]int{}
	for i, s := range tr.Sessions {
		ord[i] = seen[s.Machine]
		seen[s.Machine]++
	}
	type key struct{ machine, proxy string }
	byColumn := map[key][]TrendChange{}
	var keys []key
	for _, c := range tr.Changes() {
		k := key{c.Series.Machine, c.Series.Proxy}
		if byColumn[k] == nil {
			keys = append(keys, k)
		}
		byColumn[k] = append(byColumn[k], c)
	}
	var out []TrendEvent
	for _, k := range keys {
		changes := byColumn[k] // the newest first
		for len(changes) > 0 {
			// the night most begin on, among those within reach of the
			// newest left
			count := map[int]int{}
			for _, c := range changes {
				if ord[changes[0].After]-ord[c.After] <= 2*eventReach {
					count[c.After]++
				}
			}
			at := changes[0].After
			for si, n := range count {
				if n > count[at] || (n == count[at] && si > at) {
					at = si
				}
			}
			ev := TrendEvent{Machine: k.machine, Proxy: k.proxy, After: at}
			var rest []TrendChange
			for _, c := range changes {
				if d := ord[c.After] - ord[at]; d >= -eventReach && d <= eventReach {
					ev.Changes = append(ev.Changes, c)
				} else {
					rest = append(rest, c)
				}
			}
			slices.SortStableFunc(ev.Changes, func(a, b TrendChange) int { return cmpAbs(b.Step, a.Step) })
			ev.Of = tr.seriesOf(ev)
			out = append(out, ev)
			changes = rest
		}
	}
	slices.SortStableFunc(out, func(a, b TrendEvent) int {
		return cmp.Or(b.After-a.After, len(b.Changes)-len(a.Changes), cmpAbs(b.Changes[0].Step, a.Changes[0].Step))
	})
	return out
}

// seriesOf is how many series ev's column has on its machine by the
// metrics of its changes.
func (tr *Trends) seriesOf(ev TrendEvent) int {
	n := 0
	for i := range tr.Series {
		s := &tr.Series[i]
		if s.Machine == ev.Machine && s.Proxy == ev.Proxy &&
			slices.ContainsFunc(ev.Changes, func(c TrendChange) bool { return c.Series.Metric == s.Metric }) {
			n++
		}
	}
	return n
}

// Step is the median of the event's steps, in percent.
func (e TrendEvent) Step() float64 {
	return medianBy(e.Changes, func(c TrendChange) float64 { return c.Step })
}

// medianBy is the median of f over xs.
func medianBy[T any](xs []T, f func(T) float64) float64 {
	v := make([]float64, len(xs))
	for i, x := range xs {
		v[i] = f(x)
	}
	return changepoint.Median(v)
}

// Worse is how many of the event's changes are for the worse.
func (e TrendEvent) Worse() int {
	n := 0
	for _, c := range e.Changes {
		if c.Worse {
			n++
		}
	}
	return n
}

// TrendOutlierNight is the series of a machine that stood out alone on
// one session: a bad night of the machine when it is many of them.
type TrendOutlierNight struct {
	Session int // its index in Trends.Sessions
	Series  []TrendOutlierOf
}

// TrendOutlierOf is an outlier with its series.
type TrendOutlierOf struct {
	Series *TrendSeries
	Off    float64
}

// Off is the median of the night's outliers' distances from their
// levels, in percent.
func (n TrendOutlierNight) Off() float64 {
	return medianBy(n.Series, func(o TrendOutlierOf) float64 { return o.Off })
}

// OutlierNights are the outliers of every series grouped by their
// session, the newest first, each in the series' order.
func (tr *Trends) OutlierNights() []TrendOutlierNight {
	at := map[int]int{}
	var out []TrendOutlierNight
	for i := range tr.Series {
		s := &tr.Series[i]
		for _, o := range s.Outliers {
			j, ok := at[o.Session]
			if !ok {
				j = len(out)
				at[o.Session] = j
				out = append(out, TrendOutlierNight{Session: o.Session})
			}
			out[j].Series = append(out[j].Series, TrendOutlierOf{s, o.Off})
		}
	}
	slices.SortStableFunc(out, func(a, b TrendOutlierNight) int { return b.Session - a.Session })
	return out
}

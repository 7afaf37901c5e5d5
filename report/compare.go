package report

import (
	"bench/report/results"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/perf/benchmath"
)

// The tests that decide whether a change is real.
const (
	// TestU is the Mann-Whitney U test, as benchstat applies it: real
	// when p <= 0.05. It decides where both sides have runs enough for
	// it to ever find a difference (4 and 4, 3 and 5, ...).
	TestU = "U"
	// TestRange is the tables' rule, which decides where there are fewer
	// runs: real when the ranges of the two sides' runs, slowest to
	// fastest, do not overlap.
	TestRange = "range"
	// TestOneRun is what decides where a side has a single run: nothing,
	// as a run alone shows no spread to tell a change from noise
	// (benchstat too says ~ where it has too few).
	TestOneRun = "one run"
)

// thresholds are benchstat's: alpha 0.05.
var thresholds = benchmath.DefaultThresholds

// CompareOptions says what Compare accepts and what it counts as a
// regression.
type CompareOptions struct {
	// AcrossMachines compares the runs of one machine with those of
	// another; without it, old and new must be from the same machines.
	AcrossMachines bool
	// FailOver is the gate, in percent: a real change for the worse
	// beyond this (slower; with a latency metric, a longer latency), or
	// a cell whose new runs all failed, is a regression. Nil: none is.
	FailOver *float64
	// Metric is what a cell's runs are compared by: MetricThroughput
	// (the tables' figure, higher is better; the default) or a latency
	// percentile, MetricP50, MetricP99 or MetricP999 (lower is better),
	// where cells without the latency are left out.
	Metric string
}

// The metrics of CompareOptions.Metric.
const (
	MetricThroughput = "throughput"
	MetricP50        = "p50"
	MetricP99        = "p99"
	MetricP999       = "p99.9"
)

// metric is how a comparison reads a run: its figure (NaN where the run
// has none), the figure's unit, and whether lower is better.
type metric struct {
	of    func(*results.Row) float64
	unit  func(results.Cell) string
	lower bool
}

// metricOf returns the metric named name.
func metricOf(name string) (metric, error) {
	switch name {
	case "", MetricThroughput:
		return metric{of: (*results.Row).Figure, unit: func(c results.Cell) string { return string(c.Unit()) }}, nil
	case MetricP50, MetricP99, MetricP999:
		return metric{of: percentile(name), unit: func(results.Cell) string { return "ms" }, lower: true}, nil
	}
	return metric{}, results.BadInput(fmt.Errorf("unknown metric %q (want %s, %s, %s or %s)", name, MetricThroughput, MetricP50, MetricP99, MetricP999))
}

// Comparison is two sets of runs, old and new, compared cell by cell.
type Comparison struct {
	Old      Side     `json:"old"`
	New      Side     `json:"new"`
	Alpha    float64  `json:"alpha"`                   // the U test's level
	FailOver *float64 `json:"fail_over_pct,omitempty"` // the gate, if any
	// Metric is what the cells compare, when not the throughput: a
	// latency percentile ("p99"), lower being better.
	Metric string   `json:"metric,omitempty"`
	Cells  []Change `json:"cells"`
	// Profiles are where the real changes' CPU went, where both sides'
	// runs kept profiles (AddProfileShifts).
	Profiles []ProfileShifts `json:"profiles,omitempty"`
}

// Side is what one side's runs came from: their sessions, machines and
// the days they ran (the first and the last, or one), and the files they
// were read from where the caller names them (SetFiles).
type Side struct {
	Sessions []string `json:"sessions"`
	Machines []string `json:"machines"`
	Dates    []string `json:"dates,omitempty"`
	Files    []string `json:"files,omitempty"`
}

// dateLayout is how a side's days are written.
const dateLayout = "2006-01-02"

// name names the side in a line: "session 2026-12-02 (epyc.csv) on EPYC
// (2 CPUs), 2026-12-02", its days as "2026-12-01 to 2026-12-02".
func (s Side) name() string {
	n := "session " + strings.Join(s.Sessions, ", ")
	if len(s.Files) > 0 {
		n += " (" + strings.Join(s.Files, ", ") + ")"
	}
	n += " on " + strings.Join(s.Machines, ", ")
	if len(s.Dates) > 0 {
		n += ", " + strings.Join(s.Dates, " to ")
	}
	return n
}

// SetFiles names the files of each side, by their base names, so that the
// title tells apart two sides of the same session and day.
func (c *Comparison) SetFiles(old, new []string) {
	base := func(paths []string) []string {
		out := make([]string, len(paths))
		for i, p := range paths {
			out[i] = filepath.Base(p)
		}
		return out
	}
	c.Old.Files, c.New.Files = base(old), base(new)
}

// Change is one cell, a column under a scenario on a machine, compared.
type Change struct {
	Machine  string        `json:"machine"` // "Old → New" across machines
	Family   string        `json:"family"`
	Mode     results.Mode  `json:"mode"`
	Load     string        `json:"load"`
	Scenario string        `json:"scenario"` // the tables' row label: "ka-1k", "tls-term-ka-1k"
	Unit     string        `json:"unit"`     // "k req/s", "Gbit/s", "k conn/s"
	Proxy    string        `json:"proxy"`
	Group    results.Group `json:"group"`
	Old      *Runs         `json:"old"` // null: no run of the cell on that side
	New      *Runs         `json:"new"`

	// Change is new's median over old's, less one, in percent; null
	// unless both sides have ok runs and old's median is not zero.
	Change *float64 `json:"change_pct"`
	// PlusMinus is the change's ±, in percent: half the width of the
	// range of new over old from the extremes of the runs (new's slowest
	// over old's fastest to new's fastest over old's slowest); null where
	// Change is.
	PlusMinus *float64 `json:"change_pm_pct"`
	// Real says whether the two sides' runs can be told apart, by Test
	// (TestU or TestRange; empty unless both sides have ok runs); P is
	// the U test's p-value where it decided.
	Real bool     `json:"real"`
	Test string   `json:"test,omitempty"`
	P    *float64 `json:"p,omitempty"`
	// Regressed: beyond the gate (CompareOptions.FailOver).
	Regressed bool `json:"regressed"`
}

// Runs is one side of a cell: the figures of its ok runs, in the order
// they ran, their median and range, and how many runs failed.
type Runs struct {
	Median  *float64  `json:"median"` // null without an ok run
	Slowest *float64  `json:"slowest"`
	Fastest *float64  `json:"fastest"`
	Runs    []float64 `json:"runs"`
	Failed  int       `json:"failed"`
}

// ErrAcrossMachines is the error of a comparison of different machines'
// runs that was not asked for.
var ErrAcrossMachines = errors.New("different machines")

// Compare compares the runs of old with those of new, cell by cell: a
// cell is a column (proxy) under a scenario (mode and load) on a machine,
// and its figure that of the tables' throughput (results.Row.Figure); only ok runs
// count. A sweep's runs are its searches, each the rate it found, one
// that found none a failed run (searchResults); a latency metric leaves
// them out, the search having held their latency to its bounds. Cells of
// one side only are kept. Old and new must be
// from the same machines unless opt.AcrossMachines, and then from one
// machine each; sides that are not, or an unknown metric, are refused as
// results.InputError.
func Compare(old, new []results.Row, opt CompareOptions) (*Comparison, error) {
	if len(old) == 0 || len(new) == 0 {
		return nil, results.BadInput(errors.New("compare: no runs in the old or the new files"))
	}
	met, err := metricOf(opt.Metric)
	if err != nil {
		return nil, err
	}
	old, new = searchResults(old), searchResults(new)
	c := &Comparison{Old: sideOf(old), New: sideOf(new), Alpha: thresholds.CompareAlpha, FailOver: opt.FailOver, Cells: []Change{}}
	if opt.Metric != MetricThroughput {
		c.Metric = opt.Metric
	}
	machine := func(r *results.Row) string { return r.Machine }
	if om, nm := c.Old.Machines, c.New.Machines; !sameSet(om, nm) {
		from := fmt.Sprintf("old runs are from %s, new from %s", strings.Join(om, ", "), strings.Join(nm, ", "))
		if !opt.AcrossMachines {
			return nil, results.BadInput(fmt.Errorf("%w: %s", ErrAcrossMachines, from))
		}
		if len(om) > 1 || len(nm) > 1 {
			return nil, results.BadInput(errors.New(from + ": across machines, each side must be of one machine"))
		}
		label := om[0] + " → " + nm[0]
		machine = func(*results.Row) string { return label }
	}

	type key struct {
		machine string
		results.Cell
	}
	type cell struct {
		key
		group  results.Group
		seen   [2]bool
		ok     [2][]*results.Row
		failed [2]int
	}
	var cells []*cell
	byKey := map[key]*cell{}
	machines, scenarios := map[string]int{}, map[string]int{} // order of first appearance
	for side, rows := range [2][]results.Row{old, new} {
		for i := range rows {
			r := &rows[i]
			k := key{machine(r), r.Cell()}
			cl := byKey[k]
			if cl == nil {
				cl = &cell{key: k, group: r.Group}
				byKey[k] = cl
				cells = append(cells, cl)
				firstIndex(machines, k.machine)
				firstIndex(scenarios, k.Scenario())
			}
			cl.seen[side] = true
			if r.Status == results.OK {
				cl.ok[side] = append(cl.ok[side], r)
			} else {
				cl.failed[side]++
			}
		}
	}
	// families in the report's order, then machines, scenarios and the
	// tables' column order: baseline, copy, splice, each as they came
	rank := func(cl *cell) []int {
		return []int{slices.Index(families, familyOf(cl.Mode, cl.Load)), machines[cl.machine],
			scenarios[cl.Scenario()], slices.Index(results.Groups, cl.group)}
	}
	slices.SortStableFunc(cells, func(a, b *cell) int { return slices.Compare(rank(a), rank(b)) })

	for _, cl := range cells {
		ch := Change{Machine: cl.machine, Family: familyOf(cl.Mode, cl.Load), Mode: cl.Mode, Load: cl.Load,
			Scenario: rowLabel(cl.Mode, cl.Load), Unit: met.unit(cl.Cell), Proxy: cl.Proxy, Group: cl.group}
		var s [2]summary
		for side, runs := range []**Runs{&ch.Old, &ch.New} {
			if !cl.seen[side] {
				continue
			}
			s[side] = summarize(cl.ok[side], met.of)
			*runs = runsOf(s[side], cl.failed[side])
		}
		// A latency leaves out the cells whose tool gives none, and the
		// sweeps'.
		if met.lower && (cl.Load == results.LoadSweep || len(figures(append(slices.Clone(cl.ok[0]), cl.ok[1]...), met.of)) == 0) {
			continue
		}
		if s[0].ok && s[1].ok {
			if s[0].med != 0 {
				pct := (s[1].med/s[0].med - 1) * 100
				ch.Change = &pct
			}
			ch.Real, ch.Test, ch.P = Decide(s[0].runs, s[1].runs)
			ch.PlusMinus = plusMinus(s[0], s[1])
		}
		if opt.FailOver != nil {
			worse := ch.Worse(c) && math.Abs(*ch.Change) > *opt.FailOver
			lost := s[0].ok && cl.seen[1] && !s[1].ok
			ch.Regressed = worse || lost
		}
		c.Cells = append(c.Cells, ch)
	}
	return c, nil
}

// Regressions returns the cells that regressed beyond the gate.
func (c *Comparison) Regressions() []Change {
	var out []Change
	for _, ch := range c.Cells {
		if ch.Regressed {
			out = append(out, ch)
		}
	}
	return out
}

// sideOf lists the sessions and machines of rows as they come.
func sideOf(rows []results.Row) Side {
	var s Side
	var first, last time.Time
	for i := range rows {
		if t := rows[i].Started; !t.IsZero() {
			if first.IsZero() || t.Before(first) {
				first = t
			}
			if t.After(last) {
				last = t
			}
		}
		if !slices.Contains(s.Sessions, rows[i].Session) {
			s.Sessions = append(s.Sessions, rows[i].Session)
		}
		if !slices.Contains(s.Machines, rows[i].Machine) {
			s.Machines = append(s.Machines, rows[i].Machine)
		}
	}
	if !first.IsZero() {
		s.Dates = []string{first.UTC().Format(dateLayout)}
		if d := last.UTC().Format(dateLayout); d != s.Dates[0] {
			s.Dates = append(s.Dates, d)
		}
	}
	return s
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// firstIndex gives s the next index in m unless it has one.
func firstIndex(m map[string]int, s string) {
	if _, ok := m[s]; !ok {
		m[s] = len(m)
	}
}

// runsOf is one side of a cell from the summary of its ok runs.
func runsOf(s summary, failed int) *Runs {
	r := &Runs{Runs: s.runs, Failed: failed}
	if r.Runs == nil {
		r.Runs = []float64{}
	}
	if s.ok {
		med, low, high := s.med, s.low, s.high
		r.Median, r.Slowest, r.Fastest = &med, &low, &high
	}
	return r
}

// Decide says whether the runs old and new (their figures) can be told
// apart, and by which test: by the U test (TestU, with its p-value) where
// the two sides have runs enough for it to ever find a difference, by the
// tables' rule (TestRange) otherwise, real when the ranges of the runs do
// not overlap. It is the one rule of "real" of bench: compare's cells
// and the page's headlines. Without a run on a side nothing is real and
// test is empty; with one run on a side nothing is real either
// (TestOneRun).
func Decide(old, new []float64) (real bool, test string, p *float64) {
	if len(old) == 0 || len(new) == 0 {
		return false, "", nil
	}
	if len(old) == 1 || len(new) == 1 {
		return false, TestOneRun, nil
	}
	if uDecides(len(old), len(new)) {
		cmp := uTest(old, new)
		return cmp.P <= cmp.Alpha, TestU, &cmp.P
	}
	oldLow, oldHigh := slices.Min(old), slices.Max(old)
	newLow, newHigh := slices.Min(new), slices.Max(new)
	overlap := reaches(oldHigh, newLow) && reaches(newHigh, oldLow)
	return !overlap, TestRange, nil
}

// uDecides reports whether the U test can ever tell apart samples of n1
// and n2 runs: whether it does for two that do not overlap at all. With
// 3 runs a side it cannot (p is at least 0.1); with 4 it can.
func uDecides(n1, n2 int) bool {
	a, b := make([]float64, n1), make([]float64, n2)
	for i := range a {
		a[i] = float64(i)
	}
	for i := range b {
		b[i] = float64(n1 + i)
	}
	cmp := uTest(a, b)
	return cmp.P <= cmp.Alpha
}

// uTest is benchstat's comparison of two samples: Mann-Whitney U.
func uTest(a, b []float64) benchmath.Comparison {
	// NewSample sorts its values in place; a cell's runs keep their order
	return benchmath.AssumeNothing.Compare(
		benchmath.NewSample(slices.Clone(a), &thresholds),
		benchmath.NewSample(slices.Clone(b), &thresholds))
}

// plusMinus is Change.PlusMinus of the two sides' runs.
func plusMinus(old, new summary) *float64 {
	if old.low <= 0 || old.med == 0 {
		return nil
	}
	pm := (new.high/old.low - new.low/old.high) / 2 * 100
	return &pm
}

// Worse reports whether the cell's change is real and for the worse:
// slower, or with a latency metric, longer.
func (ch *Change) Worse(c *Comparison) bool {
	return ch.Real && ch.Change != nil && (*ch.Change < 0) == (c.Metric == "")
}

// Better reports whether the cell's change is real and for the better.
func (ch *Change) Better(c *Comparison) bool {
	return ch.Real && ch.Change != nil && *ch.Change != 0 && !ch.Worse(c)
}

// compared reports whether both sides have ok runs and a change.
func (ch *Change) compared() bool { return ch.Change != nil }

// name names the cell in a line: "nginx http-ka-1k", with its machine
// after it where the comparison has more than one.
func (ch *Change) name(c *Comparison) string {
	n := ch.Proxy + " " + results.ScenarioName(ch.Mode, ch.Load)
	if len(c.Old.Machines) > 1 || len(c.New.Machines) > 1 {
		n += " on " + ch.Machine
	}
	return n
}

// Summary is the comparison in one line, the first of its text: how
// many cells changed for real, for the worse and for the better, each
// count with its largest change, and how many are within noise:
// "1 real regression (largest: nginx http-ka-1k -20.0% ±1%), no real
// improvement, 41 cells within noise"; "No real regression, ...".
func (c *Comparison) Summary() string {
	var worse, better []*Change
	noise, apart := 0, 0
	for i := range c.Cells {
		ch := &c.Cells[i]
		switch {
		case ch.Worse(c):
			worse = append(worse, ch)
		case ch.Better(c):
			better = append(better, ch)
		case ch.compared():
			noise++
		default:
			apart++
		}
	}
	largest := func(what string, chs []*Change) string {
		if len(chs) == 0 {
			return "no real " + what
		}
		top := slices.MaxFunc(chs, func(a, b *Change) int { return cmpAbs(*a.Change, *b.Change) })
		return fmt.Sprintf("%s (largest: %s %s)", plural(len(chs), "real "+what), top.name(c), top.changeText())
	}
	parts := []string{largest("regression", worse), largest("improvement", better), plural(noise, "cell") + " within noise"}
	if apart > 0 {
		parts = append(parts, plural(apart, "cell")+" not compared (one side only, or no ok run on a side)")
	}
	line := strings.Join(parts, ", ")
	return strings.ToUpper(line[:1]) + line[1:]
}

// cmpAbs compares a and b by their magnitude.
func cmpAbs(a, b float64) int {
	switch a, b = math.Abs(a), math.Abs(b); {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// plural is n of what: "1 cell", "3 cells".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// changeText is the change with its ±: "-20.0% ±1%".
func (ch *Change) changeText() string {
	if ch.Change == nil {
		return "–"
	}
	s := fmt.Sprintf("%+.1f%%", *ch.Change)
	if ch.PlusMinus != nil {
		pm := *ch.PlusMinus
		prec := 0
		if pm < 1 {
			prec = 1
		}
		s += " ±" + fixed(pm, prec) + "%"
	}
	return s
}

// delta is a cell's change column, benchstat's: the change with its ±
// where it is real, "~" where it is not, "–" without one.
func (ch *Change) delta() string {
	if ch.compared() && !ch.Real {
		return "~"
	}
	return ch.changeText()
}

// verdict is a cell's last column: its reason, with ", regressed" past
// the gate.
func (ch *Change) verdict() string {
	if ch.Regressed {
		return ch.reason() + ", regressed"
	}
	return ch.reason()
}

// reason is what the test said of a cell, "p=0.008 n=5+5" (benchstat's
// p-value and runs of each side) or "ranges apart n=3+3" ("overlap"), or
// why none said, "one run n=1+3", "only in old", "no ok run in new".
func (ch *Change) reason() string {
	switch {
	case ch.Old == nil:
		return "only in new"
	case ch.New == nil:
		return "only in old"
	case ch.Old.Median == nil && ch.New.Median == nil:
		return "no ok run"
	case ch.Old.Median == nil:
		return "no ok run in old"
	case ch.New.Median == nil:
		return "no ok run in new"
	}
	n := fmt.Sprintf("n=%d+%d", len(ch.Old.Runs), len(ch.New.Runs))
	switch {
	case ch.P != nil:
		return "p=" + fixed(*ch.P, 3) + " " + n
	case ch.Test == TestOneRun:
		return "one run " + n
	case ch.Real:
		return "ranges apart " + n
	}
	return "ranges overlap " + n
}

// compareHeader is the header of a comparison's tables.
var compareHeader = []string{"scenario", "proxy", "old", "new", "change", "test"}

// textRow is a cell as a row of text.
func (ch *Change) textRow() []string {
	median := func(r *Runs) string {
		if r == nil || r.Median == nil {
			return "–"
		}
		return fixed(*r.Median, 1)
	}
	return []string{ch.Scenario + ", " + ch.Unit, ch.Proxy, median(ch.Old), median(ch.New), ch.delta(), ch.verdict()}
}

// Describe names a cell and its change in one line, for messages:
// "ARM (M4), HTTP proxy ka-1k, nginx: 37.3 → 33.0 k req/s (-11.5% ±2%, p=0.008 n=5+5)".
func (ch *Change) Describe() string {
	r := ch.textRow()
	how := ch.reason()
	if ch.compared() {
		how = ch.changeText() + ", " + how
	}
	return fmt.Sprintf("%s, %s %s, %s: %s → %s %s (%s)", ch.Machine, ch.Family, ch.Scenario, ch.Proxy, r[2], r[3], ch.Unit, how)
}

// CompareTable is a table of a comparison: the cells of a family on a
// machine, and the geometric mean of their changes.
type CompareTable struct {
	Family  string   `json:"family"`
	Machine string   `json:"machine"`
	Cells   []Change `json:"-"`
	// Geomean is the geometric mean of new's median over old's of the
	// cells with both (and both above zero), less one, in percent,
	// benchstat's "geomean" row; null without such a cell. GeomeanOf
	// is how many cells it is of.
	Geomean   *float64 `json:"geomean_pct"`
	GeomeanOf int      `json:"geomean_of"`
}

// Tables splits the comparison's cells into its tables, a family on a
// machine each, in order.
func (c *Comparison) Tables() []CompareTable {
	var out []CompareTable
	for i := 0; i < len(c.Cells); {
		t := CompareTable{Family: c.Cells[i].Family, Machine: c.Cells[i].Machine}
		for ; i < len(c.Cells) && c.Cells[i].Family == t.Family && c.Cells[i].Machine == t.Machine; i++ {
			t.Cells = append(t.Cells, c.Cells[i])
		}
		t.Geomean, t.GeomeanOf = geomean(t.Cells)
		out = append(out, t)
	}
	return out
}

// geomean is CompareTable.Geomean of cells, and how many it is of.
func geomean(cells []Change) (*float64, int) {
	sum, n := 0.0, 0
	for _, ch := range cells {
		if !ch.compared() || *ch.Old.Median <= 0 || *ch.New.Median <= 0 {
			continue
		}
		sum += math.Log(*ch.New.Median / *ch.Old.Median)
		n++
	}
	if n == 0 {
		return nil, 0
	}
	g := (math.Exp(sum/float64(n)) - 1) * 100
	return &g, n
}

// geomeanRow is a table's geomean as a row of text.
func (t *CompareTable) geomeanRow() []string {
	change := "–"
	if t.Geomean != nil {
		change = fmt.Sprintf("%+.1f%%", *t.Geomean)
	}
	of := "of " + plural(t.GeomeanOf, "cell")
	if t.GeomeanOf == 0 {
		of = "no cell on both sides"
	}
	return []string{"geomean", "", "", "", change, of}
}

// rows are the table's rows of text: its cells and its geomean.
func (t *CompareTable) rows() [][]string {
	rows := make([][]string, 0, len(t.Cells)+1)
	for i := range t.Cells {
		rows = append(rows, t.Cells[i].textRow())
	}
	return append(rows, t.geomeanRow())
}

// title is the comparison's heading, each side named by its sessions,
// machines and days (Side.name).
func (c *Comparison) title() string {
	title := "Comparison: old " + c.Old.name() + "; new " + c.New.name()
	if c.Metric != "" {
		title += "; latency " + c.Metric + " (lower is better)"
	}
	return title
}

// Changes are the cells whose change is real, the largest first (by its
// size, either way), as the tables order them among equals.
func (c *Comparison) Changes() []Change {
	var out []Change
	for _, ch := range c.Cells {
		if ch.Real && ch.compared() {
			out = append(out, ch)
		}
	}
	slices.SortStableFunc(out, func(a, b Change) int { return cmpAbs(*b.Change, *a.Change) })
	return out
}

// ColumnChange is a column (proxy) across the comparison's tables: the
// geometric mean of its cells' changes and its real changes each way.
type ColumnChange struct {
	Proxy string `json:"proxy"`
	// Geomean is as CompareTable's, of the column's cells on every table;
	// null without a cell on both sides. GeomeanOf is how many it is of.
	Geomean   *float64 `json:"geomean_pct"`
	GeomeanOf int      `json:"geomean_of"`
	Worse     int      `json:"worse"`  // real changes for the worse
	Better    int      `json:"better"` // real changes for the better
	// Largest is the column's largest real change, in percent; null
	// without one.
	Largest *float64 `json:"largest_pct"`
}

// Columns rolls the comparison up by column: those with real changes
// first, the most first, then by the size of their geomean.
func (c *Comparison) Columns() []ColumnChange {
	var names []string
	byName := map[string][]Change{}
	for _, ch := range c.Cells {
		if _, ok := byName[ch.Proxy]; !ok {
			names = append(names, ch.Proxy)
		}
		byName[ch.Proxy] = append(byName[ch.Proxy], ch)
	}
	out := make([]ColumnChange, 0, len(names))
	for _, name := range names {
		cells := byName[name]
		cc := ColumnChange{Proxy: name}
		cc.Geomean, cc.GeomeanOf = geomean(cells)
		for i := range cells {
			ch := &cells[i]
			switch {
			case ch.Worse(c):
				cc.Worse++
			case ch.Better(c):
				cc.Better++
			default:
				continue
			}
			if cc.Largest == nil || cmpAbs(*ch.Change, *cc.Largest) > 0 {
				v := *ch.Change
				cc.Largest = &v
			}
		}
		out = append(out, cc)
	}
	size := func(g *float64) float64 {
		if g == nil {
			return -1
		}
		return math.Abs(*g)
	}
	slices.SortStableFunc(out, func(a, b ColumnChange) int {
		if d := (b.Worse + b.Better) - (a.Worse + a.Better); d != 0 {
			return d
		}
		return cmpAbs(size(b.Geomean), size(a.Geomean))
	})
	return out
}

// columnsHeader is the header of the roll-up by column.
var columnsHeader = []string{"proxy", "geomean", "real changes", "largest"}

// textRow is a column's roll-up as a row of text.
func (cc *ColumnChange) textRow() []string {
	g := "no cell on both sides"
	if cc.Geomean != nil {
		g = fmt.Sprintf("%+.1f%% of %s", *cc.Geomean, plural(cc.GeomeanOf, "cell"))
	}
	real := "none"
	if cc.Worse+cc.Better > 0 {
		real = fmt.Sprintf("%d worse, %d better", cc.Worse, cc.Better)
	}
	largest := "–"
	if cc.Largest != nil {
		largest = fmt.Sprintf("%+.1f%%", *cc.Largest)
	}
	return []string{cc.Proxy, g, real, largest}
}

// changesHeader is the header of the table of real changes.
var changesHeader = []string{"table", "scenario", "proxy", "old", "new", "change", "test"}

// changeRow is a real change as a row of the table of changes: its
// table (family, and machine where there are more than one) before the
// cell's row.
func (ch *Change) changeRow(c *Comparison) []string {
	table := ch.Family
	if len(c.Old.Machines) > 1 || len(c.New.Machines) > 1 || c.Old.Machines[0] != c.New.Machines[0] {
		table += " on " + ch.Machine
	}
	return append([]string{table}, ch.textRow()...)
}

// changeRows are the rows of the table of real changes.
func (c *Comparison) changeRows() [][]string {
	var rows [][]string
	for _, ch := range c.Changes() {
		rows = append(rows, ch.changeRow(c))
	}
	return rows
}

// columnRows are the rows of the roll-up by column.
func (c *Comparison) columnRows() [][]string {
	var rows [][]string
	for _, cc := range c.Columns() {
		rows = append(rows, cc.textRow())
	}
	return rows
}

// The headings of a comparison's first two sections.
const (
	headChanges = "Real changes, largest first"
	headColumns = "By column"
	noChange    = "No real change."
)

// legend says what the columns of a comparison's tables mean.
func (c *Comparison) legend() string {
	return fmt.Sprintf("Change: the new median over the old, in percent, where the change is real; "+
		"± is half the width of the range of new over old from the extremes of the runs (new's slowest over old's fastest to new's fastest over old's slowest); "+
		"~: the runs of the two sides cannot be told apart. Test: what decided, with the runs of each side (n=old+new); "+
		"p: the Mann-Whitney U test, real at p <= %g, where both sides have runs enough for it; "+
		"ranges: the tables' rule where they have not, real when the ranges of the runs (slowest to fastest) are apart, not when they overlap. "+
		"Geomean: the geometric mean of new over old of the table's cells with both (by column: of the column's cells on every table); "+
		"real changes: how many of the column's cells changed for real, for the worse and for the better; largest: the largest of them.", c.Alpha)
}

// WriteComparison writes c to w in format (md, tsv, json or html), in
// one write: its summary line (Summary), the real changes, largest first
// (Changes), the roll-up by column (Columns), then a table per family and
// machine, as the report's, each with its geomean row; in html, with a
// chart of the changes with their intervals under each table.
func WriteComparison(w io.Writer, c *Comparison, format string) error {
	if format == FormatHTML {
		return writeComparisonHTML(w, c)
	}
	if err := checkFormat(format); err != nil {
		return results.BadInput(fmt.Errorf("unknown format %q (want %s, %s, %s or %s)", format, FormatMarkdown, FormatTSV, FormatJSON, FormatHTML))
	}
	tables := c.Tables()
	if format == FormatJSON {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		if tables == nil {
			tables = []CompareTable{}
		}
		changes := c.Changes()
		if changes == nil {
			changes = []Change{}
		}
		return enc.Encode(struct {
			*Comparison
			Summary string         `json:"summary"`
			Changes []Change       `json:"changes"`
			Columns []ColumnChange `json:"columns"`
			Tables  []CompareTable `json:"tables"`
		}{c, c.Summary(), changes, c.Columns(), tables})
	}
	md := format != FormatTSV
	var buf bytes.Buffer
	buf.WriteString(mdOnly(md, c.Summary()) + "\n\n")
	writeHeading(&buf, md, 1, c.title())
	grid := func(header []string, rows [][]string, what string) error {
		if md {
			if err := markdownGrid(&buf, slices.Clone(header), rows); err != nil {
				return fmt.Errorf("render the comparison's %s: %w", what, err)
			}
		} else {
			tsvGrid(&buf, header, rows)
		}
		buf.WriteString("\n")
		return nil
	}
	if len(c.Cells) > 0 {
		writeHeading(&buf, md, 2, headChanges)
		if rows := c.changeRows(); len(rows) > 0 {
			if err := grid(changesHeader, rows, "changes"); err != nil {
				return err
			}
		} else {
			buf.WriteString(noChange + "\n\n")
		}
		writeHeading(&buf, md, 2, headColumns)
		if err := grid(columnsHeader, c.columnRows(), "columns"); err != nil {
			return err
		}
	}
	for i, t := range tables {
		if i == 0 || t.Family != tables[i-1].Family {
			writeHeading(&buf, md, 2, t.Family)
		}
		writeHeading(&buf, md, 3, t.Machine)
		if err := grid(compareHeader, t.rows(), fmt.Sprintf("table of %q on %s", t.Family, t.Machine)); err != nil {
			return err
		}
	}
	if md && len(c.Cells) > 0 {
		buf.WriteString(c.legend() + "\n")
	}
	if err := writeShiftsText(&buf, c, md); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

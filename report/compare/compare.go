// Package compare is what bench compare writes: old sessions' runs set
// against new ones cell by cell (Compare), each change with its range and
// whether it is real (report.Decide), the regressions past a gate, the
// shifts of the profiles of a cell's median runs, as markdown, TSV, JSON
// or a page with a chart per table (Write).
package compare

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"bench/inputerr"
	"bench/report"
	"bench/results"
)

// Options says what Compare accepts and what it counts as a
// regression.
type Options struct {
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
	Old      *report.Runs  `json:"old"` // null: no run of the cell on that side
	New      *report.Runs  `json:"new"`

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
	// Regressed: beyond the gate (Options.FailOver).
	Regressed bool `json:"regressed"`
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
// inputerr.Error.
func Compare(old, new []results.Row, opt Options) (*Comparison, error) {
	if len(old) == 0 || len(new) == 0 {
		return nil, inputerr.Bad(errors.New("compare: no runs in the old or the new files"))
	}
	met, err := report.MetricOf(opt.Metric)
	if err != nil {
		return nil, err
	}
	old, new = report.SearchResults(old), report.SearchResults(new)
	c := &Comparison{Old: sideOf(old), New: sideOf(new), Alpha: report.Thresholds.CompareAlpha, FailOver: opt.FailOver, Cells: []Change{}}
	if opt.Metric != report.MetricThroughput {
		c.Metric = opt.Metric
	}
	machine, err := compareMachine(c.Old.Machines, c.New.Machines, opt)
	if err != nil {
		return nil, err
	}
	for _, cl := range compareCells(old, new, machine) {
		if ch, ok := cl.change(c, met, opt.FailOver); ok {
			c.Cells = append(c.Cells, ch)
		}
	}
	return c, nil
}

// compareMachine is the machine a run's cell is compared on: its own,
// when old and new runs are from the same machines (om and nm), or, when
// opt.AcrossMachines is set and each side is of one
// machine, both machines' names in one label. Other machines are refused
// as inputerr.Error.
func compareMachine(om, nm []string, opt Options) (func(*results.Row) string, error) {
	machine := func(r *results.Row) string { return r.Machine }
	if !sameSet(om, nm) {
		from := fmt.Sprintf("old runs are from %s, new from %s", strings.Join(om, ", "), strings.Join(nm, ", "))
		if !opt.AcrossMachines {
			return nil, inputerr.Bad(fmt.Errorf("%w: %s", ErrAcrossMachines, from))
		}
		if len(om) > 1 || len(nm) > 1 {
			return nil, inputerr.Bad(errors.New(from + ": across machines, each side must be of one machine"))
		}
		label := om[0] + " → " + nm[0]
		machine = func(*results.Row) string { return label }
	}
	return machine, nil
}

// compareKey is a compared cell: a scenario's column on a machine.
type compareKey struct {
	machine string
	results.Cell
}

// compareCell is a cell's runs on both sides, 0 the old and 1 the new:
// whether the side has any, its ok runs and how many failed.
type compareCell struct {
	compareKey
	group  results.Group
	seen   [2]bool
	ok     [2][]*results.Row
	failed [2]int
}

// compareCells are the cells of the old and new runs, each on the
// machine machine names: in the report's order of families, then
// machines, scenarios and the tables' column order (baseline, copy,
// splice), each as they came.
func compareCells(old, new []results.Row, machine func(*results.Row) string) []*compareCell {
	var cells []*compareCell
	byKey := map[compareKey]*compareCell{}
	machines, scenarios := map[string]int{}, map[string]int{} // order of first appearance
	for side, rows := range [2][]results.Row{old, new} {
		for i := range rows {
			r := &rows[i]
			k := compareKey{machine(r), r.Cell()}
			cl := byKey[k]
			if cl == nil {
				cl = &compareCell{compareKey: k, group: r.Group}
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
	rank := func(cl *compareCell) []int {
		return []int{slices.Index(report.Families, report.FamilyOf(cl.Mode, cl.Load)), machines[cl.machine],
			scenarios[cl.Scenario()], slices.Index(results.Groups, cl.group)}
	}
	slices.SortStableFunc(cells, func(a, b *compareCell) int { return slices.Compare(rank(a), rank(b)) })
	return cells
}

// change is the cell compared in c by metric met: each side's figures,
// and, where both have some, the change and whether it is real; with
// failOver, whether it regressed beyond it. False for a cell a latency
// metric leaves out: a sweep's, or one whose tool gives no latency.
func (cl *compareCell) change(c *Comparison, met report.Metric, failOver *float64) (Change, bool) {
	ch := Change{Machine: cl.machine, Family: report.FamilyOf(cl.Mode, cl.Load), Mode: cl.Mode, Load: cl.Load,
		Scenario: report.RowLabel(cl.Mode, cl.Load), Unit: met.Unit(cl.Cell), Proxy: cl.Proxy, Group: cl.group}
	var s [2]report.Summary
	for side, runs := range []**report.Runs{&ch.Old, &ch.New} {
		if !cl.seen[side] {
			continue
		}
		s[side] = report.Summarize(cl.ok[side], met.Of)
		*runs = report.RunsOf(s[side], cl.failed[side])
	}
	// A latency leaves out the cells whose tool gives none, and the
	// sweeps'.
	if met.Lower && (cl.Load == results.LoadSweep || len(report.Figures(append(slices.Clone(cl.ok[0]), cl.ok[1]...), met.Of)) == 0) {
		return Change{}, false
	}
	if s[0].OK && s[1].OK {
		if s[0].Median != 0 {
			pct := (s[1].Median/s[0].Median - 1) * 100
			ch.Change = &pct
		}
		ch.Real, ch.Test, ch.P = report.Decide(s[0].Runs, s[1].Runs)
		ch.PlusMinus = report.PlusMinus(s[0], s[1])
	}
	if failOver != nil {
		worse := ch.Worse(c) && math.Abs(*ch.Change) > *failOver
		lost := s[0].OK && cl.seen[1] && !s[1].OK
		ch.Regressed = worse || lost
	}
	return ch, true
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

// Table is a table of a comparison: the cells of a family on a
// machine, and the geometric mean of their changes.
type Table struct {
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
func (c *Comparison) Tables() []Table {
	var out []Table
	for i := 0; i < len(c.Cells); {
		t := Table{Family: c.Cells[i].Family, Machine: c.Cells[i].Machine}
		for ; i < len(c.Cells) && c.Cells[i].Family == t.Family && c.Cells[i].Machine == t.Machine; i++ {
			t.Cells = append(t.Cells, c.Cells[i])
		}
		t.Geomean, t.GeomeanOf = geomean(t.Cells)
		out = append(out, t)
	}
	return out
}

// geomean is Table.Geomean of cells, and how many it is of.
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

// Changes are the cells whose change is real, the largest first (by its
// size, either way), as the tables order them among equals.
func (c *Comparison) Changes() []Change {
	var out []Change
	for _, ch := range c.Cells {
		if ch.Real && ch.compared() {
			out = append(out, ch)
		}
	}
	slices.SortStableFunc(out, func(a, b Change) int { return report.CmpAbs(*b.Change, *a.Change) })
	return out
}

// ColumnChange is a column (proxy) across the comparison's tables: the
// geometric mean of its cells' changes and its real changes each way.
type ColumnChange struct {
	Proxy string `json:"proxy"`
	// Geomean is as Table's, of the column's cells on every table;
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
			if cc.Largest == nil || report.CmpAbs(*ch.Change, *cc.Largest) > 0 {
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
		return report.CmpAbs(size(b.Geomean), size(a.Geomean))
	})
	return out
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

package report

import (
	"bench/report/results"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

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
		return metric{of: Figure, unit: func(c results.Cell) string { return string(c.Unit()) }}, nil
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
}

// Side is what one side's runs came from.
type Side struct {
	Sessions []string `json:"sessions"`
	Machines []string `json:"machines"`
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
// and its figure that of the tables' throughput (see throughput); only
// ok runs count. Cells of one side only are kept. Old and new must be
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
		return []int{slices.Index(families, familyOf(cl.Mode)), machines[cl.machine],
			scenarios[cl.Scenario()], slices.Index(results.Groups, cl.group)}
	}
	slices.SortStableFunc(cells, func(a, b *cell) int { return slices.Compare(rank(a), rank(b)) })

	for _, cl := range cells {
		ch := Change{Machine: cl.machine, Family: familyOf(cl.Mode), Mode: cl.Mode, Load: cl.Load,
			Scenario: rowLabel(cl.Mode, cl.Load), Unit: met.unit(cl.Cell), Proxy: cl.Proxy, Group: cl.group}
		var s [2]summary
		for side, runs := range []**Runs{&ch.Old, &ch.New} {
			if !cl.seen[side] {
				continue
			}
			s[side] = summarize(cl.ok[side], met.of)
			*runs = runsOf(s[side], cl.failed[side])
		}
		// A latency leaves out the cells whose tool gives none.
		if met.lower && len(figures(append(slices.Clone(cl.ok[0]), cl.ok[1]...), met.of)) == 0 {
			continue
		}
		if s[0].ok && s[1].ok {
			if s[0].med != 0 {
				pct := (s[1].med/s[0].med - 1) * 100
				ch.Change = &pct
			}
			ch.Real, ch.Test, ch.P = decide(s[0], s[1])
		}
		if opt.FailOver != nil {
			slower := ch.Real && ch.Change != nil && *ch.Change < -*opt.FailOver
			if met.lower {
				slower = ch.Real && ch.Change != nil && *ch.Change > *opt.FailOver
			}
			lost := s[0].ok && cl.seen[1] && !s[1].ok
			ch.Regressed = slower || lost
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
	for i := range rows {
		if !slices.Contains(s.Sessions, rows[i].Session) {
			s.Sessions = append(s.Sessions, rows[i].Session)
		}
		if !slices.Contains(s.Machines, rows[i].Machine) {
			s.Machines = append(s.Machines, rows[i].Machine)
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

// decide says whether old's and new's runs can be told apart: by the U
// test where the two sides have runs enough for it to ever find a
// difference, by the tables' rule otherwise (the ranges do not overlap).
func decide(old, new summary) (real bool, test string, p *float64) {
	if uDecides(len(old.runs), len(new.runs)) {
		cmp := uTest(old.runs, new.runs)
		return cmp.P <= cmp.Alpha, TestU, &cmp.P
	}
	overlap := reaches(old.high, new.low) && reaches(new.high, old.low)
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

// verdict is a cell's last column in text: "yes (U)", "no (range)",
// "only in old", "no ok run in new", with ", regressed" past the gate.
func (ch *Change) verdict() string {
	var v string
	switch {
	case ch.Old == nil:
		v = "only in new"
	case ch.New == nil:
		v = "only in old"
	case ch.Old.Median == nil && ch.New.Median == nil:
		v = "no ok run"
	case ch.Old.Median == nil:
		v = "no ok run in old"
	case ch.New.Median == nil:
		v = "no ok run in new"
	case ch.Real:
		v = "yes (" + ch.Test + ")"
	default:
		v = "no (" + ch.Test + ")"
	}
	if ch.Regressed {
		v += ", regressed"
	}
	return v
}

// compareHeader is the header of a comparison's tables.
var compareHeader = []string{"scenario", "proxy", "old", "new", "change", "real (test)"}

// textRow is a cell as a row of text.
func (ch *Change) textRow() []string {
	median := func(r *Runs) string {
		if r == nil || r.Median == nil {
			return "–"
		}
		return fixed(*r.Median, 1)
	}
	change := "–"
	if ch.Change != nil {
		change = fmt.Sprintf("%+.1f%%", *ch.Change)
	}
	return []string{ch.Scenario + ", " + ch.Unit, ch.Proxy, median(ch.Old), median(ch.New), change, ch.verdict()}
}

// Describe names a cell and its change in one line, for messages:
// "ARM (M4), HTTP proxy ka-1k, nginx: 37.3 → 33.0 k req/s (-11.5%, U)".
func (ch *Change) Describe() string {
	r := ch.textRow()
	how := r[4] + ", " + ch.Test
	if ch.Test == "" {
		how = ch.verdict()
	}
	return fmt.Sprintf("%s, %s %s, %s: %s → %s %s (%s)", ch.Machine, ch.Family, ch.Scenario, ch.Proxy, r[2], r[3], ch.Unit, how)
}

// WriteComparison writes c to w in format (md, tsv or json), in one
// write: a table per family and machine, as the report's.
func WriteComparison(w io.Writer, c *Comparison, format string) error {
	if err := checkFormat(format); err != nil {
		return err
	}
	if format == FormatJSON {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		return enc.Encode(c)
	}
	md := format != FormatTSV
	var buf bytes.Buffer
	title := "Comparison: old " + strings.Join(c.Old.Sessions, ", ") + ", new " + strings.Join(c.New.Sessions, ", ")
	if c.Metric != "" {
		title += ", latency " + c.Metric + " (lower is better)"
	}
	writeHeading(&buf, md, 1, title)
	for i := 0; i < len(c.Cells); {
		fam, machine := c.Cells[i].Family, c.Cells[i].Machine
		if i == 0 || fam != c.Cells[i-1].Family {
			writeHeading(&buf, md, 2, fam)
		}
		writeHeading(&buf, md, 3, machine)
		var rows [][]string
		for ; i < len(c.Cells) && c.Cells[i].Family == fam && c.Cells[i].Machine == machine; i++ {
			rows = append(rows, c.Cells[i].textRow())
		}
		if md {
			if err := markdownGrid(&buf, slices.Clone(compareHeader), rows); err != nil {
				return fmt.Errorf("render the comparison of %q on %s: %w", fam, machine, err)
			}
		} else {
			tsvGrid(&buf, compareHeader, rows)
		}
		buf.WriteString("\n")
	}
	if md && len(c.Cells) > 0 {
		fmt.Fprintf(&buf, "Change: the new median over the old, in percent. Real: whether the runs of the two sides can be told apart; "+
			"U: the Mann-Whitney U test at p <= %g, where both sides have runs enough for it; "+
			"range: the tables' rule where they have not, real when the ranges of the runs (slowest to fastest) do not overlap.\n", c.Alpha)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

package compare

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"bench/inputerr"
	"bench/internal/text"
	"bench/report"
	"bench/results"
)

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
		top := slices.MaxFunc(chs, func(a, b *Change) int { return report.CmpAbs(*a.Change, *b.Change) })
		return fmt.Sprintf("%s (largest: %s %s)", text.Plural(len(chs), "real "+what), top.name(c), top.changeText())
	}
	parts := []string{largest("regression", worse), largest("improvement", better), text.Plural(noise, "cell") + " within noise"}
	if apart > 0 {
		parts = append(parts, text.Plural(apart, "cell")+" not compared (one side only, or no ok run on a side)")
	}
	line := strings.Join(parts, ", ")
	return strings.ToUpper(line[:1]) + line[1:]
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
		s += " ±" + text.Fixed(pm, prec) + "%"
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
		return "p=" + text.Fixed(*ch.P, 3) + " " + n
	case ch.Test == report.TestOneRun:
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
	median := func(r *report.Runs) string {
		if r == nil || r.Median == nil {
			return "–"
		}
		return text.Fixed(*r.Median, 1)
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

// geomeanRow is a table's geomean as a row of text.
func (t *Table) geomeanRow() []string {
	change := "–"
	if t.Geomean != nil {
		change = fmt.Sprintf("%+.1f%%", *t.Geomean)
	}
	of := "of " + text.Plural(t.GeomeanOf, "cell")
	if t.GeomeanOf == 0 {
		of = "no cell on both sides"
	}
	return []string{"geomean", "", "", "", change, of}
}

// rows are the table's rows of text: its cells and its geomean.
func (t *Table) rows() [][]string {
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

// columnsHeader is the header of the roll-up by column.
var columnsHeader = []string{"proxy", "geomean", "real changes", "largest"}

// textRow is a column's roll-up as a row of text.
func (cc *ColumnChange) textRow() []string {
	g := "no cell on both sides"
	if cc.Geomean != nil {
		g = fmt.Sprintf("%+.1f%% of %s", *cc.Geomean, text.Plural(cc.GeomeanOf, "cell"))
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

// Write writes c to w in format (md, tsv, json or html), in
// one write: its summary line (Summary), the real changes, largest first
// (Changes), the roll-up by column (Columns), then a table per family and
// machine, as the report's, each with its geomean row; in html, with a
// chart of the changes with their intervals under each table.
func Write(w io.Writer, c *Comparison, format string) error {
	if format == report.FormatHTML {
		return writeComparisonHTML(w, c)
	}
	if err := report.CheckFormat(format); err != nil {
		return inputerr.Bad(fmt.Errorf("unknown format %q (want %s, %s, %s or %s)", format, report.FormatMarkdown, report.FormatTSV, report.FormatJSON, report.FormatHTML))
	}
	tables := c.Tables()
	if format == report.FormatJSON {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		if tables == nil {
			tables = []Table{}
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
			Tables  []Table        `json:"tables"`
		}{c, c.Summary(), changes, c.Columns(), tables})
	}
	f := report.TextWriterOf(format)
	var buf bytes.Buffer
	buf.WriteString(f.Text(c.Summary()) + "\n\n")
	f.Heading(&buf, 1, c.title())
	grid := func(header []string, rows [][]string, what string) error {
		if err := f.Grid(&buf, header, rows); err != nil {
			return fmt.Errorf("render the comparison's %s: %w", what, err)
		}
		buf.WriteString("\n")
		return nil
	}
	if len(c.Cells) > 0 {
		f.Heading(&buf, 2, headChanges)
		if rows := c.changeRows(); len(rows) > 0 {
			if err := grid(changesHeader, rows, "changes"); err != nil {
				return err
			}
		} else {
			buf.WriteString(noChange + "\n\n")
		}
		f.Heading(&buf, 2, headColumns)
		if err := grid(columnsHeader, c.columnRows(), "columns"); err != nil {
			return err
		}
	}
	for i, t := range tables {
		if i == 0 || t.Family != tables[i-1].Family {
			f.Heading(&buf, 2, t.Family)
		}
		f.Heading(&buf, 3, t.Machine)
		if err := grid(compareHeader, t.rows(), fmt.Sprintf("table of %q on %s", t.Family, t.Machine)); err != nil {
			return err
		}
	}
	if len(c.Cells) > 0 {
		f.Legend(&buf, c.legend())
	}
	if err := writeShiftsText(&buf, c, f); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

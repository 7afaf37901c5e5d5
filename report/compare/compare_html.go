package compare

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strings"

	"bench/internal/text"
	"bench/report"
	"bench/report/chart"
	"bench/report/htmldoc"
	"bench/results"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The comparison's page: one file as the report's (html.go), its style
// the report's: the summary line, the real changes largest first, the
// roll-up by column, then each table of the text followed by its chart
// of the changes with their intervals (compareChart). Each part is a
// section of its own (comparisonSections), in the text's order.

// The classes of the comparison's tables on the page.
const (
	classCompare = "compare"
	classChanges = "changes"
	classColumns = "columns"
)

// writeComparisonHTML writes the comparison's page in one write.
func writeComparisonHTML(w io.Writer, c *Comparison) error {
	var b bytes.Buffer
	title := "bench: " + c.title()
	htmldoc.Head(&b, title, htmldoc.Style, "tr.geomean th,tr.geomean td{border-top:2px solid #888}", chart.FontCSS())
	fmt.Fprintf(&b, "<h1>%s</h1>\n<p class=\"summary\"><strong>%s</strong></p>\n", htmldoc.Esc(c.title()), htmldoc.Esc(c.Summary()))
	for _, section := range comparisonSections {
		if err := section(&b, c); err != nil {
			return err
		}
	}
	if len(c.Cells) > 0 {
		fmt.Fprintf(&b, "<p class=\"caption\">%s</p>\n", htmldoc.Esc(c.legend()))
	}
	writeShiftsHTML(&b, c)
	b.WriteString("</body>\n</html>\n")
	_, err := w.Write(b.Bytes())
	return err
}

// comparisonSections write the parts of the comparison's page, in order.
var comparisonSections = []func(*bytes.Buffer, *Comparison) error{htmlChanges, htmlColumns, htmlCompareTables}

// htmlChanges writes the real changes, largest first.
func htmlChanges(b *bytes.Buffer, c *Comparison) error {
	if len(c.Cells) == 0 {
		return nil
	}
	fmt.Fprintf(b, "<h2 id=\"changes\">%s</h2>\n", htmldoc.Esc(headChanges))
	if rows := c.changeRows(); len(rows) > 0 {
		htmlGrid(b, classChanges, changesHeader, rows, "")
	} else {
		fmt.Fprintf(b, "<p>%s</p>\n", htmldoc.Esc(noChange))
	}
	return nil
}

// htmlColumns writes the roll-up by column.
func htmlColumns(b *bytes.Buffer, c *Comparison) error {
	if len(c.Cells) == 0 {
		return nil
	}
	fmt.Fprintf(b, "<h2 id=\"columns\">%s</h2>\n", htmldoc.Esc(headColumns))
	htmlGrid(b, classColumns, columnsHeader, c.columnRows(), "")
	return nil
}

// htmlCompareTables writes a table per family and machine, each with
// its chart.
func htmlCompareTables(b *bytes.Buffer, c *Comparison) error {
	var names []string
	for _, ch := range c.Cells {
		if ch.Group != results.Baseline {
			names = append(names, ch.Proxy)
		}
	}
	pal := chart.PaletteOf(names, report.Directions)
	tables := c.Tables()
	for i, t := range tables {
		if i == 0 || t.Family != tables[i-1].Family {
			fmt.Fprintf(b, "<h2>%s</h2>\n", htmldoc.Esc(t.Family))
		}
		fmt.Fprintf(b, "<h3>%s</h3>\n", htmldoc.Esc(t.Machine))
		htmlGrid(b, classCompare, compareHeader, t.rows(), "geomean")
		svg, ok, err := compareChart(t, pal)
		if err != nil {
			return chart.ErrChart(t.Family+" on "+t.Machine, err)
		}
		if ok {
			htmldoc.Figure(b, chart.ClassBar, svg, "Changes of "+t.Family+" on "+t.Machine+": new's median over old's, less one; "+
				"whiskers from new's slowest over old's fastest to new's fastest over old's slowest; the real changes written over their bars.")
		}
	}
	return nil
}

// htmlGrid writes a table of the comparison as the text has it, the
// first cell of each row its header, the last row of class last where
// last is not empty.
func htmlGrid(b *bytes.Buffer, class string, header []string, rows [][]string, last string) {
	fmt.Fprintf(b, "<table class=\"%s\">\n<tr>", class)
	for _, h := range header {
		fmt.Fprintf(b, "<th>%s</th>", htmldoc.Esc(h))
	}
	b.WriteString("</tr>\n")
	for i, r := range rows {
		if last != "" && i == len(rows)-1 {
			fmt.Fprintf(b, "<tr class=\"%s\">", last)
		} else {
			b.WriteString("<tr>")
		}
		fmt.Fprintf(b, "<th>%s</th>", htmldoc.Esc(r[0]))
		for _, c := range r[1:] {
			fmt.Fprintf(b, "<td>%s</td>", htmldoc.Esc(c))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n")
}

// compareChart is the chart of a table of the comparison: a bar per cell
// compared, its change (new's median over old's, less one, in percent)
// in its column's colour, a whisker over its interval (new's slowest
// over old's fastest to new's fastest over old's slowest, the ± of the
// text), and the change written over the bar where it is real. The
// changes have one unit, so one panel holds them all. False when no cell
// was compared.
func compareChart(t Table, pal chart.Palette) ([]byte, bool, error) {
	var cells []Change
	for _, ch := range t.Cells {
		if ch.compared() {
			cells = append(cells, ch)
		}
	}
	if len(cells) == 0 {
		return nil, false, nil
	}
	tickFace := chart.Face(10)
	names := make([]string, len(cells))
	for i, ch := range cells {
		names[i] = ch.Scenario + " " + ch.Proxy
	}
	var legend []chart.LegendEntry
	colorOf := map[string]color.Color{}
	for _, ch := range cells {
		if _, ok := colorOf[ch.Proxy]; !ok {
			colorOf[ch.Proxy] = pal.Color(ch.Proxy, ch.Group)
			legend = append(legend, chart.LegendEntry{Name: ch.Proxy, Thumb: chart.Swatch{Color: colorOf[ch.Proxy]}})
		}
	}
	most := (chart.BarWidthMax - chart.BarYAxisRoom) / vg.Length(len(cells))
	dataWidth := max(chart.BarWidthMin-chart.BarYAxisRoom, vg.Length(len(cells))*chart.SlotWidth(names, 1, tickFace, most))
	width := dataWidth + chart.BarYAxisRoom
	tp := &chart.Tips{}
	p := chart.NewPlot()
	p.Title.Text = chart.FitTitle(t.Family+", "+t.Machine+": change, new over old", width-chart.BarYAxisRoom)
	p.Y.Label.Text = "%"
	p.Y.Min, p.Y.Max = 0, 0
	p.Y.Tick.Marker = chart.LinearTicks{Most: 6}
	slot := dataWidth / vg.Length(len(cells))
	wrapped := make([]string, len(cells))
	for i, n := range names {
		wrapped[i] = strings.Join(chart.WrapLabel(n, tickFace, slot-0.3*vg.Centimeter), "\n")
	}
	p.NominalX(wrapped...)
	p.X.Min, p.X.Max = -0.5, float64(len(cells))-0.5
	p.Y.Padding = 0
	zero := plotter.NewFunction(func(float64) float64 { return 0 })
	zero.LineStyle = draw.LineStyle{Color: color.Black, Width: vg.Points(0.5)}
	p.Add(zero)
	bars, marks := changeBars(cells, names, colorOf, tp)
	for _, bs := range bars {
		p.Add(bs)
	}
	if len(marks.XYs) > 0 {
		lbl, err := chart.LabelsAbove(marks, 8, vg.Point{Y: 2})
		if err != nil {
			return nil, false, err
		}
		p.Add(lbl)
	}
	// room above the highest whisker for its label
	p.Y.Max += (p.Y.Max - p.Y.Min) * 0.08
	svg, err := chart.SVGOf([]*plot.Plot{p}, legend, tp, width, chart.BarPanelHeight)
	return svg, true, err
}

// changeBars are the bars of a comparison's chart, a set per column in
// the order the cells first name it, in its colour of colorOf: each
// cell's bar at its change, its whisker over its interval
// (changeInterval), under a title of its figures and the name of names;
// and the marks over the bars, the changes that are real.
func changeBars(cells []Change, names []string, colorOf map[string]color.Color, tp *chart.Tips) ([]*chart.BarSet, plotter.XYLabels) {
	var columns []string
	for _, ch := range cells {
		if !slices.Contains(columns, ch.Proxy) {
			columns = append(columns, ch.Proxy)
		}
	}
	var bars []*chart.BarSet
	var marks plotter.XYLabels
	for _, col := range columns {
		n := len(cells)
		bs := &chart.BarSet{Column: col, Median: make([]float64, n), Low: make([]float64, n), High: make([]float64, n),
			Titles: make([]string, n), Color: colorOf[col], Tips: tp}
		for i, ch := range cells {
			bs.Median[i], bs.Low[i], bs.High[i] = math.NaN(), math.NaN(), math.NaN()
			if ch.Proxy != col {
				continue
			}
			low, high := changeInterval(ch)
			bs.Median[i], bs.Low[i], bs.High[i] = *ch.Change, low, high
			verdict := "within noise"
			if ch.Real {
				verdict = "real"
			}
			bs.Titles[i] = fmt.Sprintf("%s: %s (%s), %s → %s %s, %s", names[i], ch.changeText(), verdict,
				text.Fixed(*ch.Old.Median, 1), text.Fixed(*ch.New.Median, 1), ch.Unit, ch.reason())
			if ch.Real {
				marks.XYs = append(marks.XYs, plotter.XY{X: float64(i), Y: math.Max(high, 0)})
				marks.Labels = append(marks.Labels, fmt.Sprintf("%+.0f%%", *ch.Change))
			}
		}
		bars = append(bars, bs)
	}
	return bars, marks
}

// changeInterval is the range of a compared cell's change, in percent:
// new's slowest over old's fastest to new's fastest over old's slowest,
// less one (Change.PlusMinus is half its width); the change itself where
// a side has no range above zero.
func changeInterval(ch Change) (low, high float64) {
	o, n := ch.Old, ch.New
	if *o.Slowest <= 0 || *o.Fastest <= 0 {
		return *ch.Change, *ch.Change
	}
	return (*n.Slowest / *o.Fastest - 1) * 100, (*n.Fastest / *o.Slowest - 1) * 100
}

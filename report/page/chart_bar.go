package page

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"bench/report"
	"bench/report/chart"
	"bench/results"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// barTitle is a bar's title: its column and scenario, its figure, and its
// runs' count and range.
func barTitle(column, label string, unit results.Unit, s report.Summary) string {
	t := column + ", " + label + ": " + unit.Format(s.Median)
	if len(s.Runs) == 1 {
		return t + " (1 run)"
	}
	return fmt.Sprintf("%s, the median of %d runs, %s..%s", t, len(s.Runs), unit.Format(s.Low), unit.Format(s.High))
}

// failedPart is the height of a cell's failed exchanges over its bar:
// at the answered ones' rate (its median), the failures' share beside
// them; NaN for a cell within ErrorWarn, or one whose exchanges all
// failed (no rate to draw them at).
func failedPart(c report.Cell, med float64) float64 {
	if !report.Erring(c) || *c.ErrorShare >= 1 {
		return math.NaN()
	}
	sh := *c.ErrorShare
	return med * sh / (1 - sh)
}

// barChart is the grouped bar chart of a throughput table: a group per
// row, a bar per column at its median, whiskers from its slowest run to
// its fastest, and the ‡ and † cells marked above their bars. Each unit
// of the rows (results.UnitOf: Gbit/s, k req/s, conn/s) has a panel of its
// own, so that no figure is drawn on another unit's axis. False when no
// cell has a median.
func barChart(t report.Table, pal chart.Palette) ([]byte, bool, error) {
	panels := barPanels(t)
	if len(panels) == 0 {
		return nil, false, nil
	}
	ncols := len(t.Columns)
	tickFace := chart.Face(10) // plot.New's tick labels' size
	dataWidth := barDataWidth(panels, ncols, tickFace)
	width := dataWidth + chart.BarYAxisRoom
	series := chartSeries(t, pal)
	var legend []chart.LegendEntry
	for _, se := range series {
		legend = append(legend, chart.LegendEntry{Name: se.name, Thumb: chart.Swatch{Color: se.color}})
	}
	tp := &chart.Tips{}
	var marked barMarks
	var plots []*plot.Plot
	for pi, pn := range panels {
		title := ""
		if pi == 0 {
			title = chart.FitTitle(t.Family+", "+t.Machine, width-chart.BarYAxisRoom)
		}
		p, err := barPanelPlot(pn, title, series, ncols, dataWidth, tickFace, tp, &marked)
		if err != nil {
			return nil, false, err
		}
		plots = append(plots, p)
	}
	if marked.bound {
		legend = append(legend, chart.LegendEntry{Name: report.BoundLegend(t), Thumb: chart.MarkThumb{Glyph: "‡"}})
	}
	if marked.noSplice {
		legend = append(legend, chart.LegendEntry{Name: report.LegendNoSplice, Thumb: chart.MarkThumb{Glyph: "†"}})
	}
	if marked.failed {
		legend = append(legend, chart.LegendEntry{Name: report.LegendFailed, Thumb: chart.MarkThumb{Glyph: report.ErrorMark}})
	}
	svg, err := chart.SVGOf(plots, legend, tp, width, vg.Length(len(plots))*chart.BarPanelHeight)
	return svg, true, err
}

// barPanel is a panel of a bar chart: the rows of one unit, and the
// names of their groups (their labels up to the first ", ").
type barPanel struct {
	unit  results.Unit
	rows  []report.TableRow
	names []string
}

// barPanels are the panels of t's bar chart: a panel per unit of the
// rows that have a cell with a median, in the order of each unit's first
// row.
func barPanels(t report.Table) []*barPanel {
	var panels []*barPanel
	byUnit := map[results.Unit]*barPanel{}
	for _, r := range t.Rows {
		if !slices.ContainsFunc(r.Cells, func(c report.Cell) bool { return c.Chart.OK }) {
			continue
		}
		p := byUnit[r.Unit]
		if p == nil {
			p = &barPanel{unit: r.Unit}
			byUnit[r.Unit] = p
			panels = append(panels, p)
		}
		p.rows = append(p.rows, r)
	}
	for _, pn := range panels {
		pn.names = make([]string, len(pn.rows))
		for i, r := range pn.rows {
			pn.names[i], _, _ = strings.Cut(r.Label, ", ")
		}
	}
	return panels
}

// barDataWidth is the width of a bar chart's data area: the least chart's
// less its Y axis, or as wide as the widest panel's groups need
// (slotWidth), short of chart.BarWidthMax.
func barDataWidth(panels []*barPanel, ncols int, tickFace font.Face) vg.Length {
	dataWidth := chart.BarWidthMin - chart.BarYAxisRoom
	for _, pn := range panels {
		most := (chart.BarWidthMax - chart.BarYAxisRoom) / vg.Length(len(pn.rows))
		dataWidth = max(dataWidth, vg.Length(len(pn.rows))*chart.SlotWidth(pn.names, ncols, tickFace, most))
	}
	return dataWidth
}

// barMarks are the marks a bar chart has drawn over its bars, for its
// legend to explain.
type barMarks struct {
	bound, noSplice, failed bool
}

// barPanelPlot is the plot of a bar chart's panel, under title (none but
// the first panel's has one): its groups' labels wrapped to their slots
// of dataWidth, and each series' bars and marks. The marks it draws are
// noted in marked.
func barPanelPlot(pn *barPanel, title string, series []barSeries, ncols int, dataWidth vg.Length, tickFace font.Face, tp *chart.Tips, marked *barMarks) (*plot.Plot, error) {
	p := chart.NewPlot()
	p.Title.Text = title
	p.Y.Label.Text = string(pn.unit)
	p.Y.Min = 0
	p.Y.Tick.Marker = chart.LinearTicks{Most: 6}
	slot := dataWidth / vg.Length(len(pn.rows))
	wrapped := make([]string, len(pn.rows))
	for i, n := range pn.names {
		wrapped[i] = strings.Join(chart.WrapLabel(n, tickFace, slot-0.3*vg.Centimeter), "\n")
	}
	p.NominalX(wrapped...)
	// Each group in a slot of its own, its label centred in it.
	p.X.Min, p.X.Max = -0.5, float64(len(pn.rows))-0.5
	p.Y.Padding = 0
	for _, se := range series {
		bs, marks := seriesBars(pn, se, ncols, tp, marked)
		p.Add(bs)
		if len(marks.XYs) > 0 {
			lbl, err := chart.LabelsAbove(marks, 9, vg.Point{X: bs.Offset, Y: 2})
			if err != nil {
				return nil, err
			}
			p.Add(lbl)
		}
	}
	return p, nil
}

// seriesBars are the bars of series se in panel pn, beside the other
// series' in each group, and the marks over them: ‡, † and the error
// mark of their cells, above the bar's whisker or its failed part. The
// marks it finds are noted in marked.
func seriesBars(pn *barPanel, se barSeries, ncols int, tp *chart.Tips, marked *barMarks) (*chart.BarSet, plotter.XYLabels) {
	j, col := se.col, se.name
	n := len(pn.rows)
	bs := &chart.BarSet{Column: col, Median: make([]float64, n), Low: make([]float64, n), High: make([]float64, n),
		Failed: make([]float64, n), Titles: make([]string, n), Offset: chart.BarWidth * (vg.Length(j) - vg.Length(ncols-1)/2),
		Color: se.color, Tips: tp}
	var marks plotter.XYLabels
	for i, r := range pn.rows {
		c := r.Cells[j]
		bs.Median[i], bs.Low[i], bs.High[i], bs.Failed[i] = math.NaN(), math.NaN(), math.NaN(), math.NaN()
		if !c.Chart.OK || (se.proxy != "" && c.Proxy != se.proxy) {
			continue
		}
		s := c.Chart
		bs.Median[i], bs.Low[i], bs.High[i] = s.Median, s.Low, s.High
		bs.Failed[i] = failedPart(c, s.Median)
		bs.Titles[i] = barTitle(col, pn.names[i], pn.unit, s)
		var m []string
		top := s.High
		if f := report.FailureText(c); f != "" {
			m, marked.failed = append(m, report.ErrorMark), true
			bs.Titles[i] += "; " + strings.TrimPrefix(f, report.ErrorMark) + " of its exchanges failed"
			if !math.IsNaN(bs.Failed[i]) {
				top = max(top, s.Median+bs.Failed[i])
			}
		}
		if c.Bound {
			m, marked.bound = append(m, "‡"), true
		}
		if c.NoSplice {
			m, marked.noSplice = append(m, "†"), true
		}
		if len(m) > 0 {
			marks.XYs = append(marks.XYs, plotter.XY{X: float64(i), Y: top})
			marks.Labels = append(marks.Labels, strings.Join(m, ""))
		}
	}
	return bs, marks
}

// barSeries is a set of a bar chart's bars, of one colour: a column's
// cells, or, in the handshakes' table, whose one column holds every
// proxy's rows, a proxy's cells of it.
type barSeries struct {
	col   int    // the table's column
	name  string // the column's name, or the proxy's
	proxy string // the proxy of the cells, "" for every cell of the column
	color color.Color
}

// chartSeries are the bar sets of t's chart: a column each, but for the
// handshakes' table, a proxy each in its own column's colour.
func chartSeries(t report.Table, pal chart.Palette) []barSeries {
	var out []barSeries
	if t.Family != report.FamHandshake {
		for j, name := range t.Columns {
			out = append(out, barSeries{col: j, name: name, color: pal.Color(name, results.Group(t.Groups[j]))})
		}
		return out
	}
	for _, r := range t.Rows {
		for j, c := range r.Cells {
			if !slices.ContainsFunc(out, func(se barSeries) bool { return se.proxy == c.Proxy }) {
				out = append(out, barSeries{col: j, name: c.Proxy, proxy: c.Proxy, color: pal.Color(c.Proxy, c.Group)})
			}
		}
	}
	return out
}

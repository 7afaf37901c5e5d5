package report

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The comparison's page: one file as the report's (html.go), its style
// the report's, with the summary line, and each table of the text
// followed by its chart of the old and new medians (compareChart).

// classCompare is the class of the comparison's tables on the page.
const classCompare = "compare"

// writeComparisonHTML writes the comparison's page in one write.
func writeComparisonHTML(w io.Writer, c *Comparison) error {
	var b bytes.Buffer
	title := "bench: " + c.title()
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>%s</title>\n<style>\n%s\ntr.geomean th,tr.geomean td{border-top:2px solid #888}\n</style>\n</head>\n<body>\n",
		esc(title), pageStyle)
	fmt.Fprintf(&b, "<h1>%s</h1>\n<p class=\"summary\"><strong>%s</strong></p>\n", esc(c.title()), esc(c.Summary()))
	tables := c.Tables()
	for i, t := range tables {
		if i == 0 || t.Family != tables[i-1].Family {
			fmt.Fprintf(&b, "<h2>%s</h2>\n", esc(t.Family))
		}
		fmt.Fprintf(&b, "<h3>%s</h3>\n", esc(t.Machine))
		htmlCompareTable(&b, t)
		svg, ok, err := compareChart(t)
		if err != nil {
			return errChart(t.Family+" on "+t.Machine, err)
		}
		if ok {
			figure(&b, classBar, svg, "Medians of "+t.Family+" on "+t.Machine+", old against new; whiskers from the slowest run to the fastest; the real changes above their bars.")
		}
	}
	if len(c.Cells) > 0 {
		fmt.Fprintf(&b, "<p class=\"caption\">%s</p>\n", esc(c.legend()))
	}
	writeShiftsHTML(&b, c)
	b.WriteString("</body>\n</html>\n")
	_, err := w.Write(b.Bytes())
	return err
}

// htmlCompareTable writes a table of the comparison as the text has it,
// its geomean row last.
func htmlCompareTable(b *bytes.Buffer, t CompareTable) {
	fmt.Fprintf(b, "<table class=\"%s\">\n<tr>", classCompare)
	for _, h := range compareHeader {
		fmt.Fprintf(b, "<th>%s</th>", esc(h))
	}
	b.WriteString("</tr>\n")
	rows := t.rows()
	for i, r := range rows {
		if i == len(rows)-1 {
			b.WriteString("<tr class=\"geomean\">")
		} else {
			b.WriteString("<tr>")
		}
		fmt.Fprintf(b, "<th>%s</th>", esc(r[0]))
		for _, c := range r[1:] {
			fmt.Fprintf(b, "<td>%s</td>", esc(c))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n")
}

// compareChart is the bar chart of a table of the comparison: a group
// per cell, its old median and its new side by side, whiskers from the
// slowest run to the fastest of each, and the change above the pair
// where it is real. Cells of another unit get a panel each, as in
// barChart. False when no cell has a median.
func compareChart(t CompareTable) ([]byte, bool, error) {
	var units []string
	byUnit := map[string][]Change{}
	for _, ch := range t.Cells {
		if _, ok := byUnit[ch.Unit]; !ok {
			units = append(units, ch.Unit)
		}
		byUnit[ch.Unit] = append(byUnit[ch.Unit], ch)
	}
	// old in the baseline's grey, new in a colour no column has
	sides := []struct {
		name  string
		color color.Color
		of    func(Change) *Runs
	}{
		{"old", baselineColor, func(ch Change) *Runs { return ch.Old }},
		{"new", paletteColors[len(knownColumns)+1], func(ch Change) *Runs { return ch.New }},
	}
	var legend []legendEntry
	for _, side := range sides {
		legend = append(legend, legendEntry{side.name, swatch{side.color}})
	}
	tickFace := plotFace(10)
	names := make([][]string, len(units))
	dataWidth := barWidthMin - barYAxisRoom
	for ui, unit := range units {
		cells := byUnit[unit]
		for _, ch := range cells {
			names[ui] = append(names[ui], ch.Scenario+" "+ch.Proxy)
		}
		most := (barWidthMax - barYAxisRoom) / vg.Length(len(cells))
		dataWidth = max(dataWidth, vg.Length(len(cells))*slotWidth(names[ui], len(sides), tickFace, most))
	}
	width := dataWidth + barYAxisRoom
	tp := &tips{}
	any := false
	var plots []*plot.Plot
	for ui, unit := range units {
		cells := byUnit[unit]
		p := newPlot()
		if ui == 0 {
			p.Title.Text = fitTitle(t.Family+", "+t.Machine+": old against new", width-barYAxisRoom)
		}
		p.Y.Label.Text = unit
		p.Y.Min = 0
		p.Y.Tick.Marker = linearTicks{most: 6}
		slot := dataWidth / vg.Length(len(cells))
		wrapped := make([]string, len(cells))
		for i, n := range names[ui] {
			wrapped[i] = strings.Join(wrapLabel(n, tickFace, slot-0.3*vg.Centimeter), "\n")
		}
		p.NominalX(wrapped...)
		p.X.Min, p.X.Max = -0.5, float64(len(cells))-0.5
		p.Y.Padding = 0
		var marks plotter.XYLabels
		for j, side := range sides {
			n := len(cells)
			bs := &barSet{column: side.name, median: make([]float64, n), low: make([]float64, n), high: make([]float64, n),
				titles: make([]string, n), offset: barWidth * (vg.Length(j) - 0.5), color: side.color, tips: tp}
			for i, ch := range cells {
				bs.median[i], bs.low[i], bs.high[i] = math.NaN(), math.NaN(), math.NaN()
				r := side.of(ch)
				if r == nil || r.Median == nil {
					continue
				}
				any = true
				bs.median[i], bs.low[i], bs.high[i] = *r.Median, *r.Slowest, *r.Fastest
				bs.titles[i] = fmt.Sprintf("%s, %s: %.4g %s, the median of %d runs, %.4g..%.4g",
					side.name, names[ui][i], *r.Median, unit, len(r.Runs), *r.Slowest, *r.Fastest)
				if j == 1 && ch.Real && ch.compared() {
					top := max(*ch.Old.Fastest, *ch.New.Fastest)
					marks.XYs = append(marks.XYs, plotter.XY{X: float64(i), Y: top})
					marks.Labels = append(marks.Labels, fmt.Sprintf("%+.0f%%", *ch.Change))
				}
			}
			p.Add(bs)
		}
		if len(marks.XYs) > 0 {
			lbl, err := labelsAbove(marks, 8, vg.Point{Y: 2})
			if err != nil {
				return nil, false, err
			}
			p.Add(lbl)
		}
		plots = append(plots, p)
	}
	if !any {
		return nil, false, nil
	}
	svg, err := svgOf(plots, legend, tp, width, vg.Length(len(plots))*barPanelHeight)
	return svg, true, err
}

// labelsAbove are texts centered above their points, in the charts'
// font at size points, moved by offset: the marks over a bar chart's
// bars (barChart's ‡ and †, compareChart's changes).
func labelsAbove(marks plotter.XYLabels, size vg.Length, offset vg.Point) (*plotter.Labels, error) {
	lbl, err := plotter.NewLabels(marks)
	if err != nil {
		return nil, err
	}
	for k := range lbl.TextStyle {
		lbl.TextStyle[k].XAlign, lbl.TextStyle[k].YAlign = draw.XCenter, draw.YBottom
		lbl.TextStyle[k].Font = plotFont(size)
	}
	lbl.Offset = offset
	return lbl, nil
}

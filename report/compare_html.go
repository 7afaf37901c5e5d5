package report

import (
	"bench/report/results"
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"

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
	sides := []struct {
		name  string
		color results.Group // grey for old, as the report's baseline
		of    func(Change) *Runs
	}{
		{"old", results.Baseline, func(ch Change) *Runs { return ch.Old }},
		{"new", results.Copy, func(ch Change) *Runs { return ch.New }},
	}
	legend := &chartLegend{Legend: plot.NewLegend()}
	any, most := false, 0
	var plots []*plot.Plot
	for pi, unit := range units {
		cells := byUnit[unit]
		most = max(most, len(cells))
		p := plot.New()
		p.Y.Label.Text = unit
		p.Y.Min = 0
		names := make([]string, len(cells))
		for i, ch := range cells {
			names[i] = ch.Scenario + " " + ch.Proxy
		}
		p.NominalX(names...)
		p.X.Tick.Label.Rotation = math.Pi / 6
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YTop
		var marks plotter.XYLabels
		for j, side := range sides {
			vals := make(plotter.Values, len(cells))
			w := &whiskers{low: make([]float64, len(cells)), high: make([]float64, len(cells)),
				LineStyle: draw.LineStyle{Color: color.Black, Width: vg.Points(0.7)}}
			for i, ch := range cells {
				w.low[i], w.high[i] = math.NaN(), math.NaN()
				r := side.of(ch)
				if r == nil || r.Median == nil {
					continue
				}
				any = true
				vals[i] = *r.Median
				w.low[i], w.high[i] = *r.Slowest, *r.Fastest
				if j == 1 && ch.Real && ch.compared() {
					top := max(*ch.Old.Fastest, *ch.New.Fastest)
					marks.XYs = append(marks.XYs, plotter.XY{X: float64(i), Y: top})
					marks.Labels = append(marks.Labels, fmt.Sprintf("%+.0f%%", *ch.Change))
				}
			}
			bars, err := plotter.NewBarChart(vals, barWidth)
			if err != nil {
				return nil, false, err
			}
			bars.Color = colorOf(0, side.color)
			bars.LineStyle.Width = 0
			bars.Offset = barWidth * (vg.Length(j) - 0.5)
			w.offset = bars.Offset
			p.Add(bars, w)
			if pi == 0 {
				legend.add(side.name, bars)
			}
		}
		if len(marks.XYs) > 0 {
			lbl, err := labelsAbove(marks, 8, vg.Point{Y: 2})
			if err != nil {
				return nil, false, err
			}
			p.Add(lbl)
		}
		if pi == 0 {
			p.Title.Text = t.Family + ", " + t.Machine + ": old against new"
		}
		plots = append(plots, p)
	}
	if !any {
		return nil, false, nil
	}
	width := min(max(barWidthMin, vg.Length(most)*3.5*barWidth+3*vg.Centimeter), barWidthMax)
	// the rotated labels of the cells take room under each panel
	label := vg.Length(0)
	for _, ch := range t.Cells {
		label = max(label, vg.Length(len([]rune(ch.Scenario+" "+ch.Proxy))))
	}
	height := barPanelHeight + label*0.09*vg.Centimeter
	svg, err := svgOf(plots, legend, width, vg.Length(len(plots))*height+legendHeight(legend.n))
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

package page

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"bench/internal/text"
	"bench/report"
	"bench/report/chart"
	"bench/results"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// repStyle is how the i-th run's lines are told apart in the time series:
// a dash, a glyph at each second and a shade, so that no run is known by
// its dash alone.
func repStyle(i int, c color.Color) (draw.LineStyle, draw.GlyphStyle) {
	dashes := [][]vg.Length{nil, {vg.Points(4), vg.Points(2)}, {vg.Points(1), vg.Points(1.5)}, {vg.Points(6), vg.Points(2), vg.Points(1), vg.Points(2)}}
	shapes := []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}, draw.CrossGlyph{}}
	shade := 1 - 0.25*float64(i%3) // of the colour, toward white
	r, g, b, _ := c.RGBA()
	mix := func(v uint32) uint8 { return uint8(255 - (255-float64(v>>8))*shade) }
	col := color.RGBA{R: mix(r), G: mix(g), B: mix(b), A: 255}
	return draw.LineStyle{Color: col, Width: vg.Points(1), Dashes: dashes[i%len(dashes)]},
		draw.GlyphStyle{Color: col, Radius: vg.Points(2), Shape: shapes[i%len(shapes)]}
}

// seriesTitle is the title of a run's line: its median over the
// seconds, their count and range.
func seriesTitle(what string, vals []float64, format func(float64) string) string {
	s := report.Summary{Runs: vals}
	sorted := slices.Clone(vals)
	slices.Sort(sorted)
	s.Low, s.High, s.Median = sorted[0], sorted[len(sorted)-1], results.Median(sorted)
	return fmt.Sprintf("%s: %s, the median of %s, %s..%s", what, format(s.Median), text.Plural(len(vals), "second"), format(s.Low), format(s.High))
}

// seriesChart is the small chart of a cell's runs second by second: the
// load tool's throughput (where it gives a series) above the three roles'
// CPU busy fraction, a line per run, the runs told apart by dash, glyph
// and shade.
func seriesChart(title string, unit results.Unit, runs []*results.RunData) ([]byte, error) {
	var plots []*plot.Plot
	hasLoad, hasCPU := false, false
	for _, d := range runs {
		hasLoad = hasLoad || len(d.Intervals) > 0
		for _, rl := range chart.RoleLines {
			hasCPU = hasCPU || len(d.CPU[rl.Role]) > 0
		}
	}
	tp := &chart.Tips{}
	var legend []chart.LegendEntry
	title = chart.FitTitle(title, chart.SeriesWidth-2*chart.LegendInset)
	// The runs' entries: black lines of their dash and glyph.
	for i, d := range runs {
		ls, gs := repStyle(i, color.Black)
		legend = append(legend, chart.LegendEntry{Name: "rep " + strconv.Itoa(d.Rep), Thumb: &chart.TippedLine{
			Line: &plotter.Line{LineStyle: ls}, Points: &plotter.Scatter{GlyphStyle: gs}}})
	}
	if hasLoad {
		p, err := loadPlot(title, unit, runs, !hasCPU, tp)
		if err != nil {
			return nil, err
		}
		plots = append(plots, p)
	}
	if hasCPU {
		cpuTitle := ""
		if !hasLoad {
			cpuTitle = title
		}
		for _, rl := range chart.RoleLines {
			legend = append(legend, chart.LegendEntry{Name: rl.Role, Thumb: chart.Swatch{Color: rl.Color}})
		}
		c, err := cpuPlot(cpuTitle, runs, tp)
		if err != nil {
			return nil, err
		}
		plots = append(plots, c)
	}
	h := chart.SeriesHeight
	if !hasLoad || !hasCPU {
		h = chart.SeriesHeight * 0.6
	}
	// A wrapped title's lines take their room from the plots no more.
	h += vg.Length(strings.Count(title, "\n")) * 0.5 * vg.Centimeter
	// Room on the right for the last second's label, centred on its tick.
	for _, p := range plots {
		p.X.Max = math.Max(p.X.Max, 1) * 1.06
	}
	return chart.SVGOf(plots, legend, tp, chart.SeriesWidth, h)
}

// loadPlot is a series chart's panel of the load tool's figures, in
// unit, second by second: a line per run that has them, under title. With
// bottom, the panel is the chart's last and its X axis is labelled.
func loadPlot(title string, unit results.Unit, runs []*results.RunData, bottom bool, tp *chart.Tips) (*plot.Plot, error) {
	p := chart.NewPlot()
	p.Title.Text = title
	p.Y.Label.Text = string(unit)
	p.Y.Min = 0
	p.Y.Tick.Marker = chart.LinearTicks{Most: 3}
	if bottom {
		p.X.Label.Text = "s"
	}
	for i, d := range runs {
		if len(d.Intervals) == 0 {
			continue
		}
		pts := make(plotter.XYs, len(d.Intervals))
		vals := make([]float64, len(d.Intervals))
		at := 0.0
		for k, iv := range d.Intervals {
			at += iv.Seconds
			pts[k] = plotter.XY{X: at, Y: iv.Of(unit)}
			vals[k] = pts[k].Y
		}
		l, err := runLine(pts, i, color.Black, "rep "+strconv.Itoa(d.Rep), vals, unit.Format, tp)
		if err != nil {
			return nil, err
		}
		p.Add(l)
	}
	return p, nil
}

// cpuPlot is a series chart's panel of the roles' CPU busy fraction,
// second by second: a line per run and role, in the role's colour, under
// title ("" for none).
func cpuPlot(title string, runs []*results.RunData, tp *chart.Tips) (*plot.Plot, error) {
	c := chart.NewPlot()
	c.Title.Text = title
	c.Y.Label.Text = "CPU busy"
	c.X.Label.Text = "s"
	c.Y.Min, c.Y.Max = 0, 1.05
	c.Y.Tick.Marker = plot.ConstantTicks{{Value: 0, Label: "0"}, {Value: 0.5, Label: "0.5"}, {Value: 1, Label: "1"}}
	busy := func(v float64) string { return text.Fixed(100*v, 0) + "% busy" }
	for i, d := range runs {
		for _, rl := range chart.RoleLines {
			v := d.CPU[rl.Role]
			if len(v) == 0 {
				continue
			}
			pts := make(plotter.XYs, len(v))
			for k, f := range v {
				pts[k] = plotter.XY{X: float64(k + 1), Y: f}
			}
			l, err := runLine(pts, i, rl.Color, "rep "+strconv.Itoa(d.Rep)+", the "+rl.Role+"'s CPU", v, busy, tp)
			if err != nil {
				return nil, err
			}
			c.Add(l)
		}
	}
	return c, nil
}

// runLine is the i-th run's line through pts, with a glyph at each point,
// in c shaded by repStyle, under a title of what it draws and its values
// vals, in format.
func runLine(pts plotter.XYs, i int, c color.Color, what string, vals []float64, format func(float64) string, tp *chart.Tips) (*chart.TippedLine, error) {
	line, err := plotter.NewLine(pts)
	if err != nil {
		return nil, err
	}
	dots, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, err
	}
	line.LineStyle, dots.GlyphStyle = repStyle(i, c)
	return &chart.TippedLine{Line: line, Points: dots, Title: seriesTitle(what, vals, format), Tips: tp}, nil
}

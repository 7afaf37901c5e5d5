package page

import (
	"bytes"
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

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

// The page's chart of a sweep: for a row of the Sustainable rate table,
// each column's p50 and p99 of every step of its searches against the
// rate the step offered, on log axes, and the session's p99 bound.

// classSweep is the class of the sweeps' charts, a figure each.
const classSweep = "chart sweep"

// tipPoint is the class of a tipped point: a step of a search; tipStop
// of the mark on the step where a search stopped.
const (
	tipPoint = "point"
	tipStop  = "stop"
)

// sweepPercentile is a percentile of a sweep chart's steps: its name,
// its figure of a step (nil where the step has none), and its line's
// dashes and glyph.
type sweepPercentile struct {
	name   string
	of     func(report.SearchStep) *float64
	dashes []vg.Length
	glyph  draw.GlyphDrawer
}

// sweepPercentiles are the lines of each column, their glyphs and
// dashes: p99 solid with rings, p50 dashed with squares.
var sweepPercentiles = []sweepPercentile{
	{"p99", func(s report.SearchStep) *float64 { return s.P99 }, nil, draw.RingGlyph{}},
	{"p50", func(s report.SearchStep) *float64 { return s.P50 }, []vg.Length{vg.Points(4), vg.Points(2)}, draw.SquareGlyph{}},
}

// sloDashes are the dots of the line of the p99 bound.
var sloDashes = []vg.Length{vg.Points(1), vg.Points(2)}

// sweepPoint is a step on a sweep's chart: its rate in k req/s, its
// latency in milliseconds, and its title.
type sweepPoint struct {
	x, y  float64
	title string
}

// tippedPoints are a column's steps as glyphs, each under a title of its
// own.
type tippedPoints struct {
	points []sweepPoint
	style  draw.GlyphStyle
	column string
	tips   *chart.Tips
	class  string // tipPoint where empty
}

// Plot draws the glyphs.
func (p *tippedPoints) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	class := cmp.Or(p.class, tipPoint)
	for _, pt := range p.points {
		p.tips.Begin(c, class, p.column, pt.title)
		c.DrawGlyph(p.style, vg.Point{X: trX(pt.x), Y: trY(pt.y)})
		p.tips.End(c)
	}
}

// DataRange spans the points.
func (p *tippedPoints) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, ymin = math.Inf(1), math.Inf(1)
	xmax, ymax = math.Inf(-1), math.Inf(-1)
	for _, pt := range p.points {
		xmin, xmax = min(xmin, pt.x), max(xmax, pt.x)
		ymin, ymax = min(ymin, pt.y), max(ymax, pt.y)
	}
	return
}

// GlyphBoxes leaves room for the glyphs at the plot's edges.
func (p *tippedPoints) GlyphBoxes(plt *plot.Plot) []plot.GlyphBox {
	out := make([]plot.GlyphBox, len(p.points))
	for i, pt := range p.points {
		out[i] = plot.GlyphBox{X: plt.X.Norm(pt.x), Y: plt.Y.Norm(pt.y), Rectangle: p.style.Rectangle()}
	}
	return out
}

// stepTitle is a step's point's title: "nginx, rep 1, step 5: 8.00k/s
// offered, p99 134.6 ms; failed: p99 134.6 ms over 50 ms".
func stepTitle(column string, rep int, s report.SearchStep, percentile string, v float64) string {
	what := "step " + strconv.Itoa(s.N)
	if s.Confirm {
		what = "the confirming window"
	}
	verdict := "passed"
	if !s.Pass {
		verdict = "failed: " + s.Why
	}
	return fmt.Sprintf("%s, rep %d, %s: %s offered, %s %s ms; %s", column, rep, what, report.RateText(s.Offered), percentile, report.Millis(v), verdict)
}

// sweepChart is the chart of a row of a Sustainable rate table: for each
// column whose steps have a latency, its p99 and p50 (ms, log axis)
// against the offered rate (k req/s, log axis), a point a step of every
// repetition, each titled, joined by the column's line in the order of
// the rate; and the bound sw's p99, where it is known, dotted and named
// in the legend.
// False when no step has a latency.
func sweepChart(t report.Table, row report.TableRow, sw *results.Sweep, pal chart.Palette) ([]byte, bool, error) {
	label, _, _ := strings.Cut(row.Label, ", ")
	p := chart.NewPlot()
	p.Title.Text = chart.FitTitle(label+" on "+t.Machine+": latency against the offered rate", chart.HdrWidth-2*chart.LegendInset)
	p.X.Label.Text = "offered, " + string(row.Unit)
	p.Y.Label.Text = "latency, ms"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = chart.LogTicks{}, chart.LogTicks{}
	tp := &chart.Tips{}
	var legend []chart.LegendEntry
	stopped := false
	ext := sweepExtent{math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)}
	for j, c := range row.Cells {
		col := t.Columns[j]
		colour := pal.Color(col, results.Group(t.Groups[j]))
		plotters, stops, err := sweepPlotters(col, c, colour, tp, &ext)
		if err != nil {
			return nil, false, err
		}
		if plotters == nil {
			continue
		}
		p.Add(plotters...)
		stopped = stopped || stops
		legend = append(legend, chart.LegendEntry{Name: col + stoppedText(c.Searches), Thumb: chart.Swatch{Color: colour}})
	}
	if len(legend) == 0 {
		return nil, false, nil
	}
	for _, pc := range sweepPercentiles {
		legend = append(legend, chart.LegendEntry{Name: pc.name, Thumb: &chart.TippedLine{
			Line:   &plotter.Line{LineStyle: draw.LineStyle{Color: color.Black, Width: vg.Points(1), Dashes: pc.dashes}},
			Points: &plotter.Scatter{GlyphStyle: draw.GlyphStyle{Color: color.Black, Radius: vg.Points(2), Shape: pc.glyph}}}})
	}
	if stopped {
		legend = append(legend, chart.LegendEntry{Name: "where the search stopped", Thumb: &plotter.Scatter{GlyphStyle: stopStyle(color.Black)}})
	}
	// Axes from the 1-2-5 value below every point to the one above, each
	// labelled, so that no line runs off the plot; the bound's line
	// within them.
	if sw != nil {
		bound := float64(time.Duration(sw.SLO.P99)) / float64(time.Millisecond)
		ext.ymin, ext.ymax = min(ext.ymin, bound), max(ext.ymax, bound)
	}
	p.X.Min, p.X.Max = below125(ext.xmin), above125(ext.xmax)
	p.Y.Min, p.Y.Max = below125(ext.ymin), above125(ext.ymax)
	if sw != nil {
		sloLine, err := sweepBoundLine(sw, p.X.Min, p.X.Max, tp)
		if err != nil {
			return nil, false, err
		}
		// named in the legend alone: a label on the line sits on the
		// curves that cross it, which they do near the rate found
		p.Add(sloLine)
		legend = append(legend, chart.LegendEntry{Name: "p99 bound, " + report.MillisSpan(sw.SLO.P99), Thumb: sloLine})
	}
	p.Add(plotter.NewGrid())
	svg, err := chart.SVGOf([]*plot.Plot{p}, legend, tp, chart.HdrWidth, chart.HdrHeight)
	return svg, true, err
}

// sweepExtent is the span of a sweep chart's points, in k req/s and ms.
type sweepExtent struct {
	xmin, xmax, ymin, ymax float64
}

// add widens the span to the point pt.
func (e *sweepExtent) add(pt sweepPoint) {
	e.xmin, e.xmax = min(e.xmin, pt.x), max(e.xmax, pt.x)
	e.ymin, e.ymax = min(e.ymin, pt.y), max(e.ymax, pt.y)
}

// sweepPlotters is what a sweep chart draws of column col, its cell c, in
// colour: each percentile's line through its steps (sweepPoints) and
// their glyphs, then where its searches stopped; stopped says whether
// there are those. The points widen ext. Nil when no step of the column
// has a latency.
func sweepPlotters(col string, c report.Cell, colour color.Color, tp *chart.Tips, ext *sweepExtent) (plotters []plot.Plotter, stopped bool, err error) {
	for _, pc := range sweepPercentiles {
		pts := sweepPoints(col, c, pc)
		if len(pts) == 0 {
			continue
		}
		xy := make(plotter.XYs, len(pts))
		for i, pt := range pts {
			xy[i] = plotter.XY{X: pt.x, Y: pt.y}
			ext.add(pt)
		}
		line, err := plotter.NewLine(xy)
		if err != nil {
			return nil, false, err
		}
		line.LineStyle = draw.LineStyle{Color: colour, Width: vg.Points(1), Dashes: pc.dashes}
		if len(pts) > 1 {
			// One step's point has its own title and no line.
			plotters = append(plotters, &chart.TippedLine{Line: line, Column: col, Title: percentileTitle(col, pc.name, c, pts), Tips: tp})
		}
		plotters = append(plotters, &tippedPoints{points: pts, column: col, tips: tp,
			style: draw.GlyphStyle{Color: colour, Radius: vg.Points(2), Shape: pc.glyph}})
	}
	if plotters == nil {
		return nil, false, nil
	}
	var stops []sweepPoint
	for _, s := range c.Searches {
		if pt, ok := stopPoint(col, s); ok {
			stops = append(stops, pt)
			ext.add(pt)
		}
	}
	if len(stops) > 0 {
		plotters = append(plotters, &tippedPoints{points: stops, column: col, tips: tp, style: stopStyle(colour), class: tipStop})
		stopped = true
	}
	return plotters, stopped, nil
}

// sweepPoints are the steps of every search of column col's cell c that
// have percentile pc, in the order of their offered rate, each titled
// (stepTitle); a latency of 0 drawn at 0.001 ms, the log axis having no
// 0.
func sweepPoints(col string, c report.Cell, pc sweepPercentile) []sweepPoint {
	var pts []sweepPoint
	for _, s := range c.Searches {
		for _, st := range s.Steps {
			if v := pc.of(st); v != nil {
				y := max(*v, 0.001) // a log axis has no 0
				pts = append(pts, sweepPoint{x: results.RateFigure(st.Offered), y: y, title: stepTitle(col, s.Rep, st, pc.name, *v)})
			}
		}
	}
	slices.SortStableFunc(pts, func(a, b sweepPoint) int { return cmp.Compare(a.x, b.x) })
	return pts
}

// sweepBoundLine is the dotted line of the session's p99 bound sw across
// a sweep chart, from xmin to xmax, under a title of the bound.
func sweepBoundLine(sw *results.Sweep, xmin, xmax float64, tp *chart.Tips) (*chart.TippedLine, error) {
	bound := float64(time.Duration(sw.SLO.P99)) / float64(time.Millisecond)
	line, err := plotter.NewLine(plotter.XYs{{X: xmin, Y: bound}, {X: xmax, Y: bound}})
	if err != nil {
		return nil, err
	}
	line.LineStyle = draw.LineStyle{Color: color.Black, Width: vg.Points(1), Dashes: sloDashes}
	return &chart.TippedLine{Line: line, Title: "the session's bound: " + report.SloText(sw.SLO), Tips: tp}, nil
}

// below125 is the greatest 1-2-5 value (ticks125) under v, above125 the
// least over it: an axis' ends with a tick's label at each and room for
// the glyphs of the points at them.
func below125(v float64) float64 {
	e := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{5, 2, 1} {
		if m*e < v*0.95 {
			return m * e
		}
	}
	return 0.5 * e
}

func above125(v float64) float64 {
	e := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*e > v*1.05 {
			return m * e
		}
	}
	return 20 * e
}

// stopStyle is the glyph of the step where a search stopped: a cross.
func stopStyle(c color.Color) draw.GlyphStyle {
	return draw.GlyphStyle{Color: c, Radius: vg.Points(4), Shape: draw.CrossGlyph{}}
}

// stopPoint is the point of the step where search s stopped, at its p99
// (its p50 where it has none); false where no step failed or it has no
// latency.
func stopPoint(column string, s report.Search) (sweepPoint, bool) {
	if s.Stop == nil {
		return sweepPoint{}, false
	}
	for _, pc := range sweepPercentiles {
		if v := pc.of(*s.Stop); v != nil {
			return sweepPoint{x: results.RateFigure(s.Stop.Offered), y: max(*v, 0.001), title: column + ", rep " + strconv.Itoa(s.Rep) + ": stopped, " + s.StopText()}, true
		}
	}
	return sweepPoint{}, false
}

// stoppedText is why a column's searches stopped, for its legend entry:
// one search's step and bounds missed, ": stopped at 2.00k/s on failures
// 0.13% over 0.1%"; several searches' bounds missed, how many on each,
// ": 3 stopped on p99 over 50 ms".
func stoppedText(searches []report.Search) string {
	var stops []*report.SearchStep
	for _, s := range searches {
		if s.Stop != nil {
			stops = append(stops, s.Stop)
		}
	}
	switch len(stops) {
	case 0:
		return ""
	case 1:
		return ": stopped at " + report.RateText(stops[0].Offered) + " on " + unbracketed(stops[0].Why)
	}
	var kinds []string
	count := map[string]int{}
	for _, st := range stops {
		k := missedKind(st.Why)
		if count[k] == 0 {
			kinds = append(kinds, k)
		}
		count[k]++
	}
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%d on %s", count[k], k)
	}
	return ": stopped " + strings.Join(parts, ", ")
}

// missedKind is the bounds a step missed without its figures: "p99 63.2
// ms over 50 ms" is "p99 over 50 ms"; "failures 0.13% over 0.1%,
// achieved ..." is "failures over 0.1%, rate short".
func missedKind(why string) string {
	var kinds []string
	for _, clause := range strings.Split(unbracketed(why), ", ") {
		name, _, _ := strings.Cut(clause, " ")
		switch _, bound, over := strings.Cut(clause, " over "); {
		case over:
			kinds = append(kinds, name+" over "+bound)
		case name == "achieved":
			kinds = append(kinds, "rate short")
		default:
			kinds = append(kinds, name)
		}
	}
	return strings.Join(kinds, ", ")
}

// unbracketed is s without what it says in brackets: "failures 0.13%
// over 0.1% (13 of 10000 due)" is "failures 0.13% over 0.1%".
func unbracketed(s string) string {
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return strings.ReplaceAll(strings.Join(strings.Fields(b.String()), " "), " ,", ",")
}

// percentileTitle is the title of a column's line: its steps' range of
// the percentile and the rate its searches found.
func percentileTitle(column, percentile string, c report.Cell, pts []sweepPoint) string {
	lo := slices.MinFunc(pts, func(a, b sweepPoint) int { return cmp.Compare(a.y, b.y) })
	hi := slices.MaxFunc(pts, func(a, b sweepPoint) int { return cmp.Compare(a.y, b.y) })
	found := "no sustainable rate"
	if c.Median != nil {
		found = "sustainable rate " + report.ThreeFigures(*c.Median) + "k/s (the median of its searches)"
	}
	return fmt.Sprintf("%s, %s of %s: %s ms to %s ms; %s", column, percentile, text.Plural(len(pts), "step"), report.Millis(lo.y), report.Millis(hi.y), found)
}

// htmlSweeps writes the chart of each row of a Sustainable rate table.
func htmlSweeps(b *bytes.Buffer, t report.Table, pal chart.Palette) error {
	for _, r := range t.Rows {
		svg, ok, err := sweepChart(t, r, t.Sweep, pal)
		if err != nil {
			return chart.ErrChart(r.Label+" on "+t.Machine, err)
		}
		if !ok {
			continue
		}
		label, _, _ := strings.Cut(r.Label, ", ")
		bound := "the session's p99 bound unknown (no metadata)"
		if t.Sweep != nil {
			bound = "the dotted line the session's p99 bound, " + report.MillisSpan(t.Sweep.SLO.P99)
		}
		htmldoc.Figure(b, classSweep, svg, "p99 and p50 of every step of the searches of "+label+" on "+t.Machine+
			", every repetition's, against the rate it offered, on log axes; "+bound+".")
	}
	return nil
}

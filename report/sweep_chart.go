package report

import (
	"bench/report/results"
	"bytes"
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

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

// tipPoint is the class of a tipped point: a step of a search.
const tipPoint = "point"

// sweepPercentiles are the lines of each column, their glyphs and
// dashes: p99 solid with rings, p50 dashed with squares.
var sweepPercentiles = []struct {
	name   string
	of     func(SearchStep) *float64
	dashes []vg.Length
	glyph  draw.GlyphDrawer
}{
	{"p99", func(s SearchStep) *float64 { return s.P99 }, nil, draw.RingGlyph{}},
	{"p50", func(s SearchStep) *float64 { return s.P50 }, []vg.Length{vg.Points(4), vg.Points(2)}, draw.SquareGlyph{}},
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
	tips   *tips
}

// Plot draws the glyphs.
func (p *tippedPoints) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	for _, pt := range p.points {
		p.tips.begin(c, tipPoint, p.column, pt.title)
		c.DrawGlyph(p.style, vg.Point{X: trX(pt.x), Y: trY(pt.y)})
		p.tips.end(c)
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
func stepTitle(column string, rep int, s SearchStep, percentile string, v float64) string {
	what := "step " + strconv.Itoa(s.N)
	if s.Confirm {
		what = "the confirming window"
	}
	verdict := "passed"
	if !s.Pass {
		verdict = "failed: " + s.Why
	}
	return fmt.Sprintf("%s, rep %d, %s: %s offered, %s %s ms; %s", column, rep, what, rateText(s.Offered), percentile, millis(v), verdict)
}

// sweepChart is the chart of a row of a Sustainable rate table: for each
// column whose steps have a latency, its p99 and p50 (ms, log axis)
// against the offered rate (k req/s, log axis), a point a step of every
// repetition, each titled, joined by the column's line in the order of
// the rate; and the bound sw's p99, where it is known, dotted and named
// in the legend.
// False when no step has a latency.
func sweepChart(t Table, row TableRow, sw *results.Sweep, pal palette) ([]byte, bool, error) {
	label, _, _ := strings.Cut(row.Label, ", ")
	p := newPlot()
	p.Title.Text = fitTitle(label+" on "+t.Machine+": latency against the offered rate", hdrWidth-2*legendInset)
	p.X.Label.Text = "offered, " + string(row.unit)
	p.Y.Label.Text = "latency, ms"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = ticks125{}, ticks125{}
	tp := &tips{}
	var legend []legendEntry
	xmin, xmax := math.Inf(1), math.Inf(-1)
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for j, c := range row.Cells {
		col := t.Columns[j]
		colour := pal.color(col, results.Group(t.Groups[j]))
		drawn := false
		for _, pc := range sweepPercentiles {
			var pts []sweepPoint
			for _, s := range c.Searches {
				for _, st := range s.Steps {
					if v := pc.of(st); v != nil {
						y := max(*v, 0.001) // a log axis has no 0
						pts = append(pts, sweepPoint{x: results.RateFigure(st.Offered), y: y, title: stepTitle(col, s.Rep, st, pc.name, *v)})
					}
				}
			}
			if len(pts) == 0 {
				continue
			}
			drawn = true
			slices.SortStableFunc(pts, func(a, b sweepPoint) int { return cmp.Compare(a.x, b.x) })
			xy := make(plotter.XYs, len(pts))
			for i, pt := range pts {
				xy[i] = plotter.XY{X: pt.x, Y: pt.y}
				xmin, xmax = min(xmin, pt.x), max(xmax, pt.x)
				ymin, ymax = min(ymin, pt.y), max(ymax, pt.y)
			}
			line, err := plotter.NewLine(xy)
			if err != nil {
				return nil, false, err
			}
			line.LineStyle = draw.LineStyle{Color: colour, Width: vg.Points(1), Dashes: pc.dashes}
			if len(pts) > 1 {
				// One step's point has its own title and no line.
				p.Add(&tippedLine{Line: line, column: col, title: percentileTitle(col, pc.name, c, pts), tips: tp})
			}
			p.Add(&tippedPoints{points: pts, column: col, tips: tp,
				style: draw.GlyphStyle{Color: colour, Radius: vg.Points(2), Shape: pc.glyph}})
		}
		if drawn {
			legend = append(legend, legendEntry{col, swatch{colour}})
		}
	}
	if len(legend) == 0 {
		return nil, false, nil
	}
	for _, pc := range sweepPercentiles {
		legend = append(legend, legendEntry{pc.name, &tippedLine{
			Line:   &plotter.Line{LineStyle: draw.LineStyle{Color: color.Black, Width: vg.Points(1), Dashes: pc.dashes}},
			points: &plotter.Scatter{GlyphStyle: draw.GlyphStyle{Color: color.Black, Radius: vg.Points(2), Shape: pc.glyph}}}})
	}
	if sw != nil {
		bound := float64(time.Duration(sw.SLO.P99)) / float64(time.Millisecond)
		name := "p99 bound, " + millisSpan(sw.SLO.P99)
		line, err := plotter.NewLine(plotter.XYs{{X: xmin, Y: bound}, {X: xmax, Y: bound}})
		if err != nil {
			return nil, false, err
		}
		line.LineStyle = draw.LineStyle{Color: color.Black, Width: vg.Points(1), Dashes: sloDashes}
		sloLine := &tippedLine{Line: line, title: "the session's bound: " + sloText(sw.SLO), tips: tp}
		// named in the legend alone: a label on the line sits on the
		// curves that cross it, which they do near the rate found
		p.Add(sloLine)
		legend = append(legend, legendEntry{name, sloLine})
	}
	// One rate (a search that ended at its first step), or one latency:
	// the plot would widen the range by 1 on each side, below 0 on a log
	// axis; a factor of 2 each side instead.
	if xmin == xmax {
		p.X.Min, p.X.Max = xmin/2, xmax*2
	}
	if ymin == ymax && sw == nil {
		p.Y.Min, p.Y.Max = ymin/2, ymax*2
	}
	p.Add(plotter.NewGrid())
	svg, err := svgOf([]*plot.Plot{p}, legend, tp, hdrWidth, hdrHeight)
	return svg, true, err
}

// percentileTitle is the title of a column's line: its steps' range of
// the percentile and the rate its searches found.
func percentileTitle(column, percentile string, c Cell, pts []sweepPoint) string {
	lo := slices.MinFunc(pts, func(a, b sweepPoint) int { return cmp.Compare(a.y, b.y) })
	hi := slices.MaxFunc(pts, func(a, b sweepPoint) int { return cmp.Compare(a.y, b.y) })
	found := "no sustainable rate"
	if c.Median != nil {
		found = "sustainable rate " + threeFigures(*c.Median) + "k/s (the median of its searches)"
	}
	return fmt.Sprintf("%s, %s of %s: %s ms to %s ms; %s", column, percentile, pluralN(len(pts), "step"), millis(lo.y), millis(hi.y), found)
}

// htmlSweeps writes the chart of each row of a Sustainable rate table.
func htmlSweeps(b *bytes.Buffer, t Table, pal palette) error {
	for _, r := range t.Rows {
		svg, ok, err := sweepChart(t, r, t.Sweep, pal)
		if err != nil {
			return errChart(r.Label+" on "+t.Machine, err)
		}
		if !ok {
			continue
		}
		label, _, _ := strings.Cut(r.Label, ", ")
		bound := "the session's p99 bound unknown (no metadata)"
		if t.Sweep != nil {
			bound = "the dotted line the session's p99 bound, " + millisSpan(t.Sweep.SLO.P99)
		}
		figure(b, classSweep, svg, "p99 and p50 of every step of the searches of "+label+" on "+t.Machine+
			", every repetition's, against the rate it offered, on log axes; "+bound+".")
	}
	return nil
}

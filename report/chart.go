package report

import (
	"bench/report/results"
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// The charts of the page, drawn with gonum.org/v1/plot to SVG: a grouped
// bar chart of each throughput table, an HDR percentile chart of each mix
// scenario, and small time series of each cell's runs.

// Sizes of the charts.
const (
	barPanelHeight = 6 * vg.Centimeter
	barWidthMin    = 16 * vg.Centimeter
	barWidthMax    = 60 * vg.Centimeter
	barWidth       = 0.35 * vg.Centimeter // a bar
	hdrWidth       = 16 * vg.Centimeter
	hdrHeight      = 9 * vg.Centimeter
	seriesWidth    = 9 * vg.Centimeter
	seriesHeight   = 7 * vg.Centimeter
)

// colorOf is column i's color in the charts; the baseline is grey.
func colorOf(i int, g results.Group) color.Color {
	if g == results.Baseline {
		return color.Gray{Y: 150}
	}
	return plotutil.Color(i)
}

// svgOf draws the plots, one above the other, under the legend when
// there is one, on an SVG canvas of w by h, and returns the SVG element
// alone, without its XML prologue, to be put in the page.
func svgOf(plots []*plot.Plot, legend *chartLegend, w, h vg.Length) ([]byte, error) {
	c := vgsvg.New(w, h)
	dc := draw.New(c)
	if legend != nil && legend.n > 0 {
		lh := legendHeight(legend.n)
		legend.Top, legend.Left = true, true
		legend.Padding = vg.Points(2)
		legend.XOffs, legend.YOffs = 1.5*vg.Centimeter, -0.1*vg.Centimeter
		legend.Draw(draw.Crop(dc, 0, 0, h-lh, 0))
		dc = draw.Crop(dc, 0, 0, 0, -lh)
	}
	grid := make([][]*plot.Plot, len(plots))
	for i, p := range plots {
		grid[i] = []*plot.Plot{p}
	}
	tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadY: 0.3 * vg.Centimeter}
	for i, row := range plot.Align(grid, tiles, dc) {
		plots[i].Draw(row[0])
	}
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return nil, err
	}
	out := b.Bytes()
	if i := bytes.Index(out, []byte("<svg")); i >= 0 {
		out = out[i:]
	}
	return out, nil
}

// chartLegend is a legend drawn above a chart's panels, with its count
// of entries.
type chartLegend struct {
	plot.Legend
	n int
}

func (l *chartLegend) add(name string, thumb plot.Thumbnailer) {
	l.Add(name, thumb)
	l.n++
}

// legendHeight is the room a legend of n entries takes.
func legendHeight(n int) vg.Length { return vg.Length(n)*0.5*vg.Centimeter + 0.3*vg.Centimeter }

// whiskers draws, for each of a column's bars, a line from its slowest
// run to its fastest, with caps: where a bar's runs lie.
type whiskers struct {
	low, high []float64 // NaN: no runs
	offset    vg.Length // the column's bars' offset
	draw.LineStyle
}

// Plot draws the whiskers.
func (w *whiskers) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	cap := vg.Length(3)
	for i := range w.low {
		if math.IsNaN(w.low[i]) {
			continue
		}
		x := trX(float64(i)) + w.offset
		lo, hi := trY(w.low[i]), trY(w.high[i])
		c.StrokeLine2(w.LineStyle, x, lo, x, hi)
		c.StrokeLine2(w.LineStyle, x-cap, lo, x+cap, lo)
		c.StrokeLine2(w.LineStyle, x-cap, hi, x+cap, hi)
	}
}

// DataRange makes the whiskers' tops part of the Y axis.
func (w *whiskers) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax, ymin, ymax = 0, float64(len(w.low)-1), 0, 0
	for _, h := range w.high {
		if !math.IsNaN(h) {
			ymax = max(ymax, h)
		}
	}
	return
}

// markThumb is a legend entry drawn as a mark of the tables: ‡ or †.
type markThumb struct{ glyph string }

// Thumbnail draws the mark.
func (m markThumb) Thumbnail(c *draw.Canvas) {
	sty := draw.TextStyle{Color: color.Black, Font: plotFont(11), Handler: plot.DefaultTextHandler,
		XAlign: draw.XCenter, YAlign: draw.YCenter}
	c.FillText(sty, vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: (c.Min.Y + c.Max.Y) / 2}, m.glyph)
}

// Legend texts of the marks.
const (
	legendBound    = "most runs bound by the client or the origin"
	legendNoSplice = "never spliced: the figure is a copying proxy's"
)

// barChart is the grouped bar chart of a throughput table: a group per
// row, a bar per column at its median, whiskers from its slowest run to
// its fastest, and the ‡ and † cells marked above their bars. Rows of
// another unit (a table's streams in Gbit/s and its requests in k req/s)
// get a panel each. False when no cell has a median.
func barChart(t Table) ([]byte, bool, error) {
	type panel struct {
		unit results.Unit
		rows []TableRow
	}
	var panels []*panel
	byUnit := map[results.Unit]*panel{}
	for _, r := range t.Rows {
		p := byUnit[r.unit]
		if p == nil {
			p = &panel{unit: r.unit}
			byUnit[r.unit] = p
			panels = append(panels, p)
		}
		p.rows = append(p.rows, r)
	}
	legend := &chartLegend{Legend: plot.NewLegend()}
	bound, noSplice := false, false
	ncols := len(t.Columns)
	any := false
	maxRows := 0
	var plots []*plot.Plot
	for pi, pn := range panels {
		p := plot.New()
		p.Y.Label.Text = string(pn.unit)
		p.Y.Min = 0
		names := make([]string, len(pn.rows))
		for i, r := range pn.rows {
			names[i], _, _ = strings.Cut(r.Label, ", ")
		}
		p.NominalX(names...)
		maxRows = max(maxRows, len(pn.rows))
		for j := 0; j < ncols; j++ {
			vals := make(plotter.Values, len(pn.rows))
			w := &whiskers{low: make([]float64, len(pn.rows)), high: make([]float64, len(pn.rows)),
				LineStyle: draw.LineStyle{Color: color.Black, Width: vg.Points(0.7)}}
			var marks plotter.XYLabels
			for i, r := range pn.rows {
				c := r.Cells[j]
				w.low[i], w.high[i] = math.NaN(), math.NaN()
				if c.Median == nil {
					continue
				}
				any = true
				vals[i] = *c.Median
				if len(c.Runs) > 0 {
					lo, hi := c.Runs[0], c.Runs[0]
					for _, v := range c.Runs {
						lo, hi = min(lo, v), max(hi, v)
					}
					w.low[i], w.high[i] = lo, hi
				}
				var m []string
				if c.Bound {
					m, bound = append(m, "‡"), true
				}
				if c.NoSplice {
					m, noSplice = append(m, "†"), true
				}
				if len(m) > 0 {
					top := *c.Median
					if !math.IsNaN(w.high[i]) {
						top = w.high[i]
					}
					marks.XYs = append(marks.XYs, plotter.XY{X: float64(i), Y: top})
					marks.Labels = append(marks.Labels, strings.Join(m, ""))
				}
			}
			bars, err := plotter.NewBarChart(vals, barWidth)
			if err != nil {
				return nil, false, err
			}
			bars.Color = colorOf(j, results.Group(t.Groups[j]))
			bars.LineStyle.Width = 0
			bars.Offset = barWidth * (vg.Length(j) - vg.Length(ncols-1)/2)
			w.offset = bars.Offset
			p.Add(bars, w)
			if pi == 0 {
				legend.add(t.Columns[j], bars)
			}
			if len(marks.XYs) > 0 {
				lbl, err := labelsAbove(marks, 9, vg.Point{X: bars.Offset, Y: 2})
				if err != nil {
					return nil, false, err
				}
				p.Add(lbl)
			}
		}
		if pi == 0 {
			p.Title.Text = t.Family + ", " + t.Machine
		}
		plots = append(plots, p)
	}
	if !any {
		return nil, false, nil
	}
	if bound {
		legend.add(legendBound, markThumb{"‡"})
	}
	if noSplice {
		legend.add(legendNoSplice, markThumb{"†"})
	}
	width := min(max(barWidthMin, vg.Length(maxRows)*(vg.Length(ncols)+1.5)*barWidth+3*vg.Centimeter), barWidthMax)
	svg, err := svgOf(plots, legend, width, vg.Length(len(plots))*barPanelHeight+legendHeight(legend.n))
	return svg, true, err
}

// plotFont is the charts' font at size points.
func plotFont(size vg.Length) font.Font { return font.From(plot.DefaultFont, size) }

// percentiles of the HDR charts' X axis, from the median to the
// 99.99th, as -log10(1 - p/100): 50 is 0.3, 99.99 is 4.
var hdrTicks = []float64{50, 90, 99, 99.9, 99.99}

func hdrX(p float64) float64 { return -math.Log10(1 - p/100) }

// hdrLine is a column's line in an HDR chart: the merged histogram of
// its runs, in microseconds.
type hdrLine struct {
	name  string
	color color.Color
	h     *hdrhistogram.Histogram
}

// hdrChart is the percentile chart of a mix scenario: a line per column
// of its latency (ms, log axis) against the percentile (50 to 99.99, on
// the axis HdrHistogram's plots use).
func hdrChart(title string, lines []hdrLine) ([]byte, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "percentile"
	p.Y.Label.Text = "latency, ms"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = ticks125{}
	var ticks plot.ConstantTicks
	for _, t := range hdrTicks {
		ticks = append(ticks, plot.Tick{Value: hdrX(t), Label: strconv.FormatFloat(t, 'f', -1, 64)})
	}
	p.X.Tick.Marker = ticks
	first, last := hdrX(hdrTicks[0]), hdrX(hdrTicks[len(hdrTicks)-1])
	// Room beyond the last percentile for its label, which is centred on
	// its tick.
	p.X.Min, p.X.Max = first, last+0.08*(last-first)
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs = 0.5 * vg.Centimeter
	const steps = 120
	for _, l := range lines {
		pts := make(plotter.XYs, 0, steps+1)
		for i := 0; i <= steps; i++ {
			x := first + (last-first)*float64(i)/steps
			q := 100 * (1 - math.Pow(10, -x))
			pts = append(pts, plotter.XY{X: x, Y: max(float64(l.h.ValueAtQuantile(q))/1e3, 0.001)})
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		line.Color = l.color
		line.Width = vg.Points(1.5)
		p.Add(line)
		p.Legend.Add(l.name, line)
	}
	p.Add(plotter.NewGrid())
	return svgOf([]*plot.Plot{p}, nil, hdrWidth, hdrHeight)
}

// ticks125 marks a log axis at 1, 2 and 5 times the powers of ten in its
// range, each labelled, so that a range within one decade still reads.
type ticks125 struct{}

func (ticks125) Ticks(min, max float64) []plot.Tick {
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(min)); e <= math.Ceil(math.Log10(max)); e++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, e)
			if v >= min && v <= max {
				ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
			}
		}
	}
	return ticks
}

// legendRoom is how far above its highest point a small chart's axis
// reaches, so that the legend in its top corner stays clear of the lines.
const legendRoom = 2.2

// The roles' colors and names in the CPU panels.
var roleLines = []struct {
	role  string
	color color.Color
}{
	{"proxy", color.RGBA{R: 200, G: 40, B: 40, A: 255}},
	{"client", color.RGBA{R: 40, G: 90, B: 200, A: 255}},
	{"origin", color.RGBA{R: 40, G: 150, B: 60, A: 255}},
}

// seriesChart is the small chart of a cell's runs second by second: the
// load tool's throughput (where it gives a series) above the three roles'
// CPU busy fraction, a line per run (dashed from the second run on).
func seriesChart(title string, unit results.Unit, runs []*results.RunData) ([]byte, error) {
	var plots []*plot.Plot
	hasLoad, hasCPU := false, false
	for _, d := range runs {
		hasLoad = hasLoad || len(d.Intervals) > 0
		for _, rl := range roleLines {
			hasCPU = hasCPU || len(d.CPU[rl.role]) > 0
		}
	}
	dash := func(i int) []vg.Length {
		if i == 0 {
			return nil
		}
		return []vg.Length{vg.Points(3), vg.Points(2)}
	}
	if hasLoad {
		p := plot.New()
		p.Title.Text = title
		p.Y.Label.Text = string(unit)
		p.Y.Min = 0
		if !hasCPU {
			p.X.Label.Text = "s"
		}
		top := 0.0
		for i, d := range runs {
			if len(d.Intervals) == 0 {
				continue
			}
			pts := make(plotter.XYs, len(d.Intervals))
			at := 0.0
			for k, iv := range d.Intervals {
				at += iv.Seconds
				pts[k] = plotter.XY{X: at, Y: iv.Of(unit)}
				top = max(top, pts[k].Y)
			}
			line, err := plotter.NewLine(pts)
			if err != nil {
				return nil, err
			}
			line.Color, line.Dashes = color.Black, dash(i)
			p.Add(line)
			p.Legend.Add("rep "+strconv.Itoa(d.Rep), line)
		}
		p.Legend.Top = true
		p.Y.Max = top * legendRoom
		plots = append(plots, p)
	}
	if !hasCPU {
		plots[0].X.Max = math.Max(plots[0].X.Max, 1) * 1.06
		return svgOf(plots, nil, seriesWidth, seriesHeight*0.6)
	}
	c := plot.New()
	if !hasLoad {
		c.Title.Text = title
	}
	c.Y.Label.Text = "CPU busy"
	c.X.Label.Text = "s"
	c.Y.Min, c.Y.Max = 0, legendRoom
	c.Y.Tick.Marker = plot.ConstantTicks{{Value: 0, Label: "0"}, {Value: 0.5, Label: "0.5"}, {Value: 1, Label: "1"}}
	for i, d := range runs {
		for _, rl := range roleLines {
			v := d.CPU[rl.role]
			if len(v) == 0 {
				continue
			}
			pts := make(plotter.XYs, len(v))
			for k, f := range v {
				pts[k] = plotter.XY{X: float64(k + 1), Y: f}
			}
			line, err := plotter.NewLine(pts)
			if err != nil {
				return nil, err
			}
			line.Color, line.Dashes = rl.color, dash(i)
			c.Add(line)
			if i == 0 {
				c.Legend.Add(rl.role, line)
			}
		}
	}
	c.Legend.Top = true
	c.Legend.Left = true
	plots = append(plots, c)
	h := seriesHeight
	if !hasLoad {
		h = seriesHeight * 0.6
	}
	// Room on the right for the last second's label, centred on its tick.
	for _, p := range plots {
		p.X.Max = math.Max(p.X.Max, 1) * 1.06
	}
	return svgOf(plots, nil, seriesWidth, h)
}

// errChart wraps a chart's error with what it was.
func errChart(what string, err error) error { return fmt.Errorf("chart of %s: %w", what, err) }

// Package chart is the kit the pages' charts are drawn with:
// gonum.org/v1/plot to SVG, in one typeface (Font, Face, Text), with
// legends under the plots (LegendEntry, SVGOf), an SVG <title> on every
// bar and line (Tips), ticks (LinearTicks, LogTicks) and the columns'
// colours (Palette). It knows no table: the session's page, compare and
// trend each draw their own charts with it.
package chart

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"html"
	"image/color"
	"math"
	"regexp"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// The session page's charts: a grouped bar chart of each throughput
// table (a panel per unit), an HDR percentile chart of each mix scenario,
// and small time series of each cell's runs. Their legends sit under the
// plots, never on the data, and every bar and line carries an SVG <title>
// with its figures.

// Sizes of the charts.
const (
	BarPanelHeight = 6 * vg.Centimeter
	BarWidthMin    = 16 * vg.Centimeter
	BarWidthMax    = 60 * vg.Centimeter // the most a chart widens for its labels' sake
	BarWidth       = 0.35 * vg.Centimeter
	BarYAxisRoom   = 2.5 * vg.Centimeter // the Y axis' label and ticks, at most
	LabelLinesMost = 3                   // the lines a group label wraps to, unless the chart would pass BarWidthMax
	HdrWidth       = 16 * vg.Centimeter
	HdrHeight      = 9 * vg.Centimeter
	SeriesWidth    = 9 * vg.Centimeter
	SeriesHeight   = 7 * vg.Centimeter
)

// Tips puts SVG <title>s, which browsers show on hovering, on what a
// chart draws. vgsvg writes no <title>, so a plotter draws a marker text
// before the element it titles and another after it (begin, end), and
// SVGOf replaces the pair with a <g> holding the <title> and the element:
// the markers keep the title beside the very path they surround. A
// marker carries a random key of its chart's, drawn afresh for each
// chart, so that no text a chart draws (a column's name, a scenario's)
// can pass for one: a name that looks like a marker stays a name.
type Tips struct {
	key   string
	texts []string
}

// The tipped elements' classes, for the page's tests.
const (
	TipBar  = "bar"
	TipLine = "line"
)

// tipMarker matches a marker as vgsvg writes it: its key and, for a
// begin, the index of its title.
var tipMarker = regexp.MustCompile(`<text [^>]*>@@tip ([0-9a-f]+) (\d+|/)@@</text>\n`)

// marker is the text of a marker of t's: the index of a title, or "/"
// for an end.
func (t *Tips) marker(what string) string {
	if t.key == "" {
		var k [16]byte
		rand.Read(k[:])
		t.key = hex.EncodeToString(k[:])
	}
	return "@@tip " + t.key + " " + what + "@@"
}

// Begin marks the start of an element of class kind, its title text and,
// when it is a column's, the column's name.
func (t *Tips) Begin(c draw.Canvas, kind, column, text string) {
	attrs := `class="` + kind + `"`
	if column != "" {
		attrs += ` data-column="` + html.EscapeString(column) + `"`
	}
	t.texts = append(t.texts, "<g "+attrs+"><title>"+html.EscapeString(text)+"</title>\n")
	c.FillString(Face(1), c.Min, t.marker(strconv.Itoa(len(t.texts)-1)))
}

// End marks the end of the element begun last.
func (t *Tips) End(c draw.Canvas) { c.FillString(Face(1), c.Min, t.marker("/")) }

// apply replaces the markers of svg, those with t's key alone, with the
// titles' groups.
func (t *Tips) apply(svg []byte) []byte {
	if t.key == "" {
		return svg
	}
	return tipMarker.ReplaceAllFunc(svg, func(m []byte) []byte {
		sub := tipMarker.FindSubmatch(m)
		if string(sub[1]) != t.key {
			return m
		}
		if string(sub[2]) == "/" {
			return []byte("</g>\n")
		}
		i, err := strconv.Atoi(string(sub[2]))
		if err != nil || i < 0 || i >= len(t.texts) {
			return m
		}
		return []byte(t.texts[i])
	})
}

// LegendEntry is an entry of a chart's legend.
type LegendEntry struct {
	Name  string
	Thumb plot.Thumbnailer
}

// The legend's layout: entries side by side in rows under the plots.
const (
	legendFontSize = 9
	legendThumb    = 0.6 * vg.Centimeter
	legendGap      = 0.4 * vg.Centimeter
	legendRowH     = 0.5 * vg.Centimeter
	LegendInset    = 0.3 * vg.Centimeter
)

// legendRows lays the entries out in rows no wider than w.
func legendRows(entries []LegendEntry, w vg.Length) [][]LegendEntry {
	face := Face(legendFontSize)
	var rows [][]LegendEntry
	var at vg.Length
	for _, e := range entries {
		ew := legendThumb + legendGap/3 + face.Width(e.Name)
		if len(rows) == 0 || at+ew > w-2*LegendInset {
			rows, at = append(rows, nil), 0
		}
		rows[len(rows)-1] = append(rows[len(rows)-1], e)
		at += ew + legendGap
	}
	return rows
}

// legendHeight is the room the legend's rows take.
func legendHeight(rows [][]LegendEntry) vg.Length {
	if len(rows) == 0 {
		return 0
	}
	return vg.Length(len(rows))*legendRowH + LegendInset
}

// drawLegend draws the rows from the top of c.
func drawLegend(c draw.Canvas, rows [][]LegendEntry) {
	face := Face(legendFontSize)
	sty := draw.TextStyle{Color: color.Black, Font: Font(legendFontSize), Handler: Text,
		XAlign: draw.XLeft, YAlign: draw.YCenter}
	for i, row := range rows {
		y := c.Max.Y - LegendInset/2 - (vg.Length(i)+0.5)*legendRowH
		x := c.Min.X + LegendInset
		for _, e := range row {
			th := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x, Y: y - legendRowH/3}, Max: vg.Point{X: x + legendThumb, Y: y + legendRowH/3}}}
			e.Thumb.Thumbnail(&th)
			x += legendThumb + legendGap/3
			c.FillText(sty, vg.Point{X: x, Y: y}, e.Name)
			x += face.Width(e.Name) + legendGap
		}
	}
}

// SVGOf draws the plots, one above the other in panelsH, and the legend
// under them, on an SVG canvas w wide, and returns the SVG element alone,
// without its XML prologue, to be put in the page: as wide as its figure
// up to its own width, its height following.
func SVGOf(plots []*plot.Plot, legend []LegendEntry, t *Tips, w, panelsH vg.Length) (svg []byte, err error) {
	defer func() {
		// gonum panics on what it cannot draw (a log axis reaching
		// zero): the chart is left out, not the page
		if p := recover(); p != nil {
			svg, err = undrawable, nil
		}
	}()
	rows := legendRows(legend, w)
	lh := legendHeight(rows)
	c := vgsvg.New(w, panelsH+lh)
	// A margin all round: a browser's box of a text (a rotated axis
	// label's above all) reaches a little beyond the glyphs gonum measures.
	margin := vg.Points(3)
	dc := draw.Crop(draw.New(c), margin, -margin, margin, -margin)
	drawLegend(draw.Crop(dc, 0, 0, 0, -panelsH), rows)
	grid := make([][]*plot.Plot, len(plots))
	for i, p := range plots {
		grid[i] = []*plot.Plot{p}
	}
	tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadY: 0.3 * vg.Centimeter, PadTop: 0.1 * vg.Centimeter}
	for i, row := range plot.Align(grid, tiles, draw.Crop(dc, 0, 0, lh, 0)) {
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
	if nonFinite.Match(out) {
		// a figure out of the range gonum lays out (1e-100, 1e300)
		// puts infinities in coordinates: no chart of it
		return undrawable, nil
	}
	if t != nil {
		out = t.apply(out)
	}
	// width="100%" with its own width as the most, and no height: the
	// browser scales it to a narrow figure and keeps its proportions.
	size := regexp.MustCompile(`^<svg width="([0-9.e+]+)pt" height="[0-9.e+]+pt"`)
	return size.ReplaceAll(out, []byte(`<svg width="100%" style="max-width:${1}pt"`)), nil
}

// nonFinite matches an attribute of vgsvg's (coordinates, a path, a
// style) that holds a number not finite; the texts a chart draws are
// between elements, not in attributes, and the tips' attributes are not
// yet in.
var nonFinite = regexp.MustCompile(`="[^"]*(?:Inf|NaN)`)

// undrawable is the chart in place of one whose figures cannot be drawn.
var undrawable = []byte(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 400 24" width="100%" style="max-width:400pt"><text x="4" y="16" font-size="12">Not drawn: its figures are out of the range a chart can show.</text></svg>`)

// NewPlot is plot.New with more room between an axis' tick labels and
// its label, for the reason of SVGOf's margin, and under the title:
// gonum keeps a chart's glyphs (the marks over the bars) inside its data
// area, whose top is the title's bottom, so that a mark over the tallest
// bar touched the title.
func NewPlot() *plot.Plot {
	p := plot.New()
	useChartFont(p)
	p.Title.Padding = vg.Points(4)
	p.X.Label.Padding += vg.Points(2)
	p.Y.Label.Padding += vg.Points(2)
	return p
}

// Swatch is a legend entry of a colour: a bar's.
type Swatch struct{ Color color.Color }

// Thumbnail fills the thumbnail's box.
func (s Swatch) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(s.Color, []vg.Point{c.Min, {X: c.Max.X, Y: c.Min.Y}, c.Max, {X: c.Min.X, Y: c.Max.Y}})
}

// MarkThumb is a legend entry drawn as a mark of the tables: ‡ or †.
type MarkThumb struct{ Glyph string }

// Thumbnail draws the mark.
func (m MarkThumb) Thumbnail(c *draw.Canvas) {
	sty := draw.TextStyle{Color: color.Black, Font: Font(11), Handler: Text,
		XAlign: draw.XCenter, YAlign: draw.YCenter}
	c.FillText(sty, c.Center(), m.Glyph)
}

// TippedLine is a line (and its points' glyphs, when it has them) under
// a title.
type TippedLine struct {
	*plotter.Line
	Points *plotter.Scatter // nil: none
	Column string
	Title  string
	Tips   *Tips
}

// Plot draws the line and its points.
func (l *TippedLine) Plot(c draw.Canvas, plt *plot.Plot) {
	l.Tips.Begin(c, TipLine, l.Column, l.Title)
	l.Line.Plot(c, plt)
	if l.Points != nil {
		l.Points.Plot(c, plt)
	}
	l.Tips.End(c)
}

// Thumbnail draws the line with a glyph.
func (l *TippedLine) Thumbnail(c *draw.Canvas) {
	l.Line.Thumbnail(c)
	if l.Points != nil {
		l.Points.Thumbnail(c)
	}
}

// LinearTicks marks a linear axis at no more than most round steps (1, 2
// or 5 times a power of ten), each labelled with the decimals its step
// needs: gonum's default marks a small panel's axis more densely than its
// labels' height allows.
type LinearTicks struct {
	Most int
}

func (l LinearTicks) Ticks(min, max float64) []plot.Tick {
	if !(max > min) {
		return []plot.Tick{{Value: min, Label: strconv.FormatFloat(min, 'g', 3, 64)}}
	}
	raw := (max - min) / float64(l.Most-1)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	decimals := int(math.Max(0, -math.Floor(math.Log10(step))))
	var ticks []plot.Tick
	// at most the ticks the range holds: a step below the figures'
	// precision (2^83 apart by 1e9) would never pass max
	for v, n := math.Ceil(min/step)*step, 0; v <= max+step*1e-9 && n <= l.Most; v, n = v+step, n+1 {
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', decimals, 64)})
	}
	return ticks
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

// LogTicks are ticks125's, labelled at the powers of ten alone where
// the axis spans more than two of them: the labels of 1, 2 and 5 of
// every power would run into each other (a sweep's latencies, a mix's
// percentiles up to a saturated proxy's seconds).
type LogTicks struct{}

func (LogTicks) Ticks(min, max float64) []plot.Tick {
	ticks := ticks125{}.Ticks(min, max)
	if max/min <= 100 {
		return ticks
	}
	for i, t := range ticks {
		if m := t.Value / math.Pow(10, math.Floor(math.Log10(t.Value)+1e-9)); math.Abs(m-1) > 1e-6 {
			ticks[i].Label = ""
		}
	}
	return ticks
}

// ErrChart wraps a chart's error with what it was.
func ErrChart(what string, err error) error { return fmt.Errorf("chart of %s: %w", what, err) }

// LabelsAbove are texts centered above their points, in the charts'
// font at size points, moved by offset: the marks over a bar chart's
// bars (the session page's ‡ and †, compare's changes).
func LabelsAbove(marks plotter.XYLabels, size vg.Length, offset vg.Point) (*plotter.Labels, error) {
	lbl, err := plotter.NewLabels(marks)
	if err != nil {
		return nil, err
	}
	for k := range lbl.TextStyle {
		lbl.TextStyle[k].XAlign, lbl.TextStyle[k].YAlign = draw.XCenter, draw.YBottom
		lbl.TextStyle[k].Font = Font(size)
		lbl.TextStyle[k].Handler = Text
	}
	lbl.Offset = offset
	return lbl, nil
}

// The classes of the pages' charts, one figure each.
const (
	ClassBar    = "chart bar"
	ClassHDR    = "chart hdr"
	ClassSeries = "chart series"
)

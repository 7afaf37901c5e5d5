package report

import (
	"bench/report/results"
	"bytes"
	"encoding/base64"
	"fmt"
	"hash/fnv"
	"html"
	"image/color"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/font/sfnt"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// The charts of the page, drawn with gonum.org/v1/plot to SVG: a grouped
// bar chart of each throughput table (a panel per unit), an HDR
// percentile chart of each mix scenario, and small time series of each
// cell's runs. Their legends sit under the plots, never on the data, and
// every bar and line carries an SVG <title> with its figures.

// Sizes of the charts.
const (
	barPanelHeight = 6 * vg.Centimeter
	barWidthMin    = 16 * vg.Centimeter
	barWidthMax    = 60 * vg.Centimeter // the most a chart widens for its labels' sake
	barWidth       = 0.35 * vg.Centimeter
	barYAxisRoom   = 2.5 * vg.Centimeter // the Y axis' label and ticks, at most
	labelLinesMost = 3                   // the lines a group label wraps to, unless the chart would pass barWidthMax
	hdrWidth       = 16 * vg.Centimeter
	hdrHeight      = 9 * vg.Centimeter
	seriesWidth    = 9 * vg.Centimeter
	seriesHeight   = 7 * vg.Centimeter
)

// chartTypeface is the charts' font: Go Regular, whose TrueType file the
// page embeds once (chartFontCSS), so that the browser draws the texts
// with the very metrics the charts were laid out by; a font left to the
// browser's choice is wider or narrower than the one measured.
const chartTypeface = "Go"

func init() {
	f, err := opentype.Parse(goregular.TTF)
	if err != nil {
		panic(fmt.Sprintf("report: parse the Go font: %v", err))
	}
	font.DefaultCache.Add(font.Collection{{Font: font.Font{Typeface: chartTypeface}, Face: f}})
	// plot.New takes its texts' font and handler from here; report is
	// its only user.
	plot.DefaultFont = font.Font{Typeface: chartTypeface}
	plot.DefaultTextHandler = spacedText{text.Plain{Fonts: font.DefaultCache}}
}

// spacedText is gonum's plain text with the lines of a text spaced by the
// font's height, as text.Style measures a block of them; text.Plain draws
// them a font size apart, less than the browser's box of a line, so that
// a wrapped label's lines would reach over each other.
type spacedText struct{ text.Plain }

// lineSpacing is the height of a line of text over its font's ascent and
// descent: a browser's box of a line of text is a little taller than
// them.
const lineSpacing = 1.15

// Extents are the font's, its height that of a line at lineSpacing.
func (h spacedText) Extents(f font.Font) font.Extents {
	e := h.Plain.Extents(f)
	e.Height = (e.Ascent + e.Descent) * lineSpacing
	return e
}

// Draw draws the text's lines, each a font height below the one before.
func (h spacedText) Draw(c vg.Canvas, txt string, sty text.Style, pt vg.Point) {
	txt = strings.TrimRight(txt, "\n")
	if txt == "" {
		return
	}
	fnt := h.Fonts.Lookup(sty.Font, sty.Font.Size)
	c.SetColor(sty.Color)
	if sty.Rotation != 0 {
		c.Push()
		c.Rotate(sty.Rotation)
	}
	sin64, cos64 := math.Sincos(sty.Rotation)
	cos, sin := vg.Length(cos64), vg.Length(sin64)
	pt.X, pt.Y = pt.Y*sin+pt.X*cos, pt.Y*cos-pt.X*sin
	e := h.Extents(sty.Font)
	ht := sty.Height(txt)
	top := pt.Y + ht*vg.Length(sty.YAlign) + ht
	for i, line := range h.Lines(txt) {
		x := pt.X + vg.Length(sty.XAlign)*fnt.Width(line)
		c.FillString(fnt, vg.Point{X: x, Y: top - e.Ascent - vg.Length(i)*e.Height}, line)
	}
	if sty.Rotation != 0 {
		c.Pop()
	}
}

// fitTitle wraps a chart's title to lines no wider than w.
func fitTitle(title string, w vg.Length) string {
	return strings.Join(wrapLabel(title, plotFace(12), w), "\n") // plot.New's title size
}

// chartFontCSS is the page's @font-face of the charts' font, the font
// file in it.
func chartFontCSS() string {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "@font-face{font-family:%q;src:url(data:font/ttf;base64,%s) format(\"truetype\")}",
		chartFontName(), base64.StdEncoding.EncodeToString(goregular.TTF))
	return buf.String()
}

// chartFontName is the family of the charts' font, as vgsvg names it:
// the font file's.
func chartFontName() string {
	name, err := plotFace(10).Face.Name(nil, sfnt.NameIDFamily)
	if err != nil {
		return chartTypeface
	}
	return name
}

// plotFont is the charts' font at size points.
func plotFont(size vg.Length) font.Font { return font.From(plot.DefaultFont, size) }

// plotFace is the charts' font at size points, to measure texts with.
func plotFace(size vg.Length) font.Face { return font.DefaultCache.Lookup(plotFont(size), size) }

// Colours of the columns: Paul Tol's muted scheme, safe for colour-blind
// readers, then his bright one for pages with more columns than it has.
var paletteColors = []color.Color{
	rgb(0x117733), rgb(0x332288), rgb(0x88ccee), rgb(0xcc6677), rgb(0xddcc77),
	rgb(0x44aa99), rgb(0x882255), rgb(0xaa4499), rgb(0x999933),
	rgb(0x4477aa), rgb(0xee6677), rgb(0x228833), rgb(0xccbb44), rgb(0x66ccee), rgb(0xaa3377),
}

// baselineColor is the baseline column's: Tol's grey.
var baselineColor = rgb(0xbbbbbb)

// knownColumns are the columns of the packaged proxies, each with its
// slot in paletteColors on every page.
var knownColumns = map[string]int{
	"nginx": 0, "haproxy": 1, "haproxy splice-auto": 2, "squid": 3, "tinyproxy": 4,
	"dante": 5, "stunnel": 6, "envoy": 7, "3proxy": 8,
}

func rgb(v uint32) color.Color {
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 255}
}

// palette is the colour of each column of a page (newPalette).
type palette struct {
	slots map[string]int
}

// newPalette gives each column of the tables its colour (paletteOf).
func newPalette(tables []Table) palette {
	var names []string
	for _, t := range tables {
		switch t.Family {
		case famTunnel: // its columns are directions (directionColors)
		case famHandshake: // its one column holds every proxy's rows
			for _, r := range t.Rows {
				for _, c := range r.Cells {
					names = append(names, c.Proxy)
				}
			}
		default:
			for j, name := range t.Columns {
				if results.Group(t.Groups[j]) != results.Baseline {
					names = append(names, name)
				}
			}
		}
	}
	return paletteOf(names)
}

// paletteOf gives each of the columns names (the baseline's apart) its
// colour: the packaged proxies' columns their fixed slots, and the others
// the slot of a hash of their name, or the next one no other column of
// the page has and whose colour is columnsApart from theirs, while there
// is one, else the next one no other column has. So a column has one colour on every
// chart of the page, and on every page where the columns it meets leave
// its hash's slot free.
func paletteOf(names []string) palette {
	p := palette{slots: map[string]int{}}
	var others []string
	used := map[int]bool{}
	for _, name := range names {
		if s, ok := knownColumns[name]; ok {
			p.slots[name], used[s] = s, true
		} else if !slices.Contains(others, name) {
			others = append(others, name)
		}
	}
	slices.Sort(others)
	near := func(s int) bool {
		for u := range used {
			if deltaE(paletteColors[s], paletteColors[u]) < columnsApart {
				return true
			}
		}
		return false
	}
	for _, name := range others {
		h := fnv.New32a()
		h.Write([]byte(name))
		first := int(h.Sum32() % uint32(len(paletteColors)))
		next := func(taken func(int) bool) int {
			s := first
			for k := 0; k < len(paletteColors) && taken(s); k++ {
				s = (s + 1) % len(paletteColors)
			}
			return s
		}
		s := next(func(s int) bool { return used[s] || near(s) })
		if used[s] || near(s) {
			s = next(func(s int) bool { return used[s] })
		}
		p.slots[name], used[s] = s, true
	}
	return p
}

// columnsApart is the least CIE76 distance (deltaE) of a column's colour
// from those of the other columns of a page, while the palette has one
// so far from them: the muted scheme's colours are 22.8 or more apart,
// the bright scheme's twins of theirs (Tol's green 228833 of 117733, red
// ee6677 of rose cc6677) 8 to 17.
const columnsApart = 20

// lab is c in CIE L*a*b* (D65), where the distance of two colours
// follows how far apart they look.
func lab(c color.Color) [3]float64 {
	r, g, b, _ := c.RGBA()
	lin := func(v uint32) float64 {
		s := float64(v) / 0xffff
		if s <= 0.04045 {
			return s / 12.92
		}
		return math.Pow((s+0.055)/1.055, 2.4)
	}
	R, G, B := lin(r), lin(g), lin(b)
	x := (0.4124*R + 0.3576*G + 0.1805*B) / 0.95047
	y := 0.2126*R + 0.7152*G + 0.0722*B
	z := (0.0193*R + 0.1192*G + 0.9505*B) / 1.08883
	f := func(t float64) float64 {
		if t > 0.008856 {
			return math.Cbrt(t)
		}
		return 7.787*t + 16.0/116
	}
	return [3]float64{116*f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))}
}

// deltaE is CIE76's distance of two colours: about 2.3 is the least a
// reader tells apart side by side; 25 and more, two colours no reader
// takes for one across a page.
func deltaE(a, b color.Color) float64 {
	la, lb := lab(a), lab(b)
	return math.Hypot(math.Hypot(la[0]-lb[0], la[1]-lb[1]), la[2]-lb[2])
}

// color is column's colour in every chart; the baseline's is grey, and a
// tunnel's directions have theirs, of the other palette.
func (p palette) color(column string, g results.Group) color.Color {
	if g == results.Baseline {
		return baselineColor
	}
	if i := slices.Index(directions, column); i >= 0 {
		return directionColors[i]
	}
	s, ok := p.slots[column]
	if !ok {
		s = knownColumns[column]
	}
	return paletteColors[s]
}

// tips puts SVG <title>s, which browsers show on hovering, on what a
// chart draws. vgsvg writes no <title>, so a plotter draws a marker text
// before the element it titles and another after it (begin, end), and
// svgOf replaces the pair with a <g> holding the <title> and the element:
// the markers keep the title beside the very path they surround.
type tips struct {
	texts []string
}

// The tipped elements' classes, for the page's tests.
const (
	tipBar  = "bar"
	tipLine = "line"
)

var (
	tipBegin = regexp.MustCompile(`<text [^>]*>@@tip (\d+)@@</text>\n`)
	tipEnd   = regexp.MustCompile(`<text [^>]*>@@/tip@@</text>\n`)
)

// begin marks the start of an element of class kind, its title text and,
// when it is a column's, the column's name.
func (t *tips) begin(c draw.Canvas, kind, column, text string) {
	attrs := `class="` + kind + `"`
	if column != "" {
		attrs += ` data-column="` + html.EscapeString(column) + `"`
	}
	t.texts = append(t.texts, "<g "+attrs+"><title>"+html.EscapeString(text)+"</title>\n")
	c.FillString(plotFace(1), c.Min, "@@tip "+strconv.Itoa(len(t.texts)-1)+"@@")
}

// end marks the end of the element begun last.
func (t *tips) end(c draw.Canvas) { c.FillString(plotFace(1), c.Min, "@@/tip@@") }

// apply replaces the markers of svg with the titles' groups.
func (t *tips) apply(svg []byte) []byte {
	svg = tipBegin.ReplaceAllFunc(svg, func(m []byte) []byte {
		i, _ := strconv.Atoi(string(tipBegin.FindSubmatch(m)[1]))
		return []byte(t.texts[i])
	})
	return tipEnd.ReplaceAll(svg, []byte("</g>\n"))
}

// legendEntry is an entry of a chart's legend.
type legendEntry struct {
	name  string
	thumb plot.Thumbnailer
}

// The legend's layout: entries side by side in rows under the plots.
const (
	legendFontSize = 9
	legendThumb    = 0.6 * vg.Centimeter
	legendGap      = 0.4 * vg.Centimeter
	legendRowH     = 0.5 * vg.Centimeter
	legendInset    = 0.3 * vg.Centimeter
)

// legendRows lays the entries out in rows no wider than w.
func legendRows(entries []legendEntry, w vg.Length) [][]legendEntry {
	face := plotFace(legendFontSize)
	var rows [][]legendEntry
	var at vg.Length
	for _, e := range entries {
		ew := legendThumb + legendGap/3 + face.Width(e.name)
		if len(rows) == 0 || at+ew > w-2*legendInset {
			rows, at = append(rows, nil), 0
		}
		rows[len(rows)-1] = append(rows[len(rows)-1], e)
		at += ew + legendGap
	}
	return rows
}

// legendHeight is the room the legend's rows take.
func legendHeight(rows [][]legendEntry) vg.Length {
	if len(rows) == 0 {
		return 0
	}
	return vg.Length(len(rows))*legendRowH + legendInset
}

// drawLegend draws the rows from the top of c.
func drawLegend(c draw.Canvas, rows [][]legendEntry) {
	face := plotFace(legendFontSize)
	sty := draw.TextStyle{Color: color.Black, Font: plotFont(legendFontSize), Handler: plot.DefaultTextHandler,
		XAlign: draw.XLeft, YAlign: draw.YCenter}
	for i, row := range rows {
		y := c.Max.Y - legendInset/2 - (vg.Length(i)+0.5)*legendRowH
		x := c.Min.X + legendInset
		for _, e := range row {
			th := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x, Y: y - legendRowH/3}, Max: vg.Point{X: x + legendThumb, Y: y + legendRowH/3}}}
			e.thumb.Thumbnail(&th)
			x += legendThumb + legendGap/3
			c.FillText(sty, vg.Point{X: x, Y: y}, e.name)
			x += face.Width(e.name) + legendGap
		}
	}
}

// svgOf draws the plots, one above the other in panelsH, and the legend
// under them, on an SVG canvas w wide, and returns the SVG element alone,
// without its XML prologue, to be put in the page: as wide as its figure
// up to its own width, its height following.
func svgOf(plots []*plot.Plot, legend []legendEntry, t *tips, w, panelsH vg.Length) ([]byte, error) {
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
	if t != nil {
		out = t.apply(out)
	}
	// width="100%" with its own width as the most, and no height: the
	// browser scales it to a narrow figure and keeps its proportions.
	size := regexp.MustCompile(`^<svg width="([0-9.e+]+)pt" height="[0-9.e+]+pt"`)
	return size.ReplaceAll(out, []byte(`<svg width="100%" style="max-width:${1}pt"`)), nil
}

// newPlot is plot.New with more room between an axis' tick labels and
// its label, for the reason of svgOf's margin, and under the title:
// gonum keeps a chart's glyphs (the marks over the bars) inside its data
// area, whose top is the title's bottom, so that a mark over the tallest
// bar touched the title.
func newPlot() *plot.Plot {
	p := plot.New()
	p.Title.Padding = vg.Points(4)
	p.X.Label.Padding += vg.Points(2)
	p.Y.Label.Padding += vg.Points(2)
	return p
}

// swatch is a legend entry of a colour: a bar's.
type swatch struct{ color color.Color }

// Thumbnail fills the thumbnail's box.
func (s swatch) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(s.color, []vg.Point{c.Min, {X: c.Max.X, Y: c.Min.Y}, c.Max, {X: c.Min.X, Y: c.Max.Y}})
}

// markThumb is a legend entry drawn as a mark of the tables: ‡ or †.
type markThumb struct{ glyph string }

// Thumbnail draws the mark.
func (m markThumb) Thumbnail(c *draw.Canvas) {
	sty := draw.TextStyle{Color: color.Black, Font: plotFont(11), Handler: plot.DefaultTextHandler,
		XAlign: draw.XCenter, YAlign: draw.YCenter}
	c.FillText(sty, c.Center(), m.glyph)
}

// Legend texts of the marks.
const (
	legendBound     = "most runs bound by the client or the origin"
	legendToolBound = "within 10% of no proxy's rate: the load tool's limit"
	legendNoSplice  = "never spliced: the figure is a copying proxy's"
	legendFailed    = "over 1% of exchanges failed: their part dashed"
)

// boundLegend is the legend of t's ‡: what the mark says in its table.
func boundLegend(t Table) string {
	if t.Kind == kindSweep {
		return legendToolBound
	}
	return legendBound
}

// barSet is a column's bars in a panel: each at its median, with a
// whisker from its slowest run to its fastest, each bar and whisker under
// a title of its figures.
type barSet struct {
	column    string
	median    []float64 // NaN: no figure
	low, high []float64 // NaN: no runs
	// failed is the part of a bar's height its failed exchanges would
	// add (a cell beyond ErrorWarn: failedPart), drawn apart over it,
	// dashed; NaN for none.
	failed []float64
	titles []string
	offset vg.Length // from the group's centre
	color  color.Color
	tips   *tips
}

// Plot draws the bars.
func (b *barSet) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	whisker := draw.LineStyle{Color: color.Black, Width: vg.Points(0.7)}
	cap := vg.Length(3)
	for i, m := range b.median {
		if math.IsNaN(m) {
			continue
		}
		x := trX(float64(i)) + b.offset
		b.tips.begin(c, tipBar, b.column, b.titles[i])
		lo, hi := x-barWidth/2, x+barWidth/2
		y0, y1 := trY(0), trY(m)
		c.FillPolygon(b.color, []vg.Point{{X: lo, Y: y0}, {X: hi, Y: y0}, {X: hi, Y: y1}, {X: lo, Y: y1}})
		if f := b.failedAt(i); !math.IsNaN(f) {
			dashed := draw.LineStyle{Color: b.color, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(2), vg.Points(1.5)}}
			y2 := trY(m + f)
			c.StrokeLines(dashed, []vg.Point{{X: lo, Y: y1}, {X: lo, Y: y2}, {X: hi, Y: y2}, {X: hi, Y: y1}})
		}
		if !math.IsNaN(b.low[i]) {
			wl, wh := trY(b.low[i]), trY(b.high[i])
			c.StrokeLine2(whisker, x, wl, x, wh)
			c.StrokeLine2(whisker, x-cap, wl, x+cap, wl)
			c.StrokeLine2(whisker, x-cap, wh, x+cap, wh)
		}
		b.tips.end(c)
	}
}

// failedAt is the failed part of bar i, NaN where the set has none (a
// chart that draws no failures leaves failed nil).
func (b *barSet) failedAt(i int) float64 {
	if i >= len(b.failed) {
		return math.NaN()
	}
	return b.failed[i]
}

// DataRange spans the bars and their whiskers, from zero or below it
// (compareChart's changes for the worse).
func (b *barSet) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmax = float64(len(b.median) - 1)
	for i, m := range b.median {
		if !math.IsNaN(m) {
			ymin, ymax = min(ymin, m), max(ymax, m)
		}
		if !math.IsNaN(b.low[i]) {
			ymin = min(ymin, b.low[i])
		}
		if f := b.failedAt(i); !math.IsNaN(m) && !math.IsNaN(f) {
			ymax = max(ymax, m+f)
		}
		if !math.IsNaN(b.high[i]) {
			ymax = max(ymax, b.high[i])
		}
	}
	return
}

// barTitle is a bar's title: its column and scenario, its figure, and its
// runs' count and range.
func barTitle(column, label string, unit results.Unit, s summary) string {
	t := column + ", " + label + ": " + unit.Format(s.med)
	if len(s.runs) == 1 {
		return t + " (1 run)"
	}
	return fmt.Sprintf("%s, the median of %d runs, %s..%s", t, len(s.runs), unit.Format(s.low), unit.Format(s.high))
}

// failedPart is the height of a cell's failed exchanges over its bar:
// at the answered ones' rate (its median), the failures' share beside
// them; NaN for a cell within ErrorWarn, or one whose exchanges all
// failed (no rate to draw them at).
func failedPart(c Cell, med float64) float64 {
	if !erring(c) || *c.ErrorShare >= 1 {
		return math.NaN()
	}
	sh := *c.ErrorShare
	return med * sh / (1 - sh)
}

// wrapLabel breaks a group's label into lines no wider than w where it
// can: after a space, a '-' or a '_'.
func wrapLabel(s string, face font.Face, w vg.Length) []string {
	var lines []string
	line := ""
	for _, piece := range labelPieces(s) {
		if line != "" && face.Width(strings.TrimRight(line+piece, " ")) > w {
			lines, line = append(lines, strings.TrimRight(line, " ")), ""
		}
		line += piece
	}
	return append(lines, strings.TrimRight(line, " "))
}

// labelPieces cuts s after each space, '-' and '_': the places a label
// may break.
func labelPieces(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexAny(s, " -_")
		if i < 0 {
			return append(out, s)
		}
		out, s = append(out, s[:i+1]), s[i+1:]
	}
	return out
}

// slotWidth is the width of a group of a panel: room for its bars, for
// the widest piece of a label that cannot break, and, short of passing
// most, for every label in labelLinesMost lines.
func slotWidth(labels []string, ncols int, face font.Face, most vg.Length) vg.Length {
	pad := 0.3 * vg.Centimeter
	w := vg.Length(ncols)*barWidth + pad
	for _, l := range labels {
		for _, p := range labelPieces(l) {
			w = max(w, face.Width(strings.TrimRight(p, " "))+pad)
		}
	}
	fits := func(w vg.Length) bool {
		for _, l := range labels {
			if len(wrapLabel(l, face, w-pad)) > labelLinesMost {
				return false
			}
		}
		return true
	}
	for !fits(w) && w+0.2*vg.Centimeter <= most {
		w += 0.2 * vg.Centimeter
	}
	return w
}

// barChart is the grouped bar chart of a throughput table: a group per
// row, a bar per column at its median, whiskers from its slowest run to
// its fastest, and the ‡ and † cells marked above their bars. Each unit
// of the rows (results.UnitOf: Gbit/s, k req/s, conn/s) has a panel of its
// own, so that no figure is drawn on another unit's axis. False when no
// cell has a median.
func barChart(t Table, pal palette) ([]byte, bool, error) {
	type panel struct {
		unit results.Unit
		rows []TableRow
	}
	var panels []*panel
	byUnit := map[results.Unit]*panel{}
	for _, r := range t.Rows {
		if !slices.ContainsFunc(r.Cells, func(c Cell) bool { return c.chart.ok }) {
			continue
		}
		p := byUnit[r.unit]
		if p == nil {
			p = &panel{unit: r.unit}
			byUnit[r.unit] = p
			panels = append(panels, p)
		}
		p.rows = append(p.rows, r)
	}
	if len(panels) == 0 {
		return nil, false, nil
	}
	ncols := len(t.Columns)
	tickFace := plotFace(10) // plot.New's tick labels' size
	names := make([][]string, len(panels))
	dataWidth := barWidthMin - barYAxisRoom
	for pi, pn := range panels {
		names[pi] = make([]string, len(pn.rows))
		for i, r := range pn.rows {
			names[pi][i], _, _ = strings.Cut(r.Label, ", ")
		}
		most := (barWidthMax - barYAxisRoom) / vg.Length(len(pn.rows))
		dataWidth = max(dataWidth, vg.Length(len(pn.rows))*slotWidth(names[pi], ncols, tickFace, most))
	}
	width := dataWidth + barYAxisRoom
	series := chartSeries(t, pal)
	var legend []legendEntry
	for _, se := range series {
		legend = append(legend, legendEntry{se.name, swatch{se.color}})
	}
	tp := &tips{}
	bound, noSplice, failed := false, false, false
	var plots []*plot.Plot
	for pi, pn := range panels {
		p := newPlot()
		if pi == 0 {
			p.Title.Text = fitTitle(t.Family+", "+t.Machine, width-barYAxisRoom)
		}
		p.Y.Label.Text = string(pn.unit)
		p.Y.Min = 0
		p.Y.Tick.Marker = linearTicks{most: 6}
		slot := dataWidth / vg.Length(len(pn.rows))
		wrapped := make([]string, len(pn.rows))
		for i, n := range names[pi] {
			wrapped[i] = strings.Join(wrapLabel(n, tickFace, slot-0.3*vg.Centimeter), "\n")
		}
		p.NominalX(wrapped...)
		// Each group in a slot of its own, its label centred in it.
		p.X.Min, p.X.Max = -0.5, float64(len(pn.rows))-0.5
		p.Y.Padding = 0
		for _, se := range series {
			j, col := se.col, se.name
			n := len(pn.rows)
			bs := &barSet{column: col, median: make([]float64, n), low: make([]float64, n), high: make([]float64, n),
				failed: make([]float64, n), titles: make([]string, n), offset: barWidth * (vg.Length(j) - vg.Length(ncols-1)/2),
				color: se.color, tips: tp}
			var marks plotter.XYLabels
			for i, r := range pn.rows {
				c := r.Cells[j]
				bs.median[i], bs.low[i], bs.high[i], bs.failed[i] = math.NaN(), math.NaN(), math.NaN(), math.NaN()
				if !c.chart.ok || (se.proxy != "" && c.Proxy != se.proxy) {
					continue
				}
				s := c.chart
				bs.median[i], bs.low[i], bs.high[i] = s.med, s.low, s.high
				bs.failed[i] = failedPart(c, s.med)
				bs.titles[i] = barTitle(col, names[pi][i], pn.unit, s)
				var m []string
				top := s.high
				if erring(c) {
					m, failed = append(m, errorMark), true
					bs.titles[i] += "; " + sharePercent(*c.ErrorShare) + " of its exchanges failed"
					if !math.IsNaN(bs.failed[i]) {
						top = max(top, s.med+bs.failed[i])
					}
				}
				if c.Bound {
					m, bound = append(m, "‡"), true
				}
				if c.NoSplice {
					m, noSplice = append(m, "†"), true
				}
				if len(m) > 0 {
					marks.XYs = append(marks.XYs, plotter.XY{X: float64(i), Y: top})
					marks.Labels = append(marks.Labels, strings.Join(m, ""))
				}
			}
			p.Add(bs)
			if len(marks.XYs) > 0 {
				lbl, err := labelsAbove(marks, 9, vg.Point{X: bs.offset, Y: 2})
				if err != nil {
					return nil, false, err
				}
				p.Add(lbl)
			}
		}
		plots = append(plots, p)
	}
	if bound {
		legend = append(legend, legendEntry{boundLegend(t), markThumb{"‡"}})
	}
	if noSplice {
		legend = append(legend, legendEntry{legendNoSplice, markThumb{"†"}})
	}
	if failed {
		legend = append(legend, legendEntry{legendFailed, markThumb{errorMark}})
	}
	svg, err := svgOf(plots, legend, tp, width, vg.Length(len(plots))*barPanelHeight)
	return svg, true, err
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
func chartSeries(t Table, pal palette) []barSeries {
	var out []barSeries
	if t.Family != famHandshake {
		for j, name := range t.Columns {
			out = append(out, barSeries{col: j, name: name, color: pal.color(name, results.Group(t.Groups[j]))})
		}
		return out
	}
	for _, r := range t.Rows {
		for j, c := range r.Cells {
			if !slices.ContainsFunc(out, func(se barSeries) bool { return se.proxy == c.Proxy }) {
				out = append(out, barSeries{col: j, name: c.Proxy, proxy: c.Proxy, color: pal.color(c.Proxy, c.Group)})
			}
		}
	}
	return out
}

// percentiles of the HDR charts' X axis, from the median to the
// 99.99th, as -log10(1 - p/100): 50 is 0.3, 99.99 is 4.
var hdrTicks = []float64{50, 90, 99, 99.9, 99.99}

func hdrX(p float64) float64 { return -math.Log10(1 - p/100) }

// hdrLine is a column's line in an HDR chart: the merged histogram of
// its runs, in microseconds.
type hdrLine struct {
	name  string
	color color.Color
	runs  int
	h     *hdrhistogram.Histogram
}

// title is the line's title: its percentiles at the axis' ticks.
func (l hdrLine) title() string {
	var ps []string
	for _, p := range hdrTicks {
		ps = append(ps, fmt.Sprintf("p%s %s ms", strconv.FormatFloat(p, 'f', -1, 64), fixed(float64(l.h.ValueAtQuantile(p))/1e3, 3)))
	}
	return fmt.Sprintf("%s: %s; %s merged, %d exchanges", l.name, strings.Join(ps, ", "), pluralN(l.runs, "run"), l.h.TotalCount())
}

// tippedLine is a line (and its points' glyphs, when it has them) under
// a title.
type tippedLine struct {
	*plotter.Line
	points *plotter.Scatter // nil: none
	column string
	title  string
	tips   *tips
}

// Plot draws the line and its points.
func (l *tippedLine) Plot(c draw.Canvas, plt *plot.Plot) {
	l.tips.begin(c, tipLine, l.column, l.title)
	l.Line.Plot(c, plt)
	if l.points != nil {
		l.points.Plot(c, plt)
	}
	l.tips.end(c)
}

// Thumbnail draws the line with a glyph.
func (l *tippedLine) Thumbnail(c *draw.Canvas) {
	l.Line.Thumbnail(c)
	if l.points != nil {
		l.points.Thumbnail(c)
	}
}

// hdrChart is the percentile chart of a mix scenario: a line per column
// of its latency (ms, log axis) against the percentile (50 to 99.99, on
// the axis HdrHistogram's plots use).
func hdrChart(title string, lines []hdrLine) ([]byte, error) {
	p := newPlot()
	p.Title.Text = fitTitle(title, hdrWidth-2*legendInset)
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
	tp := &tips{}
	var legend []legendEntry
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
		tl := &tippedLine{Line: line, column: l.name, title: l.title(), tips: tp}
		p.Add(tl)
		legend = append(legend, legendEntry{l.name, tl})
	}
	p.Add(plotter.NewGrid())
	return svgOf([]*plot.Plot{p}, legend, tp, hdrWidth, hdrHeight)
}

// linearTicks marks a linear axis at no more than most round steps (1, 2
// or 5 times a power of ten), each labelled with the decimals its step
// needs: gonum's default marks a small panel's axis more densely than its
// labels' height allows.
type linearTicks struct{ most int }

func (l linearTicks) Ticks(min, max float64) []plot.Tick {
	if !(max > min) {
		return []plot.Tick{{Value: min, Label: strconv.FormatFloat(min, 'g', 3, 64)}}
	}
	raw := (max - min) / float64(l.most-1)
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
	for v := math.Ceil(min/step) * step; v <= max+step*1e-9; v += step {
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

// meaningColors are the colours of what is not a column: the roles whose
// CPU the series charts draw, a tunnel's directions, a trend's changes.
// Okabe and Ito's vermillion, a near black and a brown: hues the columns'
// palette (paletteColors, baselineColor) has none near, so that no colour
// on a page says both a proxy and a role.
var meaningColors = []color.Color{rgb(0xd55e00), rgb(0x222222), rgb(0x663300)}

// The roles' colors and names in the CPU panels.
var roleLines = []struct {
	role  string
	color color.Color
}{
	{"proxy", meaningColors[0]},
	{"client", meaningColors[1]},
	{"origin", meaningColors[2]},
}

// directionColors are the colours of a tunnel's directions, in the order
// of directions.
var directionColors = meaningColors[:2]

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
	s := summary{runs: vals}
	sorted := slices.Clone(vals)
	slices.Sort(sorted)
	s.low, s.high, s.med = sorted[0], sorted[len(sorted)-1], results.Median(sorted)
	return fmt.Sprintf("%s: %s, the median of %s, %s..%s", what, format(s.med), pluralN(len(vals), "second"), format(s.low), format(s.high))
}

func pluralN(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
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
		for _, rl := range roleLines {
			hasCPU = hasCPU || len(d.CPU[rl.role]) > 0
		}
	}
	tp := &tips{}
	var legend []legendEntry
	title = fitTitle(title, seriesWidth-2*legendInset)
	newLine := func(pts plotter.XYs, i int, c color.Color, what string, vals []float64, format func(float64) string) (*tippedLine, error) {
		line, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		dots, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, err
		}
		line.LineStyle, dots.GlyphStyle = repStyle(i, c)
		return &tippedLine{Line: line, points: dots, title: seriesTitle(what, vals, format), tips: tp}, nil
	}
	// The runs' entries: black lines of their dash and glyph.
	for i, d := range runs {
		ls, gs := repStyle(i, color.Black)
		legend = append(legend, legendEntry{"rep " + strconv.Itoa(d.Rep), &tippedLine{
			Line: &plotter.Line{LineStyle: ls}, points: &plotter.Scatter{GlyphStyle: gs}}})
	}
	if hasLoad {
		p := newPlot()
		p.Title.Text = title
		p.Y.Label.Text = string(unit)
		p.Y.Min = 0
		p.Y.Tick.Marker = linearTicks{most: 3}
		if !hasCPU {
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
			l, err := newLine(pts, i, color.Black, "rep "+strconv.Itoa(d.Rep), vals, unit.Format)
			if err != nil {
				return nil, err
			}
			p.Add(l)
		}
		plots = append(plots, p)
	}
	if hasCPU {
		c := newPlot()
		if !hasLoad {
			c.Title.Text = title
		}
		c.Y.Label.Text = "CPU busy"
		c.X.Label.Text = "s"
		c.Y.Min, c.Y.Max = 0, 1.05
		c.Y.Tick.Marker = plot.ConstantTicks{{Value: 0, Label: "0"}, {Value: 0.5, Label: "0.5"}, {Value: 1, Label: "1"}}
		for _, rl := range roleLines {
			legend = append(legend, legendEntry{rl.role, swatch{rl.color}})
		}
		busy := func(v float64) string { return fixed(100*v, 0) + "% busy" }
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
				l, err := newLine(pts, i, rl.color, "rep "+strconv.Itoa(d.Rep)+", the "+rl.role+"'s CPU", v, busy)
				if err != nil {
					return nil, err
				}
				c.Add(l)
			}
		}
		plots = append(plots, c)
	}
	h := seriesHeight
	if !hasLoad || !hasCPU {
		h = seriesHeight * 0.6
	}
	// A wrapped title's lines take their room from the plots no more.
	h += vg.Length(strings.Count(title, "\n")) * 0.5 * vg.Centimeter
	// Room on the right for the last second's label, centred on its tick.
	for _, p := range plots {
		p.X.Max = math.Max(p.X.Max, 1) * 1.06
	}
	return svgOf(plots, legend, tp, seriesWidth, h)
}

// errChart wraps a chart's error with what it was.
func errChart(what string, err error) error { return fmt.Errorf("chart of %s: %w", what, err) }

package chart

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math"
	"strings"

	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/font/sfnt"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
)

// chartTypeface is the charts' font: Go Regular, whose TrueType file the
// page embeds once (FontCSS), so that the browser draws the texts
// with the very metrics the charts were laid out by; a font left to the
// browser's choice is wider or narrower than the one measured.
const chartTypeface = "Go"

// chartFonts holds the charts' font for them alone, so that the
// process' fonts (gonum's font.DefaultCache, plot.DefaultFont) are left
// as they are: each plot takes it through Text (useChartFont).
var chartFonts = newChartFonts()

// newChartFonts is a cache of the Go font alone.
func newChartFonts() *font.Cache {
	f, err := opentype.Parse(goregular.TTF)
	if err != nil {
		panic(fmt.Sprintf("report: parse the Go font: %v", err))
	}
	return font.NewCache(font.Collection{{Font: font.Font{Typeface: chartTypeface}, Face: f}})
}

// Text is the charts' text handler, in their font.
var Text text.Handler = spacedText{text.Plain{Fonts: chartFonts}}

// useChartFont sets the texts of p, which plot.New gave gonum's font
// and handler, to the charts' font and handler, at plot.New's sizes.
func useChartFont(p *plot.Plot) {
	p.TextHandler = Text
	p.Title.TextStyle.Font, p.Title.TextStyle.Handler = Font(12), Text
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font, a.Label.TextStyle.Handler = Font(12), Text
		a.Tick.Label.Font, a.Tick.Label.Handler = Font(10), Text
	}
	p.Legend.TextStyle.Font, p.Legend.TextStyle.Handler = Font(12), Text
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

// FitTitle wraps a chart's title to lines no wider than w.
func FitTitle(title string, w vg.Length) string {
	return strings.Join(WrapLabel(title, Face(12), w), "\n") // plot.New's title size
}

// FontCSS is the page's @font-face of the charts' font, the font
// file in it.
func FontCSS() string {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "@font-face{font-family:%q;src:url(data:font/ttf;base64,%s) format(\"truetype\")}",
		chartFontName(), base64.StdEncoding.EncodeToString(goregular.TTF))
	return buf.String()
}

// chartFontName is the family of the charts' font, as vgsvg names it:
// the font file's.
func chartFontName() string {
	name, err := Face(10).Face.Name(nil, sfnt.NameIDFamily)
	if err != nil {
		return chartTypeface
	}
	return name
}

// Font is the charts' font at size points.
func Font(size vg.Length) font.Font { return font.Font{Typeface: chartTypeface, Size: size} }

// Face is the charts' font at size points, to measure texts with.
func Face(size vg.Length) font.Face { return chartFonts.Lookup(Font(size), size) }

// WrapLabel breaks a group's label into lines no wider than w where it
// can: after a space, a '-' or a '_'.
func WrapLabel(s string, face font.Face, w vg.Length) []string {
	var lines []string
	line := ""
	for _, piece := range LabelPieces(s) {
		if line != "" && face.Width(strings.TrimRight(line+piece, " ")) > w {
			lines, line = append(lines, strings.TrimRight(line, " ")), ""
		}
		line += piece
	}
	return append(lines, strings.TrimRight(line, " "))
}

// LabelPieces cuts s after each space, '-' and '_': the places a label
// may break.
func LabelPieces(s string) []string {
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

package chart

import (
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// BarSet is a column's bars in a panel: each at its median, with a
// whisker from its slowest run to its fastest, each bar and whisker under
// a title of its figures.
type BarSet struct {
	Column    string
	Median    []float64 // NaN: no figure
	Low, High []float64 // NaN: no runs
	// Failed is the part of a bar's height its failed exchanges would
	// add (a cell beyond report.ErrorWarn), drawn apart over it,
	// dashed; NaN for none.
	Failed []float64
	Titles []string
	Offset vg.Length // from the group's centre
	Color  color.Color
	Tips   *Tips
}

// Plot draws the bars.
func (b *BarSet) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	whisker := draw.LineStyle{Color: color.Black, Width: vg.Points(0.7)}
	cap := vg.Length(3)
	for i, m := range b.Median {
		if math.IsNaN(m) {
			continue
		}
		x := trX(float64(i)) + b.Offset
		b.Tips.Begin(c, TipBar, b.Column, b.Titles[i])
		lo, hi := x-BarWidth/2, x+BarWidth/2
		y0, y1 := trY(0), trY(m)
		c.FillPolygon(b.Color, []vg.Point{{X: lo, Y: y0}, {X: hi, Y: y0}, {X: hi, Y: y1}, {X: lo, Y: y1}})
		if f := b.failedAt(i); !math.IsNaN(f) {
			dashed := draw.LineStyle{Color: b.Color, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(2), vg.Points(1.5)}}
			y2 := trY(m + f)
			c.StrokeLines(dashed, []vg.Point{{X: lo, Y: y1}, {X: lo, Y: y2}, {X: hi, Y: y2}, {X: hi, Y: y1}})
		}
		if !math.IsNaN(b.Low[i]) {
			wl, wh := trY(b.Low[i]), trY(b.High[i])
			c.StrokeLine2(whisker, x, wl, x, wh)
			c.StrokeLine2(whisker, x-cap, wl, x+cap, wl)
			c.StrokeLine2(whisker, x-cap, wh, x+cap, wh)
		}
		b.Tips.End(c)
	}
}

// failedAt is the failed part of bar i, NaN where the set has none (a
// chart that draws no failures leaves failed nil).
func (b *BarSet) failedAt(i int) float64 {
	if i >= len(b.Failed) {
		return math.NaN()
	}
	return b.Failed[i]
}

// DataRange spans the bars and their whiskers, from zero or below it
// (compareChart's changes for the worse).
func (b *BarSet) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmax = float64(len(b.Median) - 1)
	for i, m := range b.Median {
		if !math.IsNaN(m) {
			ymin, ymax = min(ymin, m), max(ymax, m)
		}
		if !math.IsNaN(b.Low[i]) {
			ymin = min(ymin, b.Low[i])
		}
		if f := b.failedAt(i); !math.IsNaN(m) && !math.IsNaN(f) {
			ymax = max(ymax, m+f)
		}
		if !math.IsNaN(b.High[i]) {
			ymax = max(ymax, b.High[i])
		}
	}
	return
}

// SlotWidth is the width of a group of a panel: room for its bars, for
// the widest piece of a label that cannot break, and, short of passing
// most, for every label in LabelLinesMost lines.
func SlotWidth(labels []string, ncols int, face font.Face, most vg.Length) vg.Length {
	pad := 0.3 * vg.Centimeter
	w := vg.Length(ncols)*BarWidth + pad
	for _, l := range labels {
		for _, p := range LabelPieces(l) {
			w = max(w, face.Width(strings.TrimRight(p, " "))+pad)
		}
	}
	fits := func(w vg.Length) bool {
		for _, l := range labels {
			if len(WrapLabel(l, face, w-pad)) > LabelLinesMost {
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

package page

import (
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

	"bench/internal/text"
	"bench/report"
	"bench/report/chart"
	"github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// percentiles of the HDR charts' X axis, from the median to the
// 99.99th, as -log10(1 - p/100): 50 is 0.3, 99.99 is 4.
var hdrTicks = []float64{50, 90, 99, 99.9, 99.99}

func hdrX(p float64) float64 { return -math.Log10(1 - p/100) }

// hdrLine is a column's line in an HDR chart: the merged histogram of
// its runs, in microseconds, and the mark of its cell's failed
// exchanges (report.FailureText; empty where none failed), which its
// legend and title carry as the tables do.
type hdrLine struct {
	name   string
	color  color.Color
	runs   int
	h      *hdrhistogram.Histogram
	failed string
}

// title is the line's title: its percentiles at the axis' ticks.
func (l hdrLine) title() string {
	var ps []string
	for _, p := range hdrTicks {
		ps = append(ps, fmt.Sprintf("p%s %s ms", strconv.FormatFloat(p, 'f', -1, 64), text.Fixed(float64(l.h.ValueAtQuantile(p))/1e3, 3)))
	}
	t := fmt.Sprintf("%s: %s; %s merged, %d exchanges", l.name, strings.Join(ps, ", "), text.Plural(l.runs, "run"), l.h.TotalCount())
	if l.failed != "" {
		t += "; " + strings.TrimPrefix(l.failed, report.ErrorMark) + " of them failed"
	}
	return t
}

// hdrChart is the percentile chart of a mix scenario: a line per column
// of its latency (ms, log axis) against the percentile (50 to 99.99, on
// the axis HdrHistogram's plots use).
func hdrChart(title string, lines []hdrLine) ([]byte, error) {
	p := chart.NewPlot()
	p.Title.Text = chart.FitTitle(title, chart.HdrWidth-2*chart.LegendInset)
	p.X.Label.Text = "percentile"
	p.Y.Label.Text = "latency, ms"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = chart.LogTicks{}
	var ticks plot.ConstantTicks
	for _, t := range hdrTicks {
		ticks = append(ticks, plot.Tick{Value: hdrX(t), Label: strconv.FormatFloat(t, 'f', -1, 64)})
	}
	p.X.Tick.Marker = ticks
	first, last := hdrX(hdrTicks[0]), hdrX(hdrTicks[len(hdrTicks)-1])
	// Room beyond the last percentile for its label, which is centred on
	// its tick.
	p.X.Min, p.X.Max = first, last+0.08*(last-first)
	tp := &chart.Tips{}
	var legend []chart.LegendEntry
	const steps = 120
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, l := range lines {
		pts := make(plotter.XYs, 0, steps+1)
		for i := 0; i <= steps; i++ {
			x := first + (last-first)*float64(i)/steps
			q := 100 * (1 - math.Pow(10, -x))
			y := max(float64(l.h.ValueAtQuantile(q))/1e3, 0.001)
			lo, hi = min(lo, y), max(hi, y)
			pts = append(pts, plotter.XY{X: x, Y: y})
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		line.Color = l.color
		line.Width = vg.Points(1.5)
		tl := &chart.TippedLine{Line: line, Column: l.name, Title: l.title(), Tips: tp}
		p.Add(tl)
		name := l.name
		if l.failed != "" {
			name += " " + l.failed
		}
		legend = append(legend, chart.LegendEntry{Name: name, Thumb: tl})
	}
	if !(hi > lo) {
		// one latency throughout (or no line): gonum would widen the
		// axis by one either way, below zero on a log axis
		p.Y.Min, p.Y.Max = 0.5*max(lo, 0.001), 2*max(hi, 0.001)
	}
	p.Add(plotter.NewGrid())
	return chart.SVGOf([]*plot.Plot{p}, legend, tp, chart.HdrWidth, chart.HdrHeight)
}

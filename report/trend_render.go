package report

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"bench/report/changepoint"
	"bench/report/results"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The trends' text and page: the change points found, newest first and
// the largest first within a session, grouped by the session that began
// them; on the page, a chart of each series with a change point.

// trendHeader is the header of a session's table of changes.
var trendHeader = []string{"scenario", "proxy", "metric", "step", "interval", "before → after", "noise", "in force", "changed"}

// WriteTrends writes the trends' changes as format: markdown, or the
// page (FormatHTML).
func WriteTrends(w io.Writer, tr *Trends, format string) error {
	switch format {
	case FormatHTML:
		return writeTrendsHTML(w, tr)
	case FormatMarkdown:
	default:
		return results.BadInput(fmt.Errorf("unknown format %q (want %s or %s)", format, FormatMarkdown, FormatHTML))
	}
	var b bytes.Buffer
	writeHeading(&b, true, 1, tr.title())
	b.WriteString(mdOnly(true, tr.Summary()) + "\n\n")
	for _, g := range tr.groups() {
		writeHeading(&b, true, 2, tr.groupTitle(g))
		if err := markdownGrid(&b, slices.Clone(trendHeader), tr.rows(g)); err != nil {
			return fmt.Errorf("render the changes of %s: %w", tr.Sessions[g[0].After].ID, err)
		}
		b.WriteString("\n")
	}
	if lines := tr.outlierLines(); len(lines) > 0 {
		writeHeading(&b, true, 2, outliersTitle)
		for _, l := range lines {
			b.WriteString("- " + mdOnly(true, l) + "\n")
		}
		b.WriteString("\n")
	}
	if len(tr.Series) > 0 {
		b.WriteString(mdOnly(true, tr.legend()) + "\n")
	}
	_, err := w.Write(b.Bytes())
	return err
}

// title is the report's title.
func (tr *Trends) title() string { return "Trends of " + plural(len(tr.Sessions), "session") }

// Summary is the report's first line: what was searched, how, and what
// was found.
func (tr *Trends) Summary() string {
	if len(tr.Sessions) == 0 {
		return "No sessions in the history (with the filters given)."
	}
	machines := map[string]bool{}
	for _, s := range tr.Sessions {
		machines[s.Machine] = true
	}
	changes := tr.Changes()
	worse, inForce := 0, 0
	for _, c := range changes {
		if c.Worse {
			worse++
			if c.InForce {
				inForce++
			}
		}
	}
	return fmt.Sprintf("%s of %s, %s to %s; %s (a cell of a machine by its throughput or its p99) searched: %s, %d for the worse, %d of those still in force.",
		plural(len(tr.Sessions), "session"), plural(len(machines), "machine"), tr.Sessions[0].Date(), tr.Sessions[len(tr.Sessions)-1].Date(),
		strconv.Itoa(len(tr.Series))+" series", plural(len(changes), "change point"), worse, inForce)
}

// outliersTitle heads the list of outliers.
const outliersTitle = "Outliers: sessions that stand out alone, not changes"

// outlierLines are the outliers of every series, a line each, newest
// first: "Xeon, 2 CPUs, http-ka-1k, nginx, throughput: session
// 2026-03-22-nightly, -20.3% from its level".
func (tr *Trends) outlierLines() []string {
	type line struct {
		session int
		text    string
	}
	var all []line
	for i := range tr.Series {
		s := &tr.Series[i]
		for _, o := range s.Outliers {
			all = append(all, line{o.Session, fmt.Sprintf("%s, %s, %s, %s: session %s, %s from its level", s.Machine, s.Scenario, s.Proxy, s.Metric,
				tr.Sessions[o.Session].ID, signedPct(o.Off))})
		}
	}
	slices.SortStableFunc(all, func(a, b line) int { return b.session - a.session })
	out := make([]string, len(all))
	for i, l := range all {
		out[i] = l.text
	}
	return out
}

// legend says what the tables' columns mean and how the points were
// found.
func (tr *Trends) legend() string {
	return fmt.Sprintf("Change points by E-Divisive means on the sessions' medians (two sessions a side at the least; a split kept at p ≤ %g over %d permutations of fixed draws), "+
		"each kept where its whole %g%% interval (a two-stage bootstrap of the sessions and their runs on either side) lies beyond %s%% (--min-step). "+
		"Noise: the median over the sessions of half their runs' range, the ± of bench compare; a long history shows steps inside it. "+
		"An outlier stands out alone from its level by more than %d robust deviations of its sessions. "+
		"Step: the median of the sessions after over that of the sessions before, to the next change point each way. "+
		"In force: the newest sessions are nearer the level after than the level before. Changed: bench's build or the column's version between the two sessions.",
		tr.Options.PValue, tr.Options.Permutations, tr.Options.Confidence*100, fixed(tr.Options.MinStep, 1), changepoint.OutlierSpread)
}

// groups are the changes grouped by the session after them, newest
// first.
func (tr *Trends) groups() [][]TrendChange {
	var out [][]TrendChange
	for _, c := range tr.Changes() {
		if n := len(out); n > 0 && out[n-1][0].After == c.After {
			out[n-1] = append(out[n-1], c)
			continue
		}
		out = append(out, []TrendChange{c})
	}
	return out
}

// groupTitle names a group's session: "2026-03-22 on Xeon, 2 CPUs:
// session 2026-03-22-nightly".
func (tr *Trends) groupTitle(g []TrendChange) string {
	s := &tr.Sessions[g[0].After]
	return fmt.Sprintf("%s on %s: session %s", s.Date(), s.Machine, s.ID)
}

// rows are a group's table rows.
func (tr *Trends) rows(g []TrendChange) [][]string {
	out := make([][]string, len(g))
	for i, c := range g {
		verdict := "better"
		if c.Worse {
			verdict = "worse"
		}
		if c.Provisional {
			verdict += " (provisional: the newest sessions, beyond all before them)"
		}
		inForce := "no"
		if c.InForce {
			inForce = "yes"
		}
		s := c.Series
		out[i] = []string{s.Scenario, s.Proxy, s.Metric, signedPct(c.Step) + " " + verdict, pctRange(c.Lo, c.Hi),
			s.format(c.From) + " → " + s.format(c.To) + " (from " + tr.Sessions[c.Before].ID + ")",
			"±" + fixed(c.Noise, 1) + "%", inForce, strings.Join(c.Versions, "; ")}
	}
	return out
}

// format prints a figure of the series in its unit.
func (s *TrendSeries) format(v float64) string {
	if s.Metric == MetricThroughput {
		return results.Unit(s.Unit).Format(v)
	}
	return strconv.FormatFloat(v, 'g', 3, 64) + " " + s.Unit
}

// writeTrendsHTML writes the page: the text's tables, and a chart of
// each series with a change point.
func writeTrendsHTML(w io.Writer, tr *Trends) error {
	var b bytes.Buffer
	title := "bench: " + tr.title()
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>%s</title>\n<style>\n%s\n%s\n</style>\n</head>\n<body>\n",
		esc(title), pageStyle, chartFontCSS())
	fmt.Fprintf(&b, "<h1>%s</h1>\n<p class=\"summary\"><strong>%s</strong></p>\n", esc(tr.title()), esc(tr.Summary()))
	for _, g := range tr.groups() {
		fmt.Fprintf(&b, "<h2>%s</h2>\n<table>\n<tr>", esc(tr.groupTitle(g)))
		for _, h := range trendHeader {
			fmt.Fprintf(&b, "<th>%s</th>", esc(h))
		}
		b.WriteString("</tr>\n")
		for _, r := range tr.rows(g) {
			fmt.Fprintf(&b, "<tr><th>%s</th>", esc(r[0]))
			for _, c := range r[1:] {
				fmt.Fprintf(&b, "<td>%s</td>", esc(c))
			}
			b.WriteString("</tr>\n")
		}
		b.WriteString("</table>\n")
	}
	if lines := tr.outlierLines(); len(lines) > 0 {
		fmt.Fprintf(&b, "<h2>%s</h2>\n<ul>\n", esc(outliersTitle))
		for _, l := range lines {
			fmt.Fprintf(&b, "<li>%s</li>\n", esc(l))
		}
		b.WriteString("</ul>\n")
	}
	if len(tr.Series) > 0 {
		fmt.Fprintf(&b, "<p class=\"caption\">%s</p>\n", esc(tr.legend()))
	}
	pal := tr.palette()
	var figs bytes.Buffer
	drawn := 0
	for i := range tr.Series {
		s := &tr.Series[i]
		if len(s.Points) == 0 {
			continue
		}
		svg, err := trendChart(tr, s, pal)
		if err != nil {
			return errChart(s.name(), err)
		}
		figure(&figs, classSeries, svg, s.Machine+", "+s.name()+": each session's runs (points) and median (line), the change points and the new versions marked.")
		drawn++
	}
	if drawn > 0 {
		fmt.Fprintf(&b, "<h2>The series with a change point</h2>\n<div class=\"series\">\n")
		b.Write(figs.Bytes())
		b.WriteString("</div>\n")
	}
	b.WriteString("</body>\n</html>\n")
	_, err := w.Write(b.Bytes())
	return err
}

// name is the series' scenario, column and metric.
func (s *TrendSeries) name() string { return s.Scenario + ", " + s.Proxy + ", " + s.Metric }

// palette is the columns' colours on the page, as the report's page
// gives them.
func (tr *Trends) palette() palette {
	t := Table{}
	for _, s := range tr.Series {
		if !slices.Contains(t.Columns, s.Proxy) {
			t.Columns = append(t.Columns, s.Proxy)
			t.Groups = append(t.Groups, string(s.Group))
		}
	}
	return newPalette([]Table{t})
}

// The marks of a trend chart, of the colours of what is not a column:
// vermillion for a change for the worse, near black for one for the
// better, brown for a new version.
var (
	worseColor   = meaningColors[0]
	betterColor  = meaningColors[1]
	versionColor = meaningColors[2]
)

// trendChart is the chart of a series over the history: each session's
// runs as points and its median as the line, in the column's colour,
// against the date; a dashed line across the plot at each change point
// (red for the worse, blue for the better) and a dotted grey one at
// each session that ran a new bench or a new version of the column.
func trendChart(tr *Trends, s *TrendSeries, pal palette) ([]byte, error) {
	origin := tr.Sessions[0].Started
	day := func(si int) float64 { return tr.Sessions[si].Started.Sub(origin).Hours() / 24 }
	col := pal.color(s.Proxy, s.Group)
	tp := &tips{}
	p := newPlot()
	p.Title.Text = fitTitle(s.name(), seriesWidth-2*legendInset)
	p.Y.Label.Text = s.Unit
	p.Y.Tick.Marker = linearTicks{most: 4}
	p.X.Tick.Marker = dateTicks{origin: origin, most: 3}
	var runs, medians plotter.XYs
	for i, si := range s.Sessions {
		for _, v := range s.Runs[i] {
			runs = append(runs, plotter.XY{X: day(si), Y: v})
		}
		medians = append(medians, plotter.XY{X: day(si), Y: s.Medians[i]})
	}
	dots, err := plotter.NewScatter(runs)
	if err != nil {
		return nil, err
	}
	dots.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(1), Shape: draw.CircleGlyph{}}
	line, err := plotter.NewLine(medians)
	if err != nil {
		return nil, err
	}
	line.Color, line.Width = col, vg.Points(1)
	first, last := tr.Sessions[s.Sessions[0]].Date(), tr.Sessions[s.Sessions[len(s.Sessions)-1]].Date()
	runsMark := &tippedScatter{Scatter: dots, title: fmt.Sprintf("%s: %s of %s, %s to %s", s.name(), plural(len(runs), "run"), plural(len(s.Sessions), "session"), first, last), tips: tp}
	medianLine := &tippedLine{Line: line, column: s.Proxy, title: fmt.Sprintf("%s: the sessions' medians, %s on %s to %s on %s", s.name(), s.format(s.Medians[0]), first, s.format(s.Medians[len(s.Medians)-1]), last), tips: tp}
	p.Add(runsMark, medianLine)
	legend := []legendEntry{{"runs", &plotter.Scatter{GlyphStyle: draw.GlyphStyle{Color: col, Radius: vg.Points(2), Shape: draw.CircleGlyph{}}}},
		{"median", &plotter.Line{LineStyle: line.LineStyle}}}
	marks := map[string]bool{}
	for _, cp := range s.Points {
		c, what := betterColor, "better"
		if cp.Worse {
			c, what = worseColor, "worse"
		}
		p.Add(&verticalMark{x: (day(cp.Before) + day(cp.After)) / 2, style: markStyle(c, vg.Points(4), vg.Points(2)),
			title: TrendChange{s, &cp}.Describe(tr), tips: tp})
		if !marks[what] {
			marks[what] = true
			legend = append(legend, legendEntry{what, &plotter.Line{LineStyle: markStyle(c, vg.Points(4), vg.Points(2))}})
		}
	}
	for i := 1; i < len(s.Sessions); i++ {
		if v := tr.versionsChanged(s.Proxy, s.Sessions[i-1], s.Sessions[i]); len(v) > 0 {
			p.Add(&verticalMark{x: day(s.Sessions[i]), style: markStyle(versionColor, vg.Points(1), vg.Points(2)),
				title: tr.Sessions[s.Sessions[i]].Date() + ": " + strings.Join(v, "; "), tips: tp})
			if !marks["version"] {
				marks["version"] = true
				legend = append(legend, legendEntry{"new version", &plotter.Line{LineStyle: markStyle(versionColor, vg.Points(1), vg.Points(2))}})
			}
		}
	}
	p.Add(plotter.NewGrid())
	// Room on the right for the last date's label, centred on its tick.
	p.X.Max = p.X.Min + (p.X.Max-p.X.Min)*1.08
	h := seriesHeight*0.7 + vg.Length(strings.Count(p.Title.Text, "\n"))*0.5*vg.Centimeter
	return svgOf([]*plot.Plot{p}, legend, tp, seriesWidth, h)
}

// tippedScatter is points under a title.
type tippedScatter struct {
	*plotter.Scatter
	title string
	tips  *tips
}

// Plot draws the points.
func (s *tippedScatter) Plot(c draw.Canvas, plt *plot.Plot) {
	s.tips.begin(c, tipLine, "", s.title)
	s.Scatter.Plot(c, plt)
	s.tips.end(c)
}

// markStyle is a mark's line: its colour, its dash and gap.
func markStyle(c color.Color, dash, gap vg.Length) draw.LineStyle {
	return draw.LineStyle{Color: c, Width: vg.Points(1), Dashes: []vg.Length{dash, gap}}
}

// verticalMark is a line across the plot at x, under a title: a change
// point or a new version. It has no data range of its own: it marks the
// series' plot without widening it.
type verticalMark struct {
	x     float64
	style draw.LineStyle
	title string
	tips  *tips
}

// Plot draws the line from the bottom of the plot to its top.
func (m *verticalMark) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, _ := plt.Transforms(&c)
	x := trX(m.x)
	m.tips.begin(c, tipLine, "", m.title)
	c.StrokeLine2(m.style, x, c.Min.Y, x, c.Max.Y)
	m.tips.end(c)
}

// dateTicks marks a time axis of days since origin at no more than most
// round steps of days, each labelled with its date: "Mar 2".
type dateTicks struct {
	origin time.Time
	most   int
}

func (d dateTicks) Ticks(min, max float64) []plot.Tick {
	ticks := linearTicks{most: d.most}.Ticks(min, max)
	for i := range ticks {
		at := d.origin.Add(time.Duration(math.Round(ticks[i].Value*24)) * time.Hour)
		ticks[i].Label = at.UTC().Format("Jan 2")
		if i == 0 || at.Year() != d.origin.Add(time.Duration(ticks[i-1].Value*24)*time.Hour).Year() {
			ticks[i].Label = at.UTC().Format("Jan 2 2006")
		}
	}
	return ticks
}

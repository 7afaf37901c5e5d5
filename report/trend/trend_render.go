package trend

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

	"bench/inputerr"
	"bench/internal/text"
	"bench/report"
	"bench/report/changepoint"
	"bench/report/chart"
	"bench/report/htmldoc"
	"bench/results"
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

// Write writes the trends' changes as format: markdown, or the
// page (FormatHTML).
func Write(w io.Writer, tr *Trends, format string) error {
	switch format {
	case report.FormatHTML:
		return writeTrendsHTML(w, tr)
	case report.FormatMarkdown:
	default:
		return inputerr.Bad(fmt.Errorf("unknown format %q (want %s or %s)", format, report.FormatMarkdown, report.FormatHTML))
	}
	var b bytes.Buffer
	var f text.Markdown
	f.Heading(&b, 1, tr.title())
	b.WriteString(f.Text(tr.Summary()) + "\n\n")
	for _, g := range tr.nights() {
		f.Heading(&b, 2, tr.nightTitle(g[0].After))
		for _, ev := range g {
			f.Heading(&b, 3, tr.eventTitle(ev))
			if err := f.Grid(&b, trendHeader, tr.rows(ev)); err != nil {
				return fmt.Errorf("render the changes of %s: %w", tr.Sessions[ev.After].ID, err)
			}
			b.WriteString("\n")
		}
	}
	if nights := tr.OutlierNights(); len(nights) > 0 {
		f.Heading(&b, 2, outliersTitle)
		for _, n := range nights {
			b.WriteString(f.Text(tr.outlierNightTitle(n)) + ":\n\n")
			for _, l := range outlierLines(n) {
				b.WriteString("- " + f.Text(l) + "\n")
			}
			b.WriteString("\n")
		}
	}
	if len(tr.Series) > 0 {
		b.WriteString(f.Text(tr.legend()) + "\n")
	}
	_, err := w.Write(b.Bytes())
	return err
}

// title is the report's title.
func (tr *Trends) title() string { return "Trends of " + text.Plural(len(tr.Sessions), "session") }

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
	return fmt.Sprintf("%s of %s, %s to %s; %s (a cell of a machine by its throughput or its p99) searched: %s in %s (a column's changes from one night), %d for the worse, %d of those still in force; %s.",
		text.Plural(len(tr.Sessions), "session"), text.Plural(len(machines), "machine"), tr.Sessions[0].Date(), tr.Sessions[len(tr.Sessions)-1].Date(),
		strconv.Itoa(len(tr.Series))+" series", text.Plural(len(changes), "change point"), text.Plural(len(tr.Events()), "event"), worse, inForce,
		text.Plural(len(tr.OutlierNights()), "night")+" with outliers")
}

// outliersTitle heads the list of outliers.
const outliersTitle = "Single-night outliers: sessions that stand out alone, not changes"

// outlierNightTitle is a night of outliers in a line: "2026-07-01 on
// EPYC, 2 CPUs, session 2026-07-01-nightly: 52 series, -15.0% from
// their levels (the median; -22.9..-12.2%)".
func (tr *Trends) outlierNightTitle(n OutlierNight) string {
	s := &tr.Sessions[n.Session]
	head := fmt.Sprintf("%s on %s, session %s: %d series", s.Date(), s.Machine, s.ID, len(n.Series))
	if len(n.Series) == 1 {
		return head + ", " + signedPct(n.Off()) + " from its level"
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, o := range n.Series {
		lo, hi = min(lo, o.Off), max(hi, o.Off)
	}
	return head + ", " + signedPct(n.Off()) + " from their levels (the median; " + pctRange(lo, hi) + ")"
}

// outlierLines are a night's outliers, a line each: "http-ka-1k, nginx,
// throughput: -20.3%".
func outlierLines(n OutlierNight) []string {
	out := make([]string, len(n.Series))
	for i, o := range n.Series {
		out[i] = o.Series.name() + ": " + signedPct(o.Off)
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
		tr.Options.PValue, tr.Options.Permutations, tr.Options.Confidence*100, text.Fixed(tr.Options.MinStep, 1), changepoint.OutlierSpread)
}

// nights are the events grouped by the session where their new levels
// begin, newest first.
func (tr *Trends) nights() [][]Event {
	var out [][]Event
	for _, ev := range tr.Events() {
		if n := len(out); n > 0 && out[n-1][0].After == ev.After {
			out[n-1] = append(out[n-1], ev)
			continue
		}
		out = append(out, []Event{ev})
	}
	return out
}

// nightTitle names the session where new levels begin: "2026-03-22 on
// Xeon, 2 CPUs: session 2026-03-22-nightly".
func (tr *Trends) nightTitle(si int) string {
	s := &tr.Sessions[si]
	return fmt.Sprintf("%s on %s: session %s", s.Date(), s.Machine, s.ID)
}

// eventTitle is an event in a line: "nginx, 26 of its 29 series, from
// 2026-06-19: -10.0% (the median; -10.3..-7.4%), 26 worse".
func (tr *Trends) eventTitle(ev Event) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range ev.Changes {
		lo, hi = min(lo, c.Step), max(hi, c.Step)
	}
	series := fmt.Sprintf("%d of its %d series", len(ev.Changes), ev.Of)
	step := signedPct(ev.Step())
	if len(ev.Changes) > 1 {
		step += " (the median; " + pctRange(lo, hi) + ")"
	}
	return fmt.Sprintf("%s, %s, from %s: %s, %d worse", ev.Proxy, series, tr.Sessions[ev.After].Date(), step, ev.Worse())
}

// rows are an event's table rows; a change whose new level begins on
// another session than the event's says where.
func (tr *Trends) rows(ev Event) [][]string {
	out := make([][]string, len(ev.Changes))
	for i, c := range ev.Changes {
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
		levels := s.format(c.From) + " → " + s.format(c.To)
		if c.After != ev.After {
			levels += " (from " + tr.Sessions[c.After].Date() + ")"
		}
		out[i] = []string{s.Scenario, s.Proxy, s.Metric, signedPct(c.Step) + " " + verdict, pctRange(c.Lo, c.Hi),
			levels, "±" + text.Fixed(c.Noise, 1) + "%", inForce, strings.Join(c.Versions, "; ")}
	}
	return out
}

// format prints a figure of the series in its unit.
func (s *Series) format(v float64) string {
	if s.Metric == report.MetricThroughput {
		return results.Unit(s.Unit).Format(v)
	}
	return strconv.FormatFloat(v, 'g', 3, 64) + " " + s.Unit
}

// writeTrendsHTML writes the page: the text's tables, and a chart of
// each series with a change point.
func writeTrendsHTML(w io.Writer, tr *Trends) error {
	var b bytes.Buffer
	title := "bench: " + tr.title()
	htmldoc.Head(&b, title, htmldoc.Style, chart.FontCSS())
	fmt.Fprintf(&b, "<h1>%s</h1>\n<p class=\"summary\"><strong>%s</strong></p>\n", htmldoc.Esc(tr.title()), htmldoc.Esc(tr.Summary()))
	for _, g := range tr.nights() {
		fmt.Fprintf(&b, "<h2>%s</h2>\n", htmldoc.Esc(tr.nightTitle(g[0].After)))
		for _, ev := range g {
			fmt.Fprintf(&b, "<h3>%s</h3>\n<table>\n<tr>", htmldoc.Esc(tr.eventTitle(ev)))
			for _, h := range trendHeader {
				fmt.Fprintf(&b, "<th>%s</th>", htmldoc.Esc(h))
			}
			b.WriteString("</tr>\n")
			for _, r := range tr.rows(ev) {
				fmt.Fprintf(&b, "<tr><th>%s</th>", htmldoc.Esc(r[0]))
				for _, c := range r[1:] {
					fmt.Fprintf(&b, "<td>%s</td>", htmldoc.Esc(c))
				}
				b.WriteString("</tr>\n")
			}
			b.WriteString("</table>\n")
		}
	}
	if nights := tr.OutlierNights(); len(nights) > 0 {
		fmt.Fprintf(&b, "<h2>%s</h2>\n", htmldoc.Esc(outliersTitle))
		for _, n := range nights {
			fmt.Fprintf(&b, "<p>%s:</p>\n<ul>\n", htmldoc.Esc(tr.outlierNightTitle(n)))
			for _, l := range outlierLines(n) {
				fmt.Fprintf(&b, "<li>%s</li>\n", htmldoc.Esc(l))
			}
			b.WriteString("</ul>\n")
		}
	}
	if len(tr.Series) > 0 {
		fmt.Fprintf(&b, "<p class=\"caption\">%s</p>\n", htmldoc.Esc(tr.legend()))
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
			return chart.ErrChart(s.name(), err)
		}
		htmldoc.Figure(&figs, chart.ClassSeries, svg, s.Machine+", "+s.name()+": each session's runs (points) and median (thin line), the levels before and after each change point (thick black lines), the change points and the new versions marked.")
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
func (s *Series) name() string { return s.Scenario + ", " + s.Proxy + ", " + s.Metric }

// palette is the columns' colours on the page, as the report's page
// gives them.
func (tr *Trends) palette() chart.Palette {
	t := report.Table{}
	for _, s := range tr.Series {
		if !slices.Contains(t.Columns, s.Proxy) {
			t.Columns = append(t.Columns, s.Proxy)
			t.Groups = append(t.Groups, string(s.Group))
		}
	}
	return report.NewPalette([]report.Table{t})
}

// The marks of a trend chart, of the colours of what is not a column:
// vermillion for a change for the worse, near black for one for the
// better, brown for a new version.
var (
	worseColor   = chart.MeaningColors[0]
	betterColor  = chart.MeaningColors[1]
	versionColor = chart.MeaningColors[2]
)

// trendChart is the chart of a series over the history: each session's
// runs as points and its median as the line, in the column's colour,
// against the date; a dashed line across the plot at each change point
// (red for the worse, blue for the better) and a dotted grey one at
// each session that ran a new bench or a new version of the column.
func trendChart(tr *Trends, s *Series, pal chart.Palette) ([]byte, error) {
	origin := tr.Sessions[0].Started
	day := func(si int) float64 { return tr.Sessions[si].Started.Sub(origin).Hours() / 24 }
	col := pal.Color(s.Proxy, s.Group)
	tp := &chart.Tips{}
	p := chart.NewPlot()
	p.Title.Text = chart.FitTitle(s.name(), chart.SeriesWidth-2*chart.LegendInset)
	p.Y.Label.Text = s.Unit
	p.Y.Tick.Marker = chart.LinearTicks{Most: 4}
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
	runsMark := &tippedScatter{Scatter: dots, title: fmt.Sprintf("%s: %s of %s, %s to %s", s.name(), text.Plural(len(runs), "run"), text.Plural(len(s.Sessions), "session"), first, last), tips: tp}
	medianLine := &chart.TippedLine{Line: line, Column: s.Proxy, Title: fmt.Sprintf("%s: the sessions' medians, %s on %s to %s on %s", s.name(), s.format(s.Medians[0]), first, s.format(s.Medians[len(s.Medians)-1]), last), Tips: tp}
	p.Add(runsMark, medianLine)
	legend := []chart.LegendEntry{{Name: "runs", Thumb: &plotter.Scatter{GlyphStyle: draw.GlyphStyle{Color: col, Radius: vg.Points(2), Shape: draw.CircleGlyph{}}}},
		{Name: "median", Thumb: &plotter.Line{LineStyle: line.LineStyle}}}
	for _, lv := range s.levels() {
		xy := plotter.XYs{{X: day(s.Sessions[lv.start]), Y: lv.value}, {X: day(s.Sessions[lv.end-1]), Y: lv.value}}
		seg, err := plotter.NewLine(xy)
		if err != nil {
			return nil, err
		}
		seg.LineStyle = levelStyle
		p.Add(&chart.TippedLine{Line: seg, Title: fmt.Sprintf("%s: level %s, %s to %s (%s)", s.name(), s.format(lv.value),
			tr.Sessions[s.Sessions[lv.start]].Date(), tr.Sessions[s.Sessions[lv.end-1]].Date(), text.Plural(lv.end-lv.start, "session")), Tips: tp})
	}
	legend = append(legend, chart.LegendEntry{Name: "level", Thumb: &plotter.Line{LineStyle: levelStyle}})
	marks := map[string]bool{}
	for _, cp := range s.Points {
		c, what := betterColor, "better"
		if cp.Worse {
			c, what = worseColor, "worse"
		}
		p.Add(&verticalMark{x: (day(cp.Before) + day(cp.After)) / 2, style: markStyle(c, vg.Points(4), vg.Points(2)),
			title: Change{s, &cp}.Describe(tr), tips: tp})
		if !marks[what] {
			marks[what] = true
			legend = append(legend, chart.LegendEntry{Name: what, Thumb: &plotter.Line{LineStyle: markStyle(c, vg.Points(4), vg.Points(2))}})
		}
	}
	for i := 1; i < len(s.Sessions); i++ {
		if v := tr.versionsChanged(s.Proxy, s.Sessions[i-1], s.Sessions[i]); len(v) > 0 {
			p.Add(&verticalMark{x: day(s.Sessions[i]), style: markStyle(versionColor, vg.Points(1), vg.Points(2)),
				title: tr.Sessions[s.Sessions[i]].Date() + ": " + strings.Join(v, "; "), tips: tp})
			if !marks["version"] {
				marks["version"] = true
				legend = append(legend, chart.LegendEntry{Name: "new version", Thumb: &plotter.Line{LineStyle: markStyle(versionColor, vg.Points(1), vg.Points(2))}})
			}
		}
	}
	p.Add(plotter.NewGrid())
	// Room on the right for the last date's label, centred on its tick.
	p.X.Max = p.X.Min + (p.X.Max-p.X.Min)*1.08
	h := chart.SeriesHeight*0.7 + vg.Length(strings.Count(p.Title.Text, "\n"))*0.5*vg.Centimeter
	return chart.SVGOf([]*plot.Plot{p}, legend, tp, chart.SeriesWidth, h)
}

// levelStyle is the line of a series' level between its change points.
var levelStyle = draw.LineStyle{Color: color.Black, Width: vg.Points(2)}

// trendLevel is a level of a series: its sessions from start to end
// (indexes in its Sessions, end excluded) and the median of their
// medians, its outliers left out.
type trendLevel struct {
	start, end int
	value      float64
}

// levels are the series' levels, from one change point to the next: the
// level before and after each step, as its From and To give them.
func (s *Series) levels() []trendLevel {
	var out []trendLevel
	ends := make([]int, 0, len(s.Points)+1)
	for _, p := range s.Points {
		ends = append(ends, p.At)
	}
	start := 0
	for _, end := range append(ends, len(s.Medians)) {
		if end > start {
			var kept []float64 // the outliers left out, as the steps leave them
			for i := start; i < end; i++ {
				if !slices.ContainsFunc(s.Outliers, func(o Outlier) bool { return o.Session == s.Sessions[i] }) {
					kept = append(kept, s.Medians[i])
				}
			}
			out = append(out, trendLevel{start, end, results.Median(kept)})
		}
		start = end
	}
	return out
}

// tippedScatter is points under a title.
type tippedScatter struct {
	*plotter.Scatter
	title string
	tips  *chart.Tips
}

// Plot draws the points.
func (s *tippedScatter) Plot(c draw.Canvas, plt *plot.Plot) {
	s.tips.Begin(c, chart.TipLine, "", s.title)
	s.Scatter.Plot(c, plt)
	s.tips.End(c)
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
	tips  *chart.Tips
}

// Plot draws the line from the bottom of the plot to its top.
func (m *verticalMark) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, _ := plt.Transforms(&c)
	x := trX(m.x)
	m.tips.Begin(c, chart.TipLine, "", m.title)
	c.StrokeLine2(m.style, x, c.Min.Y, x, c.Max.Y)
	m.tips.End(c)
}

// dateTicks marks a time axis of days since origin at no more than most
// round steps of days, each labelled with its date: "Mar 2".
type dateTicks struct {
	origin time.Time
	most   int
}

func (d dateTicks) Ticks(min, max float64) []plot.Tick {
	ticks := chart.LinearTicks{Most: d.most}.Ticks(min, max)
	for i := range ticks {
		at := d.origin.Add(time.Duration(math.Round(ticks[i].Value*24)) * time.Hour)
		ticks[i].Label = at.UTC().Format("Jan 2")
		if i == 0 || at.Year() != d.origin.Add(time.Duration(ticks[i-1].Value*24)*time.Hour).Year() {
			ticks[i].Label = at.UTC().Format("Jan 2 2006")
		}
	}
	return ticks
}

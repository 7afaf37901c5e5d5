package report

import (
	"bench/report/results"
	"bytes"
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// FormatHTML is Options.Format's page: one self-contained file.
const FormatHTML = "html"

// The page: one file, its style in it and its charts drawn in it as SVG,
// so that it opens from a disk or an artifact with nothing fetched. It
// holds the Setup tables, every table of the text report with its marks
// and the latency tables, the detail (detail.go: headlines, spreads, the
// ! mark, grouped notes, the session's line, provenance), and:
//   - after each throughput table, its bar chart (barChart);
//   - after the mix family's tables on a machine, an HDR percentile chart
//     of each scenario whose runs kept their histograms (hdrChart);
//   - after each family's tables on a machine, the time series of each
//     cell whose runs kept theirs (seriesChart); after a Sustainable rate
//     table instead, a chart of each row's steps, their latency against
//     the rate they offered (sweepChart).
//
// What the session files lack (histograms, series: sessions before bench
// kept them) the page says instead of drawing.

// The classes of the page's charts, one figure each.
const (
	classBar    = "chart bar"
	classHDR    = "chart hdr"
	classSeries = "chart series"
)

// pageStyle is the page's style: at any width the page is no wider than
// its window, its text no wider than a reader's line (80em) and its
// tables as wide as the window lets them be; a table wider than its
// window scrolls in its own box, its first column (the rows' labels)
// staying in place, its cells breaking between figure, marks and
// spread before it does; on a phone the labels break too, so that
// a column of figures shows beside them; a chart is scaled down to the
// width of its figure.
const pageStyle = `body{font-family:sans-serif;margin:1.5em;color:#222;overflow-wrap:anywhere}
p,ul,h1,h2,h3,h4,figure,details>summary{max-width:80em}
table{border-collapse:collapse;margin:0.5em 0 1em;display:block;max-width:100%;overflow-x:auto;overflow-wrap:normal}
th,td{border:1px solid #bbb;padding:0.2em 0.6em;text-align:left}
th,td>small,td>span{white-space:nowrap}
th{background:#eee}
tr>:first-child{position:sticky;left:0;z-index:1;background:#eee}
@media (max-width:40em){th{white-space:normal}tr>:first-child{overflow-wrap:anywhere;min-width:4em}}
td.bar{border:none;padding:0 0.2em;color:#888}
figure{margin:0.5em 0 1.5em}
figure svg{display:block;width:100%;height:auto}
figcaption{font-size:0.85em;color:#555}
.series{display:flex;flex-wrap:wrap;gap:0.5em}
.series figure{margin:0;width:22em;max-width:100%}
p.absent{color:#855;font-style:italic}
p.caption{font-size:0.9em;color:#444}
p.summary{font-size:1.05em}
ul.headline{font-weight:bold;margin:0.3em 0}
small.spread{color:#666}
span.err{color:#b00;font-weight:bold}`

// writeHTML writes the page in one write, with the detail of the tables
// (detail.go) and d's lines where d is not nil.
func writeHTML(w io.Writer, setups []Setup, tables []Table, data map[results.RunID]*results.RunData, d *detail) error {
	if d == nil {
		d = &detail{}
	}
	var b bytes.Buffer
	var ids []string
	for i, t := range tables {
		if i == 0 || t.Session != tables[i-1].Session {
			ids = append(ids, t.Session)
		}
	}
	title := "bench: session " + strings.Join(ids, ", ")
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>%s</title>\n<style>\n%s\n%s\n</style>\n</head>\n<body>\n", esc(title), pageStyle, chartFontCSS())
	pal := newPalette(tables)
	var session, family, machine string
	for i := 0; i < len(tables); i++ {
		t := tables[i]
		newSession := i == 0 || t.Session != session
		newFamily := newSession || t.Family != family
		if newSession {
			fmt.Fprintf(&b, "<h1>Session %s</h1>\n", esc(t.Session))
			if sum := d.summaries[t.Session]; sum != "" {
				fmt.Fprintf(&b, "<p class=\"summary\">%s</p>\n", esc(sum))
			}
			for _, s := range setups {
				if s.Session == t.Session {
					htmlSetup(&b, s)
				}
			}
		}
		if newFamily {
			fmt.Fprintf(&b, "<h2>%s</h2>\n", esc(t.Family))
		}
		if newFamily || t.Machine != machine {
			fmt.Fprintf(&b, "<h3>%s</h3>\n", esc(t.Machine))
		}
		session, family, machine = t.Session, t.Family, t.Machine
		if t.Title != "" {
			fmt.Fprintf(&b, "<h4>%s</h4>\n", esc(t.Title))
		}
		htmlHeadlines(&b, t)
		htmlTable(&b, t)
		if ranked(t) {
			svg, ok, err := barChart(t, pal)
			if err != nil {
				return errChart(t.Family+" on "+t.Machine, err)
			}
			if ok {
				runs := "run"
				if t.Kind == kindSweep {
					runs = "search"
				}
				figure(&b, classBar, svg, "Medians of "+t.Family+" on "+t.Machine+"; whiskers from the slowest "+runs+" to the fastest.")
			}
		}
		last := i+1 == len(tables) || tables[i+1].Session != t.Session || tables[i+1].Family != t.Family || tables[i+1].Machine != t.Machine
		if !last {
			continue
		}
		// The group's charts of the runs' data, from its throughput
		// tables (ranked, the first of a triple).
		var group []Table
		for j := i; j >= 0 && tables[j].Session == t.Session && tables[j].Family == t.Family && tables[j].Machine == t.Machine; j-- {
			if ranked(tables[j]) {
				group = append([]Table{tables[j]}, group...)
			}
		}
		if t.Family == famSweep {
			// a search's steps are short windows: their latency against
			// their rate, not their seconds
			if err := htmlSweeps(&b, t, pal); err != nil {
				return err
			}
			continue
		}
		if t.Family == famMix {
			if err := htmlHDR(&b, group, data, pal, d.accounting[t.Session]); err != nil {
				return err
			}
		}
		if err := htmlSeries(&b, group, data); err != nil {
			return err
		}
	}
	b.WriteString("</body>\n</html>\n")
	_, err := w.Write(b.Bytes())
	return err
}

func esc(s string) string { return html.EscapeString(s) }

// figure writes a chart's figure.
func figure(b *bytes.Buffer, class string, svg []byte, caption string) {
	fmt.Fprintf(b, "<figure class=\"%s\">\n", class)
	b.Write(svg)
	fmt.Fprintf(b, "\n<figcaption>%s</figcaption>\n</figure>\n", esc(caption))
}

// htmlSetup writes a session's Setup table and notes.
func htmlSetup(b *bytes.Buffer, s Setup) {
	if len(s.Missing) > 0 {
		fmt.Fprintf(b, "<p class=\"absent\">No metadata beside %s.</p>\n", esc(strings.Join(s.Missing, ", ")))
	}
	if len(s.Rows) == 0 {
		return
	}
	b.WriteString("<h2>Setup</h2>\n<table class=\"setup\">\n<tr><th></th>")
	for _, m := range s.Machines {
		fmt.Fprintf(b, "<th>%s</th>", esc(m))
	}
	b.WriteString("</tr>\n")
	for _, r := range s.Rows {
		fmt.Fprintf(b, "<tr><th>%s</th>", esc(r.Label))
		for _, c := range r.Cells {
			fmt.Fprintf(b, "<td>%s</td>", esc(c))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n")
	if len(s.Notes) > 0 {
		b.WriteString("<p>Notes of the session:</p>\n<ul>\n")
		for _, n := range s.Notes {
			fmt.Fprintf(b, "<li>%s</li>\n", esc(n))
		}
		b.WriteString("</ul>\n")
	}
}

// htmlTable writes a table as the markdown has it: the figure in bold
// where marked, the marks after it, a ‖ where the group changes, and its
// footnotes, failed runs, notes and caption under it.
func htmlTable(b *bytes.Buffer, t Table) {
	fmt.Fprintf(b, "<table class=\"%s\">\n<tr>", esc(t.Kind))
	for i, h := range withBars(t.Groups, t.Corner, t.Columns) {
		if h == "‖" && i > 0 {
			b.WriteString("<td class=\"bar\">‖</td>")
			continue
		}
		fmt.Fprintf(b, "<th>%s</th>", esc(h))
	}
	b.WriteString("</tr>\n")
	for _, r := range t.Rows {
		texts := make([]string, len(r.Cells))
		for j, c := range r.Cells {
			text := strings.TrimSuffix(shownText(c), " "+failureText(c))
			texts[j] = esc(text)
			if c.Bold {
				texts[j] = "<strong>" + esc(c.figure) + "</strong>" + esc(text[len(c.figure):])
			}
			texts[j] += htmlCellDetail(c)
		}
		fmt.Fprintf(b, "<tr><th>%s</th>", esc(r.Label))
		for _, c := range withBars(t.Groups, "", texts)[1:] {
			if c == "‖" {
				b.WriteString("<td class=\"bar\">‖</td>")
				continue
			}
			fmt.Fprintf(b, "<td>%s</td>", c)
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n")
	var text bytes.Buffer
	writeSearches(&text, t, true)
	htmlParagraphs(b, text.String())
	htmlLegend(b, t)
	text.Reset()
	if l := closedLine(t); l != "" {
		text.WriteString(l + "\n\n")
	}
	writeFailed(&text, t.Failed, true)
	writeGroupedNotes(&text, t)
	htmlParagraphs(b, text.String())
	if t.Caption != "" {
		fmt.Fprintf(b, "<p class=\"caption\">%s</p>\n", esc(t.Caption))
	}
}

// htmlParagraphs writes text as the markdown writers give it, paragraphs
// apart by a blank line and lists of "- " lines, as the page's.
func htmlParagraphs(b *bytes.Buffer, text string) {
	for _, para := range strings.Split(strings.TrimSpace(text), "\n\n") {
		if para == "" {
			continue
		}
		lines := strings.Split(para, "\n")
		if strings.HasPrefix(lines[0], "- ") {
			b.WriteString("<ul>\n")
			for _, l := range lines {
				fmt.Fprintf(b, "<li>%s</li>\n", esc(strings.TrimPrefix(l, "- ")))
			}
			b.WriteString("</ul>\n")
			continue
		}
		fmt.Fprintf(b, "<p>%s</p>\n", esc(para))
	}
}

// htmlLegend writes t's legend (legendOf) under it, the page's detail
// included.
func htmlLegend(b *bytes.Buffer, t Table) {
	items := legendOf(t, true)
	if len(items) == 0 {
		return
	}
	fmt.Fprintf(b, "<p>%s:</p>\n<ul class=\"legend\">\n", legendHead)
	for _, it := range items {
		mark := esc(it.mark)
		if m, ok := strings.CutPrefix(it.mark, markBold); ok {
			mark = "<strong>bold</strong>" + esc(m)
		}
		if strings.HasPrefix(it.mark, errorMark) {
			mark = "<span class=\"err\">" + mark + "</span>"
		}
		fmt.Fprintf(b, "<li>%s: %s</li>\n", mark, esc(it.text))
	}
	b.WriteString("</ul>\n")
}

// htmlHeadlines writes the headlines of t's rows before it.
func htmlHeadlines(b *bytes.Buffer, t Table) {
	hs := Headlines(t)
	if len(hs) == 0 {
		return
	}
	b.WriteString("<ul class=\"headline\">\n")
	for _, h := range hs {
		fmt.Fprintf(b, "<li>%s</li>\n", esc(h.String()))
	}
	fmt.Fprintf(b, "</ul>\n<p class=\"caption\">%s</p>\n", esc(headlineNote))
}

// htmlCellDetail is what the page writes after a cell's text: its !
// mark and share, and its spread with the runs' range in its title.
func htmlCellDetail(c Cell) string {
	var s string
	if f := failureText(c); f != "" {
		s += fmt.Sprintf(" <span class=\"err\" title=\"%s of its exchanges failed: errors, timeouts, cut or wrong answers\">%s</span>", sharePercent(*c.ErrorShare), esc(f))
	}
	if short, long := cellSpread(c); short != "" {
		s += fmt.Sprintf(" <small class=\"spread\" title=\"%s\">%s</small>", esc(long), esc(short))
	}
	return s
}

// htmlHDR writes the percentile chart of each mix scenario of the tables
// whose runs kept a histogram, or says that none did.
func htmlHDR(b *bytes.Buffer, group []Table, data map[results.RunID]*results.RunData, pal palette, accounting string) error {
	counted := "every exchange due in the window"
	if accounting == results.MixAnswered {
		counted = "the answered exchanges only (bench mix before its fixed window)"
	}
	drawn := 0
	for _, t := range group {
		for _, r := range t.Rows {
			var lines []hdrLine
			for j, c := range r.Cells {
				h, n, err := mergedHistogram(c.ids, data)
				if err != nil {
					return fmt.Errorf("%s, %s on %s: %w", r.Label, c.Proxy, t.Machine, err)
				}
				if h != nil {
					lines = append(lines, hdrLine{name: t.Columns[j], color: pal.color(t.Columns[j], c.Group), runs: n, h: h})
				}
			}
			if len(lines) == 0 {
				continue
			}
			svg, err := hdrChart(r.Label+", "+t.Machine, lines)
			if err != nil {
				return errChart(r.Label, err)
			}
			figure(b, classHDR, svg, "Latency of "+r.Label+" by percentile, "+counted+", the runs of each column merged.")
			drawn++
		}
	}
	if drawn == 0 {
		b.WriteString("<p class=\"absent\">No latency histograms of these runs beside the session files (bench keeps them in &lt;csv&gt;.runs/ since its sessions write &lt;run&gt;.data.json, or its mix output there): no percentile charts.</p>\n")
	}
	return nil
}

// mergedHistogram is the histogram of the runs, merged, and how many
// runs it merged; nil when none kept one.
func mergedHistogram(ids []results.RunID, data map[results.RunID]*results.RunData) (*hdrhistogram.Histogram, int, error) {
	var h *hdrhistogram.Histogram
	n := 0
	for _, id := range ids {
		d := data[id]
		if d == nil || d.Histogram == "" {
			continue
		}
		rh, err := hdrhistogram.Decode([]byte(d.Histogram))
		if err != nil {
			return nil, 0, fmt.Errorf("rep %d's histogram: %w", id.Rep, err)
		}
		n++
		if h == nil {
			h = rh
			continue
		}
		if dropped := h.Merge(rh); dropped > 0 {
			return nil, 0, fmt.Errorf("rep %d's histogram: %d values out of range", id.Rep, dropped)
		}
	}
	return h, n, nil
}

// htmlSeries writes the time series of each cell of the tables whose
// runs kept theirs, or says that none did.
func htmlSeries(b *bytes.Buffer, group []Table, data map[results.RunID]*results.RunData) error {
	var figs bytes.Buffer
	drawn := 0
	for _, t := range group {
		for _, r := range t.Rows {
			label, _, _ := strings.Cut(r.Label, ", ")
			for j, c := range r.Cells {
				var runs []*results.RunData
				for _, id := range c.ids {
					if d := data[id]; d != nil && (len(d.Intervals) > 0 || len(d.CPU) > 0) {
						runs = append(runs, d)
					}
				}
				if len(runs) == 0 {
					continue
				}
				name := c.Proxy
				if t.Family == famTunnel || t.Family == famHandshake {
					name = t.Columns[j]
				}
				title := label + ", " + name
				svg, err := seriesChart(title, r.unit, runs)
				if err != nil {
					return errChart(title, err)
				}
				figure(&figs, classSeries, svg, title+": each second of the window, "+pluralRuns(len(runs)))
				drawn++
			}
		}
	}
	if drawn == 0 {
		b.WriteString("<p class=\"absent\">No per-second series of these runs beside the session files (sessions before bench kept &lt;run&gt;.data.json in &lt;csv&gt;.runs/): no time series.</p>\n")
		return nil
	}
	b.WriteString("<details open>\n<summary>Runs second by second: throughput where the load tool gives it (iperf3, bench mix; not wrk), and the busy fraction of the proxy's, client's and origin's CPUs</summary>\n<div class=\"series\">\n")
	b.Write(figs.Bytes())
	b.WriteString("</div>\n</details>\n")
	return nil
}

func pluralRuns(n int) string {
	if n == 1 {
		return "1 run"
	}
	return fmt.Sprintf("%d runs, told apart by dash, glyph and shade", n)
}

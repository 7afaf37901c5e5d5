// Package page writes the session's page (HTML, Render and the Writer
// HTML): the tables of package report with their marks and legends, the
// detail, a bar chart of each throughput table, the percentile charts of
// the mixes, each cell's time series, each sweep's steps, and the CPU
// profiles of the cells' median runs (package profiles).
package page

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"bench/internal/text"
	"bench/report"
	"bench/report/chart"
	"bench/report/htmldoc"
	"bench/report/profiles"
	"bench/results"
	"github.com/HdrHistogram/hdrhistogram-go"
)

// The page is one file, its style in it and its charts drawn in it as SVG,
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

// Render writes to w the page of rows as opt says, with the latency
// tables and the detail whatever opt says of them: the charts have the
// data. Nothing is written unless the whole page could be built.
func Render(w io.Writer, rows []results.Row, opt report.Options) error {
	opt.Latency, opt.Detail = true, true
	doc, err := report.Build(rows, opt)
	if err != nil {
		return err
	}
	return HTML{}.Write(w, doc)
}

// HTML writes the page (Writer).
type HTML struct{}

// Write writes the page of doc in one write, with the detail of the
// tables (detail.go) and doc's detail lines where it has them, and
// hands the pages of the profiles it links past its budget to
// doc.ProfilePage, where not nil.
func (HTML) Write(w io.Writer, doc report.Document) error {
	setups, tables, data, d := doc.Setups, doc.Tables, doc.Runs, doc.Detail
	if d == nil {
		d = &report.Detail{}
	}
	prof, err := profiles.ForPage(tables, data, profiles.InlineBudget, doc.ProfilePage)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	var ids []string
	for i, t := range tables {
		if i == 0 || t.Session != tables[i-1].Session {
			ids = append(ids, t.Session)
		}
	}
	title := "bench: session " + strings.Join(ids, ", ")
	htmldoc.Head(&b, title, htmldoc.Style+prof.Style(), chart.FontCSS())
	pal := report.NewPalette(tables)
	groups := report.ByFamily(tables)
	for i, g := range groups {
		if i == 0 || g.Session != groups[i-1].Session {
			var own []report.FamilyGroup
			for _, o := range groups[i:] {
				if o.Session == g.Session {
					own = append(own, o)
				}
			}
			htmlOpening(&b, g.Session, d.Summaries[g.Session], own, setups)
		}
		if i == 0 || g.Session != groups[i-1].Session || g.Family != groups[i-1].Family {
			fmt.Fprintf(&b, "<h2 id=\"%s\">%s</h2>\n", report.Anchor(g.Session, g.Family), htmldoc.Esc(g.Family))
		}
		fmt.Fprintf(&b, "<h3 id=\"%s\">%s</h3>\n", report.Anchor(g.Session, g.Family, g.Machine), htmldoc.Esc(g.Machine))
		if err := htmlGroup(&b, g, data, pal, d, prof); err != nil {
			return err
		}
		if i+1 == len(groups) || groups[i+1].Session != g.Session {
			for _, s := range setups {
				if s.Session == g.Session {
					htmlSetup(&b, s)
				}
			}
		}
	}
	prof.Write(&b)
	b.WriteString("</body>\n</html>\n")
	if err := prof.WriteOwn(); err != nil {
		return err
	}
	_, err = w.Write(b.Bytes())
	return err
}

// htmlOpening opens a session: its heading and line, the summary of its
// families (summaryLines), and the contents of the page's headings.
func htmlOpening(b *bytes.Buffer, session, line string, groups []report.FamilyGroup, setups []report.Setup) {
	fmt.Fprintf(b, "<h1 id=\"%s\">Session %s</h1>\n", report.Anchor("session", session), htmldoc.Esc(session))
	fmt.Fprintf(b, "<section class=\"answer\" id=\"%s\">\n", summaryID(session))
	if line != "" {
		fmt.Fprintf(b, "<p class=\"summary\">%s</p>\n", htmldoc.Esc(line))
	}
	var tables []report.Table
	for _, g := range groups {
		tables = append(tables, g.Tables...)
	}
	if fams := report.FamilySummaries(session, tables); len(fams) > 0 {
		fmt.Fprintf(b, "<h2>%s</h2>\n", report.SummaryHead)
		familyTable(b, session, fams)
		fmt.Fprintf(b, "<p class=\"caption\">%s</p>\n", htmldoc.Esc(report.SummaryNote))
	}
	// what the session's closing summary says of its noisy cells
	if noisy := report.Noisy(tables); len(noisy) > 0 {
		fmt.Fprintf(b, "<details class=\"caveats\">\n<summary>%s.</summary>\n<ul>\n", htmldoc.Esc(report.NoisyHead(len(noisy))))
		for _, n := range noisy {
			fmt.Fprintf(b, "<li>%s</li>\n", htmldoc.Esc(n.String()))
		}
		b.WriteString("</ul>\n</details>\n")
	}
	// how the headlines above each table read, once
	fmt.Fprintf(b, "<p class=\"caption\">Headlines: %s</p>\n", htmldoc.Esc(report.HeadlineNote))
	b.WriteString("</section>\n<nav class=\"contents\">\n<h2>Contents</h2>\n<ul>\n")
	for i, g := range groups {
		if i > 0 && g.Family == groups[i-1].Family {
			continue
		}
		var machines []string
		for _, o := range groups[i:] {
			if o.Family == g.Family {
				machines = append(machines, fmt.Sprintf("<a href=\"#%s\">%s</a>", report.Anchor(session, o.Family, o.Machine), htmldoc.Esc(o.Machine)))
			}
		}
		fmt.Fprintf(b, "<li><a href=\"#%s\">%s</a>", report.Anchor(session, g.Family), htmldoc.Esc(g.Family))
		if len(machines) > 1 {
			b.WriteString(": " + strings.Join(machines, ", "))
		}
		b.WriteString("</li>\n")
	}
	for _, s := range setups {
		if s.Session == session && len(s.Rows) > 0 {
			fmt.Fprintf(b, "<li><a href=\"#%s\">Setup</a></li>\n", report.Anchor(session, "setup"))
		}
	}
	b.WriteString("</ul>\n</nav>\n")
	for _, s := range setups {
		if s.Session == session && len(s.Missing) > 0 {
			fmt.Fprintf(b, "<p class=\"absent\">No metadata beside %s.</p>\n", htmldoc.Esc(strings.Join(s.Missing, ", ")))
		}
	}
}

// familyTable writes the session's families as a table, a row a family
// on a machine (the machine named where the session has several), its
// name a link to its tables.
func familyTable(b *bytes.Buffer, session string, fams []report.FamilySummary) {
	machines := map[string]bool{}
	for _, f := range fams {
		machines[f.Machine] = true
	}
	b.WriteString("<table class=\"families\">\n<tr>")
	for _, h := range report.FamilySummaryHeader {
		fmt.Fprintf(b, "<th>%s</th>", htmldoc.Esc(h))
	}
	b.WriteString("</tr>\n")
	for _, f := range fams {
		name := f.Family
		if len(machines) > 1 {
			name += " on " + f.Machine
		}
		fmt.Fprintf(b, "<tr><td><a href=\"#%s\">%s</a></td>", report.Anchor(session, f.Family, f.Machine), htmldoc.Esc(name))
		level := fmt.Sprintf("%d of %d", f.Level, f.Rows)
		if f.Rows == 0 {
			level = "no row to rank" // one proxy a row, and no proxy none
		}
		for _, c := range []string{f.Leads, level, f.Failed, f.Pace} {
			fmt.Fprintf(b, "<td>%s</td>", htmldoc.Esc(c))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n")
}

// summaryID is the id of a session's summary on the page.
func summaryID(session string) string { return report.Anchor("summary", session) }

// htmlGroup writes the tables of a family on a machine, each ranked one
// with its bar chart, and after them the charts of their runs' data.
func htmlGroup(b *bytes.Buffer, g report.FamilyGroup, data map[results.RunID]*results.RunData, pal chart.Palette, d *report.Detail, prof *profiles.Page) error {
	var group []report.Table // the throughput tables (ranked, the first of a triple)
	for _, t := range g.Tables {
		if t.Kind == report.KindLatency {
			// the latency tables closed, as the charts of the runs' data
			fmt.Fprintf(b, "<details class=\"latency\">\n<summary>%s</summary>\n", htmldoc.Esc(t.Title))
			htmlTable(b, t, prof)
			b.WriteString("</details>\n")
			continue
		}
		if t.Title != "" {
			fmt.Fprintf(b, "<h4>%s</h4>\n", htmldoc.Esc(t.Title))
		}
		htmlHeadlines(b, t)
		htmlTable(b, t, prof)
		if !report.Ranked(t) {
			continue
		}
		group = append(group, t)
		svg, ok, err := barChart(t, pal)
		if err != nil {
			return chart.ErrChart(t.Family+" on "+t.Machine, err)
		}
		if ok {
			runs := "run"
			if t.Kind == report.KindSweep {
				runs = "search"
			}
			htmldoc.Figure(b, chart.ClassBar, svg, "Medians of "+t.Family+" on "+t.Machine+"; whiskers from the slowest "+runs+" to the fastest.")
		}
	}
	last := g.Tables[len(g.Tables)-1]
	if g.Family == report.FamSweep {
		// a search's steps are short windows: their latency against
		// their rate, not their seconds
		return htmlSweeps(b, last, pal)
	}
	if g.Family == report.FamMix {
		if err := htmlHDR(b, group, data, pal, d.Accounting[g.Session]); err != nil {
			return err
		}
	}
	return htmlSeries(b, group, data)
}

// htmlSetup writes a session's Setup table and notes, after its tables
// (htmlOpening says which files had no metadata).
func htmlSetup(b *bytes.Buffer, s report.Setup) {
	if len(s.Rows) == 0 {
		return
	}
	fmt.Fprintf(b, "<h2 id=\"%s\">Setup</h2>\n<table class=\"setup\">\n<tr><th></th>", report.Anchor(s.Session, "setup"))
	for _, m := range s.Machines {
		fmt.Fprintf(b, "<th>%s</th>", htmldoc.Esc(m))
	}
	b.WriteString("</tr>\n")
	for _, r := range s.Rows {
		fmt.Fprintf(b, "<tr><th>%s</th>", htmldoc.Esc(r.Label))
		for _, c := range r.Cells {
			fmt.Fprintf(b, "<td>%s</td>", htmldoc.Esc(c))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n")
	if len(s.Notes) > 0 {
		b.WriteString("<p>Notes of the session:</p>\n<ul>\n")
		for _, n := range s.Notes {
			fmt.Fprintf(b, "<li>%s</li>\n", htmldoc.Esc(n))
		}
		b.WriteString("</ul>\n")
	}
}

// htmlTable writes a table as the markdown has it: the figure in bold
// where marked, the marks after it, a ‖ where the group changes, and its
// footnotes, failed runs, notes and caption under it.
func htmlTable(b *bytes.Buffer, t report.Table, prof *profiles.Page) {
	fmt.Fprintf(b, "<table class=\"%s\">\n<tr>", htmldoc.Esc(t.Kind))
	for i, h := range report.WithBars(t.Groups, t.Corner, t.Columns) {
		if h == "‖" && i > 0 {
			b.WriteString("<td class=\"bar\">‖</td>")
			continue
		}
		fmt.Fprintf(b, "<th>%s</th>", htmldoc.Esc(h))
	}
	b.WriteString("</tr>\n")
	for _, r := range t.Rows {
		texts := make([]string, len(r.Cells))
		for j, c := range r.Cells {
			text := strings.TrimSuffix(report.ShownText(c), " "+report.FailureText(c))
			texts[j] = htmldoc.Esc(text)
			if c.Bold {
				texts[j] = "<strong>" + htmldoc.Esc(c.Figure) + "</strong>" + htmldoc.Esc(text[len(c.Figure):])
			}
			texts[j] += htmlCellDetail(c) + prof.Link(c)
		}
		fmt.Fprintf(b, "<tr><th>%s</th>", htmldoc.Esc(r.Label))
		for _, c := range report.WithBars(t.Groups, "", texts)[1:] {
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
	report.MarkdownWriter{}.Searches(&text, t)
	htmlParagraphs(b, text.String())
	htmlLegend(b, t)
	text.Reset()
	if l := report.ClosedLine(t); l != "" {
		text.WriteString(l + "\n\n")
	}
	report.MarkdownWriter{}.Failed(&text, t.Failed)
	htmlParagraphs(b, text.String())
	if lines := report.GroupNotes(t.RunNotes); len(lines) > 0 {
		// the notes closed, as the charts of the runs' data: the marks
		// and the failed runs above say what the figures owe to them
		fmt.Fprintf(b, "<details class=\"notes\">\n<summary>%s: %d</summary>\n<ul>\n", htmldoc.Esc(report.GroupedNotesHead), len(lines))
		for _, l := range lines {
			fmt.Fprintf(b, "<li>%s</li>\n", htmldoc.Esc(l))
		}
		b.WriteString("</ul>\n</details>\n")
	}
	if t.Caption != "" {
		fmt.Fprintf(b, "<p class=\"caption\">%s</p>\n", htmldoc.Esc(t.Caption))
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
				fmt.Fprintf(b, "<li>%s</li>\n", htmldoc.Esc(strings.TrimPrefix(l, "- ")))
			}
			b.WriteString("</ul>\n")
			continue
		}
		fmt.Fprintf(b, "<p>%s</p>\n", htmldoc.Esc(para))
	}
}

// htmlLegend writes t's legend (legendOf) under it, the page's detail
// included.
func htmlLegend(b *bytes.Buffer, t report.Table) {
	items := report.LegendOf(t, report.WithSpreads)
	if len(items) == 0 {
		return
	}
	fmt.Fprintf(b, "<p>%s:</p>\n<ul class=\"legend\">\n", report.LegendHead)
	for _, it := range items {
		mark := htmldoc.Esc(it.Mark)
		if m, ok := strings.CutPrefix(it.Mark, report.MarkBold); ok {
			mark = "<strong>bold</strong>" + htmldoc.Esc(m)
		}
		if strings.HasPrefix(it.Mark, report.ErrorMark) {
			mark = "<span class=\"err\">" + mark + "</span>"
		}
		fmt.Fprintf(b, "<li>%s: %s</li>\n", mark, htmldoc.Esc(it.Text))
	}
	b.WriteString("</ul>\n")
}

// htmlHeadlines writes the headlines of t's rows before it (the opening
// says how they read).
func htmlHeadlines(b *bytes.Buffer, t report.Table) {
	hs := report.Headlines(t)
	if len(hs) == 0 {
		return
	}
	b.WriteString("<ul class=\"headline\">\n")
	for _, h := range hs {
		fmt.Fprintf(b, "<li>%s</li>\n", htmldoc.Esc(h.String()))
	}
	b.WriteString("</ul>\n")
}

// htmlCellDetail is what the page writes after a cell's text: its !
// mark and share (lighter within report.ErrorWarn), and its spread with
// the runs' range in its title.
func htmlCellDetail(c report.Cell) string {
	var s string
	if f := report.FailureText(c); f != "" {
		class := "err"
		if !report.Erring(c) {
			class = "err minor" // within report.ErrorWarn: lighter
		}
		s += fmt.Sprintf(" <span class=\"%s\" title=\"%s of its exchanges failed: errors, timeouts, cut or wrong answers\">%s</span>", class, strings.TrimPrefix(f, report.ErrorMark), htmldoc.Esc(f))
	}
	if short, long := report.CellSpread(c); short != "" {
		s += fmt.Sprintf(" <small class=\"spread\" title=\"%s\">%s</small>", htmldoc.Esc(long), htmldoc.Esc(short))
	}
	return s
}

// htmlHDR writes the percentile chart of each mix scenario of the tables
// whose runs kept a histogram, or says that none did.
func htmlHDR(b *bytes.Buffer, group []report.Table, data map[results.RunID]*results.RunData, pal chart.Palette, accounting string) error {
	counted := "every exchange due in the window"
	if accounting == results.MixAnswered {
		counted = "the answered exchanges only (bench mix before its fixed window)"
	}
	var figs bytes.Buffer
	drawn := 0
	var none []string // the rows whose histograms hold no exchange
	for _, t := range group {
		for _, r := range t.Rows {
			var lines []hdrLine
			kept := false
			for j, c := range r.Cells {
				h, n, err := mergedHistogram(c.IDs, data)
				if err != nil {
					return fmt.Errorf("%s, %s on %s: %w", r.Label, c.Proxy, t.Machine, err)
				}
				kept = kept || h != nil
				// a histogram of no exchange has no latency to draw
				if h != nil && h.TotalCount() > 0 {
					lines = append(lines, hdrLine{name: t.Columns[j], color: pal.Color(t.Columns[j], c.Group), runs: n, h: h, failed: report.FailureText(c)})
				}
			}
			if len(lines) == 0 {
				if kept {
					none = append(none, r.Label)
				}
				continue
			}
			svg, err := hdrChart(r.Label+", "+t.Machine, lines)
			if err != nil {
				return chart.ErrChart(r.Label, err)
			}
			htmldoc.Figure(&figs, chart.ClassHDR, svg, "Latency of "+r.Label+" by percentile, "+counted+", the runs of each column merged.")
			drawn++
		}
	}
	if drawn > 0 {
		fmt.Fprintf(b, "<details class=\"hdr\">\n<summary>Latency by percentile: %d charts, one a scenario</summary>\n", drawn)
		b.Write(figs.Bytes())
		b.WriteString("</details>\n")
	}
	if len(none) > 0 {
		fmt.Fprintf(b, "<p class=\"absent\">%s: %s.</p>\n", noExchangeNote, htmldoc.Esc(strings.Join(none, ", ")))
	}
	if drawn == 0 && len(none) == 0 {
		b.WriteString("<p class=\"absent\">No latency histograms of these runs beside the session files (bench keeps them in &lt;csv&gt;.runs/ since its sessions write &lt;run&gt;.data.json, or its mix output there): no percentile charts.</p>\n")
	}
	return nil
}

// noExchangeNote says, in place of a percentile chart, that its runs'
// histograms hold no exchange: bench mix writes an empty one where none
// was due in the window.
const noExchangeNote = "No percentile chart where the runs' histograms hold no exchange"

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
		rh, err := d.Latency()
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
func htmlSeries(b *bytes.Buffer, group []report.Table, data map[results.RunID]*results.RunData) error {
	var figs bytes.Buffer
	drawn := 0
	for _, t := range group {
		for _, r := range t.Rows {
			label, _, _ := strings.Cut(r.Label, ", ")
			for j, c := range r.Cells {
				var runs []*results.RunData
				for _, id := range c.IDs {
					if d := data[id]; d != nil && (len(d.Intervals) > 0 || len(d.CPU) > 0) {
						runs = append(runs, d)
					}
				}
				if len(runs) == 0 {
					continue
				}
				name := c.Proxy
				if t.Family == report.FamTunnel || t.Family == report.FamHandshake {
					name = t.Columns[j]
				}
				title := label + ", " + name
				svg, err := seriesChart(title, r.Unit, runs)
				if err != nil {
					return chart.ErrChart(title, err)
				}
				htmldoc.Figure(&figs, chart.ClassSeries, svg, title+": each second of the window, "+runsTold(len(runs)))
				drawn++
			}
		}
	}
	if drawn == 0 {
		b.WriteString("<p class=\"absent\">No per-second series of these runs beside the session files (sessions before bench kept &lt;run&gt;.data.json in &lt;csv&gt;.runs/): no time series.</p>\n")
		return nil
	}
	b.WriteString("<details>\n<summary>Runs second by second: throughput where the load tool gives it (iperf3, bench mix; not wrk), and the busy fraction of the proxy's, client's and origin's CPUs</summary>\n<div class=\"series\">\n")
	b.Write(figs.Bytes())
	b.WriteString("</div>\n</details>\n")
	return nil
}

// runsTold is how many runs a chart of the time series draws, and how
// they are told apart where there are more than one.
func runsTold(n int) string {
	if n == 1 {
		return text.Plural(n, "run")
	}
	return text.Plural(n, "run") + ", told apart by dash, glyph and shade"
}

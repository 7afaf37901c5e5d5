package report

import (
	"bench/inputerr"
	"bench/internal/text"
	"bench/results"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Formats of Options.Format.
const (
	FormatMarkdown = "md"   // GitHub markdown, bold as **15.3** (the default)
	FormatTSV      = "tsv"  // tab-separated text like the reference results', with a ‖ column
	FormatJSON     = "json" // the tables as data: {"tables":[...]}
	// FormatHTML (html.go) is the page with the charts.
)

// Options says how Render renders.
type Options struct {
	Format  string // md (default), tsv or json
	Layout  string // machine (default) or combined
	Session string // the session to render; empty renders every one, newest first
	// Latency adds under each family's tables on a machine the latency
	// of its cells, where they have one (JSON carries it in every
	// throughput cell anyway).
	Latency bool
	// Files are the session files the rows were read from, with the
	// metadata beside them (results.ReadMetas): each session's Setup
	// table comes from them. Without files there is no Setup table.
	Files []results.SessionFile
	// Detail adds to the markdown what the page always has beyond the
	// headlines and each median's spread and runs (detail.go): a line of
	// what the session ran and the command line in the Setup table
	// (which the other formats then have too).
	Detail bool
	// Runs are the data the runs kept beside the session files
	// (results.ReadRunData), which the page's percentile charts and time
	// series draw; without them the page says they are absent.
	Runs map[results.RunID]*results.RunData
	// ProfilePage, where set, writes the page of each profile the page
	// links past what it holds itself (profile_page.go), once the page is
	// made; where nil, the page links such a profile where its page is
	// already beside the run's files.
	ProfilePage ProfilePageFunc
}

// Render writes the tables of rows to w. Nothing is written unless the
// whole report could be built.
func Render(w io.Writer, rows []results.Row, opt Options) error {
	if err := checkReportFormat(opt.Format); err != nil {
		return err
	}
	if opt.Format == FormatHTML {
		// the page has the latency tables, as the charts have the data,
		// and the detail
		opt.Latency, opt.Detail = true, true
	}
	tables, err := Tables(rows, opt)
	if err != nil {
		return err
	}
	var d *detail
	if opt.Detail {
		d = newDetail(rows, opt)
	}
	if opt.Format == FormatHTML {
		return writeHTML(w, Setups(rows, opt.Files, opt), tables, opt.Runs, opt.ProfilePage, d)
	}
	return write(w, Setups(rows, opt.Files, opt), tables, opt.Format, d)
}

// detail is what Options.Detail adds to the text beyond the tables, by
// session id: the line of what each session ran, and the accounting of
// its mix rows (mixAccountings), which the page's captions say.
type detail struct {
	summaries  map[string]string
	accounting map[string]string
}

// newDetail is the detail of the sessions of runs.
func newDetail(runs []results.Row, opt Options) *detail {
	rows := make([]*results.Row, len(runs))
	for i := range runs {
		rows[i] = &runs[i]
	}
	d := &detail{summaries: map[string]string{}, accounting: mixAccountings(rows, opt.Files)}
	for _, r := range runs {
		if _, ok := d.summaries[r.Session]; !ok {
			d.summaries[r.Session] = sessionSummary(r.Session, runs, opt.Files)
		}
	}
	return d
}

// checkReportFormat rejects a format other than those of Options.Format,
// as input refused (inputerr.Error).
func checkReportFormat(f string) error {
	if f == FormatHTML {
		return nil
	}
	if err := checkFormat(f); err != nil {
		return inputerr.Bad(fmt.Errorf("unknown format %q (want %s, %s, %s or %s)", f, FormatMarkdown, FormatTSV, FormatJSON, FormatHTML))
	}
	return nil
}

// checkFormat rejects a format other than the text ones and JSON, as
// input refused (inputerr.Error).
func checkFormat(f string) error {
	switch f {
	case "", FormatMarkdown, FormatTSV, FormatJSON:
		return nil
	}
	return inputerr.Bad(fmt.Errorf("unknown format %q (want %s, %s or %s)", f, FormatMarkdown, FormatTSV, FormatJSON))
}

// Write writes the sessions' Setup tables and the tables to w in format,
// in one write: nothing is written unless every table could be rendered.
// In text, a session's Setup table follows its heading.
func Write(w io.Writer, setups []Setup, tables []Table, format string) error {
	return write(w, setups, tables, format, nil)
}

// write is Write with the detail d of the text, nil for none; the page
// has the detail of the tables, and d's lines where it is not nil.
func write(w io.Writer, setups []Setup, tables []Table, format string, d *detail) error {
	if err := checkReportFormat(format); err != nil {
		return err
	}
	switch format {
	case FormatHTML:
		return writeHTML(w, setups, tables, nil, nil, d)
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		if tables == nil {
			tables = []Table{}
		}
		return enc.Encode(struct {
			Setup  []Setup `json:"setup,omitempty"`
			Tables []Table `json:"tables"`
		}{setups, tables})
	case FormatTSV:
		return writeText(w, setups, tables, false, nil)
	}
	return writeText(w, setups, tables, true, d)
}

// writeText writes the tables with their headings, in markdown or as
// the reference results' tab-separated text; markdown with the detail d
// where it is not nil.
func writeText(w io.Writer, setups []Setup, tables []Table, md bool, d *detail) error {
	var buf bytes.Buffer
	heading := func(level int, s string) { writeHeading(&buf, md, level, s) }
	var session, family, machine string
	var figures *Table // the last throughput table, its spreads not written yet
	for i, t := range tables {
		newSession := i == 0 || t.Session != session
		newFamily := newSession || t.Family != family
		if newSession {
			if err := writeSessionHead(&buf, t.Session, setups, tables, md, d); err != nil {
				return err
			}
		}
		if newFamily {
			heading(2, t.Family)
		}
		if newFamily || t.Machine != machine {
			heading(3, t.Machine)
		}
		session, family, machine = t.Session, t.Family, t.Machine
		if err := writeTextTable(&buf, t, md); err != nil {
			return err
		}
		// The spreads of a throughput table follow it, or the last of
		// its triple (HTTPS, the mixes), in tab-separated text.
		if ranked(t) {
			figures = &tables[i]
		}
		if !md && figures != nil && (i+1 == len(tables) || !sameTriple(t, tables[i+1])) {
			writeSpreads(&buf, *figures)
			figures = nil
		}
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// writeSessionHead writes a session's heading, in markdown or as the
// reference results' tab-separated text: under it, in markdown, the
// detail d's summary of the session where d is not nil, and the summary
// of its tables; then the setups of the session.
func writeSessionHead(buf *bytes.Buffer, session string, setups []Setup, tables []Table, md bool, d *detail) error {
	writeHeading(buf, md, 1, "Session "+session)
	if d != nil && d.summaries[session] != "" {
		buf.WriteString(mdText.Replace(d.summaries[session]) + "\n\n")
	}
	if md {
		writeSummary(buf, session, tables)
	}
	for _, s := range setups {
		if s.Session == session {
			if err := writeSetup(buf, s, md); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeTextTable writes a table under its title, in markdown (its
// headlines first, its legend after) or as the reference results'
// tab-separated text, with its searches, failed runs, notes and caption.
func writeTextTable(buf *bytes.Buffer, t Table, md bool) error {
	if t.Title != "" {
		writeHeading(buf, md, 4, t.Title)
	}
	if md {
		if hs := Headlines(t); len(hs) > 0 {
			for _, h := range hs {
				buf.WriteString("- " + mdText.Replace(h.String()) + "\n")
			}
			buf.WriteString("\n" + headlineNote + "\n\n")
		}
	}
	if md {
		if err := writeMarkdown(buf, t, true); err != nil {
			return err
		}
	} else {
		writeTSV(buf, t)
	}
	buf.WriteString("\n")
	writeSearches(buf, t, md)
	if md {
		writeLegend(buf, t, true)
		if l := closedLine(t); l != "" {
			buf.WriteString(mdText.Replace(l) + "\n\n")
		}
	} else {
		writeNoSplice(buf, t)
	}
	writeFailed(buf, t.Failed, md)
	if md {
		writeGroupedNotes(buf, t)
	} else {
		writeNotes(buf, t.Notes)
	}
	if t.Caption != "" {
		buf.WriteString(mdOnly(md, t.Caption) + "\n\n")
	}
	return nil
}

// writeSummary writes the summary of a session's tables (summaryLines)
// in markdown.
func writeSummary(w *bytes.Buffer, session string, tables []Table) {
	lines := summaryLines(session, tables)
	if len(lines) == 0 {
		return
	}
	writeHeading(w, true, 2, summaryHead)
	for _, l := range lines {
		w.WriteString("- " + mdText.Replace(l) + "\n")
	}
	w.WriteString("\n" + summaryNote + "\n\n")
}

// writeSetup writes a session's Setup table with its notes, or says that
// its files have no metadata.
func writeSetup(w *bytes.Buffer, s Setup, md bool) error {
	missing := func(then string) {
		if len(s.Missing) > 0 {
			fmt.Fprintf(w, "No metadata beside %s%s.\n\n", mdOnly(md, strings.Join(s.Missing, ", ")), then)
		}
	}
	if len(s.Rows) == 0 {
		missing(": no Setup table")
		return nil
	}
	writeHeading(w, md, 2, "Setup")
	rows := make([][]string, len(s.Rows))
	for i, r := range s.Rows {
		rows[i] = append([]string{r.Label}, r.Cells...)
	}
	header := append([]string{""}, s.Machines...)
	if md {
		if err := markdownGrid(w, header, rows); err != nil {
			return fmt.Errorf("render the Setup table of session %s: %w", s.Session, err)
		}
	} else {
		tsvGrid(w, header, rows)
	}
	w.WriteString("\n")
	if len(s.Notes) > 0 {
		if md {
			w.WriteString("Notes of the session:\n\n")
			for _, n := range s.Notes {
				w.WriteString("- " + mdText.Replace(n) + "\n")
			}
		} else {
			w.WriteString("notes\n")
			for _, n := range s.Notes {
				tsvLine(w, n)
			}
		}
		w.WriteString("\n")
	}
	missing(": a machine without it has " + noValue + " cells")
	return nil
}

// writeHeading writes a heading of level: "## s" in markdown, s alone in
// tab-separated text.
func writeHeading(w *bytes.Buffer, md bool, level int, s string) {
	if md {
		w.WriteString(strings.Repeat("#", level) + " ")
	}
	w.WriteString(mdOnly(md, s) + "\n\n")
}

// withBars inserts a ‖ wherever the group changes between columns.
func withBars(groups []string, corner string, cells []string) []string {
	out := make([]string, 0, len(cells)+3)
	out = append(out, corner)
	for i, c := range cells {
		if i > 0 && groups[i] != groups[i-1] {
			out = append(out, "‖")
		}
		out = append(out, c)
	}
	return out
}

func writeTSV(w *bytes.Buffer, t Table) {
	rows := make([][]string, len(t.Rows))
	for i, r := range t.Rows {
		texts := make([]string, len(r.Cells))
		for j, c := range r.Cells {
			texts[j] = c.Text
		}
		rows[i] = withBars(t.Groups, r.Label, texts)
	}
	tsvGrid(w, withBars(t.Groups, t.Corner, t.Columns), rows)
}

// ranked reports whether a table gives the figure its proxies are ranked
// by (throughput, handshakes, sustainable rates), not their CPU or
// memory.
func ranked(t Table) bool {
	return t.Kind == "throughput" || t.Kind == "handshake" || t.Kind == kindSweep
}

// sameTriple reports whether next continues the triple of t: the CPU or
// memory table after the throughput one of the same family and machine.
func sameTriple(t, next Table) bool {
	return next.Title != "" && !ranked(next) &&
		next.Session == t.Session && next.Family == t.Family && next.Machine == t.Machine
}

// writeSpreads writes under a tab-separated table the spread of each of
// its cells, (fastest - slowest) / median in percent, as a grid of the
// same shape; nothing when no cell has two runs.
func writeSpreads(w *bytes.Buffer, t Table) {
	rows := make([][]string, len(t.Rows))
	any := false
	for i, r := range t.Rows {
		texts := make([]string, len(r.Cells))
		for j, c := range r.Cells {
			texts[j] = "–"
			if c.Spread != nil {
				texts[j] = text.Percent(*c.Spread)
				any = true
			}
		}
		rows[i] = withBars(t.Groups, r.Label, texts)
	}
	if !any {
		return
	}
	tsvGrid(w, withBars(t.Groups, "spread", t.Columns), rows)
	w.WriteString("\n")
}

// noSpliceNote is the footnote of the † mark.
const noSpliceNote = "† never spliced: in none of its runs did the proxy hold a pipe beyond its own, " +
	"which splice() needs; the figure is a copying proxy's."

// writeNoSplice writes the footnote of † under a table that has the mark,
// in tab-separated text (markdown and the page have it in the legend).
func writeNoSplice(w *bytes.Buffer, t Table) {
	for _, r := range t.Rows {
		for _, c := range r.Cells {
			if c.NoSplice {
				w.WriteString(noSpliceNote + "\n\n")
				return
			}
		}
	}
}

// tsvGrid writes a header and rows as tab-separated lines.
func tsvGrid(w *bytes.Buffer, header []string, rows [][]string) {
	tsvLine(w, header...)
	for _, r := range rows {
		tsvLine(w, r...)
	}
}

// tsvLine writes cells as a tab-separated line, each escaped (tsvText):
// no tab or newline of a name or a note shifts a column or begins a line.
func tsvLine(w *bytes.Buffer, cells ...string) {
	for i, c := range cells {
		if i > 0 {
			w.WriteByte('\t')
		}
		w.WriteString(tsvText.Replace(c))
	}
	w.WriteByte('\n')
}

// markdownCell is a cell in markdown: its text with the figure in bold
// when marked: "**35.0** ‡ *".
func markdownCell(c Cell) string {
	if !c.Bold {
		return shownText(c)
	}
	return "**" + c.figure + "**" + c.Text[len(c.figure):]
}

// mdEscapes are what markdown would take for HTML in text of the session
// files (a proxy's name, a machine's label, a note) and its entities, as
// the page escapes them: GitHub would drop a "<b>" of a note and show
// "&lt;" as "<".
var mdEscapes = []string{"&", "&amp;", "<", "&lt;", ">", "&gt;"}

var (
	// mdText escapes text of the markdown: headings, list items, captions.
	mdText = textEscaper{strings.NewReplacer(mdEscapes...)}
	// mdCell escapes a table cell's text: as mdText, and the | that
	// would end the cell.
	mdCell = textEscaper{strings.NewReplacer(append([]string{"|", `\|`}, mdEscapes...)...)}
	// tsvText escapes a line's or a cell's text of the tab-separated
	// text: its control characters alone.
	tsvText = textEscaper{strings.NewReplacer()}
)

// textEscaper escapes a line of text, or a cell, of the session files
// for the format it goes into: each rune a label may not hold written
// visible (results.Visible), so that no newline of a name or a note
// begins a heading, a list or a table's row, and no tab of it shifts a
// column, then what the format's replacer escapes.
type textEscaper struct{ r *strings.Replacer }

func (e textEscaper) Replace(s string) string { return e.r.Replace(results.Visible(s)) }

// mdOnly is s escaped as mdText escapes it in markdown, and as tsvText
// does in tab-separated text.
func mdOnly(md bool, s string) string {
	if md {
		return mdText.Replace(s)
	}
	return tsvText.Replace(s)
}

// writeMarkdown writes t as a markdown table; with spreads, each cell
// with its spread (cellSpread), as bench report writes it.
func writeMarkdown(w io.Writer, t Table, spreads bool) error {
	rows := make([][]string, len(t.Rows))
	for i, r := range t.Rows {
		cells := make([]string, len(r.Cells))
		for j, c := range r.Cells {
			cells[j] = markdownCell(c)
			if spreads {
				cells[j] += detailSuffix(c)
			}
		}
		rows[i] = withBars(t.Groups, r.Label, cells)
	}
	if err := markdownGrid(w, withBars(t.Groups, t.Corner, t.Columns), rows); err != nil {
		return fmt.Errorf("render table %q of %s: %w", t.Family, t.Machine, err)
	}
	return nil
}

// markdownGrid writes a header and rows as a GitHub markdown table, left
// aligned, with each cell escaped (mdCell).
func markdownGrid(w io.Writer, header []string, rows [][]string) error {
	esc := func(cells []string) []string {
		for i, c := range cells {
			cells[i] = mdCell.Replace(c)
		}
		return cells
	}
	tbl := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewMarkdown()),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
	)
	tbl.Header(esc(header))
	for _, r := range rows {
		if err := tbl.Append(esc(r)); err != nil {
			return err
		}
	}
	return tbl.Render()
}

func writeFailed(w *bytes.Buffer, failed []Failure, md bool) {
	if len(failed) == 0 {
		return
	}
	if md {
		w.WriteString("Failed runs, left out of the medians:\n\n")
		for _, f := range failed {
			fmt.Fprintf(w, "- %s, %s, rep %d: %s\n", mdText.Replace(f.Proxy), mdText.Replace(f.Load), f.Rep, mdText.Replace(noteOrNone(f.Note)))
		}
	} else {
		tsvLine(w, "failed runs", "load", "rep", "note")
		for _, f := range failed {
			tsvLine(w, f.Proxy, f.Load, strconv.Itoa(f.Rep), noteOrNone(f.Note))
		}
	}
	w.WriteString("\n")
}

// writeNotes lists in tab-separated text what the ok runs noted, each
// note once with the columns and scenarios that noted it; markdown and
// the page group them by cell (writeGroupedNotes).
func writeNotes(w *bytes.Buffer, notes []Note) {
	if len(notes) == 0 {
		return
	}
	tsvLine(w, "notes", "columns", "scenarios")
	for _, n := range notes {
		tsvLine(w, n.Text, strings.Join(n.Proxies, ", "), strings.Join(n.Loads, ", "))
	}
	w.WriteString("\n")
}

// writeGroupedNotes lists the runs' notes of t grouped (groupNotes), in
// markdown.
func writeGroupedNotes(w *bytes.Buffer, t Table) {
	lines := groupNotes(t.runNotes)
	if len(lines) == 0 {
		return
	}
	w.WriteString(groupedNotesHead + ":\n\n")
	for _, l := range lines {
		w.WriteString("- " + mdText.Replace(l) + "\n")
	}
	w.WriteString("\n")
}

func noteOrNone(note string) string {
	if note == "" {
		return "no note"
	}
	return note
}

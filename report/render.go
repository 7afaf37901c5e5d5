package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"bench/inputerr"
	"bench/internal/text"
	"bench/results"
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
	if err := CheckFormat(f); err != nil {
		return inputerr.Bad(fmt.Errorf("unknown format %q (want %s, %s, %s or %s)", f, FormatMarkdown, FormatTSV, FormatJSON, FormatHTML))
	}
	return nil
}

// CheckFormat rejects a format other than the text ones and JSON, as
// input refused (inputerr.Error).
func CheckFormat(f string) error {
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
		return writeText(w, setups, tables, tsvWriter{})
	}
	return writeText(w, setups, tables, markdownWriter{d: d})
}

// writeText writes the tables with their headings in the text format f.
func writeText(w io.Writer, setups []Setup, tables []Table, f TextWriter) error {
	var buf bytes.Buffer
	var session, family, machine string
	var figures *Table // the last ranked table, what follows its triple not written yet
	for i, t := range tables {
		newSession := i == 0 || t.Session != session
		newFamily := newSession || t.Family != family
		if newSession {
			if err := writeSessionHead(&buf, t.Session, setups, tables, f); err != nil {
				return err
			}
		}
		if newFamily {
			f.Heading(&buf, 2, t.Family)
		}
		if newFamily || t.Machine != machine {
			f.Heading(&buf, 3, t.Machine)
		}
		session, family, machine = t.Session, t.Family, t.Machine
		if err := writeTextTable(&buf, t, f); err != nil {
			return err
		}
		// What follows a throughput table follows it, or the last of
		// its triple (HTTPS, the mixes).
		if ranked(t) {
			figures = &tables[i]
		}
		if figures != nil && (i+1 == len(tables) || !sameTriple(t, tables[i+1])) {
			f.tripleEnd(&buf, *figures)
			figures = nil
		}
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// writeSessionHead writes a session's heading in the text format f, what
// f has under it (textWriter.sessionHead), then the setups of the
// session.
func writeSessionHead(buf *bytes.Buffer, session string, setups []Setup, tables []Table, f TextWriter) error {
	f.Heading(buf, 1, "Session "+session)
	f.sessionHead(buf, session, tables)
	for _, s := range setups {
		if s.Session == session {
			if err := writeSetup(buf, s, f); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeTextTable writes a table under its title in the text format f,
// with its searches, marks, failed runs, notes and caption.
func writeTextTable(buf *bytes.Buffer, t Table, f TextWriter) error {
	if t.Title != "" {
		f.Heading(buf, 4, t.Title)
	}
	if err := f.table(buf, t); err != nil {
		return err
	}
	buf.WriteString("\n")
	f.searches(buf, t)
	f.marks(buf, t)
	f.failed(buf, t.Failed)
	f.notes(buf, t)
	if t.Caption != "" {
		buf.WriteString(f.Text(t.Caption) + "\n\n")
	}
	return nil
}

// writeSetup writes a session's Setup table with its notes in the text
// format f, or says that its files have no metadata.
func writeSetup(w *bytes.Buffer, s Setup, f TextWriter) error {
	missing := func(then string) {
		if len(s.Missing) > 0 {
			fmt.Fprintf(w, "No metadata beside %s%s.\n\n", f.Text(strings.Join(s.Missing, ", ")), then)
		}
	}
	if len(s.Rows) == 0 {
		missing(": no Setup table")
		return nil
	}
	f.Heading(w, 2, "Setup")
	rows := make([][]string, len(s.Rows))
	for i, r := range s.Rows {
		rows[i] = append([]string{r.Label}, r.Cells...)
	}
	header := append([]string{""}, s.Machines...)
	if err := f.Grid(w, header, rows); err != nil {
		return fmt.Errorf("render the Setup table of session %s: %w", s.Session, err)
	}
	w.WriteString("\n")
	if len(s.Notes) > 0 {
		f.setupNotes(w, s.Notes)
		w.WriteString("\n")
	}
	missing(": a machine without it has " + noValue + " cells")
	return nil
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

// writeTSV writes t as tab-separated text, with a ‖ where the group of
// its columns changes.
func writeTSV(w *bytes.Buffer, t Table) error {
	rows := make([][]string, len(t.Rows))
	for i, r := range t.Rows {
		texts := make([]string, len(r.Cells))
		for j, c := range r.Cells {
			texts[j] = c.Text
		}
		rows[i] = withBars(t.Groups, r.Label, texts)
	}
	return text.TSV{}.Grid(w, withBars(t.Groups, t.Corner, t.Columns), rows)
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

// markdownCell is a cell in markdown: its text with the figure in bold
// when marked: "**35.0** ‡ *".
func markdownCell(c Cell) string {
	if !c.Bold {
		return shownText(c)
	}
	return "**" + c.figure + "**" + c.Text[len(c.figure):]
}

// spreadView says whether a table's cells are written with their spread
// ("±3% n=3", cellSpread) beside the median.
type spreadView int

const (
	mediansAlone spreadView = iota
	withSpreads
)

// writeMarkdown writes t as a markdown table; withSpreads, each cell
// with its spread, as bench report writes it.
func writeMarkdown(w io.Writer, t Table, s spreadView) error {
	rows := make([][]string, len(t.Rows))
	for i, r := range t.Rows {
		cells := make([]string, len(r.Cells))
		for j, c := range r.Cells {
			cells[j] = markdownCell(c)
			if s == withSpreads {
				cells[j] += detailSuffix(c)
			}
		}
		rows[i] = withBars(t.Groups, r.Label, cells)
	}
	if err := (text.Markdown{}).Grid(w, withBars(t.Groups, t.Corner, t.Columns), rows); err != nil {
		return fmt.Errorf("render table %q of %s: %w", t.Family, t.Machine, err)
	}
	return nil
}

// noSpliceNote is the footnote of the † mark.
const noSpliceNote = "† never spliced: in none of its runs did the proxy hold a pipe beyond its own, " +
	"which splice() needs; the figure is a copying proxy's."

func noteOrNone(note string) string {
	if note == "" {
		return "no note"
	}
	return note
}

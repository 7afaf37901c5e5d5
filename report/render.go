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
	// FormatHTML is the page with the charts: page.Render, page.HTML.
	FormatHTML = "html"
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

// ProfilePageFunc writes the page of a profile that a session's page
// links past its inline budget: rel is its path from the page's folder
// (its runs' folder, then the run's name and results.FlameSuffix), page
// the whole file.
type ProfilePageFunc func(rel string, page []byte) error

// Render writes the tables of rows to w in opt.Format, a text format or
// JSON (the page: page.Render). Nothing is written unless the whole
// report could be built.
func Render(w io.Writer, rows []results.Row, opt Options) error {
	wr, err := WriterOf(opt.Format)
	if err != nil {
		return err
	}
	doc, err := Build(rows, opt)
	if err != nil {
		return err
	}
	return wr.Write(w, doc)
}

// Document is what a writer writes of sessions: their Setup tables and
// tables, the detail that Options.Detail adds (nil: none), the runs'
// data the page draws, and where the page hands the pages of the
// profiles it links past what it holds (nil: none is written).
type Document struct {
	Setups      []Setup
	Tables      []Table
	Detail      *Detail
	Runs        map[results.RunID]*results.RunData
	ProfilePage ProfilePageFunc
}

// Build is the document of rows as opt says: their tables, their
// sessions' Setup tables and, with opt.Detail, the detail.
func Build(rows []results.Row, opt Options) (Document, error) {
	tables, err := Tables(rows, opt)
	if err != nil {
		return Document{}, err
	}
	doc := Document{Setups: Setups(rows, opt.Files, opt), Tables: tables, Runs: opt.Runs, ProfilePage: opt.ProfilePage}
	if opt.Detail {
		doc.Detail = newDetail(rows, opt)
	}
	return doc, nil
}

// Writer writes a document in one format, in one write: nothing is
// written unless the whole of it could be. Markdown, TSV and JSON are
// report's; the page's is page.HTML.
type Writer interface {
	Write(w io.Writer, doc Document) error
}

// The writers of the text formats and of the tables as data.
type (
	// Markdown writes GitHub markdown, with the document's detail where
	// it has one.
	Markdown struct{}
	// TSV writes the reference results' tab-separated text.
	TSV struct{}
	// JSON writes the Setup tables and the tables as data:
	// {"setup":[...],"tables":[...]}.
	JSON struct{}
)

// Write writes doc in markdown.
func (Markdown) Write(w io.Writer, doc Document) error {
	return writeText(w, doc.Setups, doc.Tables, MarkdownWriter{d: doc.Detail})
}

// Write writes doc in the reference results' tab-separated text.
func (TSV) Write(w io.Writer, doc Document) error {
	return writeText(w, doc.Setups, doc.Tables, tsvWriter{})
}

// Write writes doc's Setup tables and tables as JSON.
func (JSON) Write(w io.Writer, doc Document) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	tables := doc.Tables
	if tables == nil {
		tables = []Table{}
	}
	return enc.Encode(struct {
		Setup  []Setup `json:"setup,omitempty"`
		Tables []Table `json:"tables"`
	}{doc.Setups, tables})
}

// WriterOf is the writer of format, one of Options.Format's; any other,
// the page's too, is refused as input (inputerr.Error).
func WriterOf(format string) (Writer, error) {
	if err := CheckFormat(format); err != nil {
		return nil, err
	}
	switch format {
	case FormatTSV:
		return TSV{}, nil
	case FormatJSON:
		return JSON{}, nil
	}
	return Markdown{}, nil
}

// Detail is what Options.Detail adds to the text beyond the tables, by
// session id: the line of what each session ran, and the accounting of
// its mix rows (mixAccountings), which the page's captions say.
type Detail struct {
	Summaries  map[string]string
	Accounting map[string]string
}

// newDetail is the detail of the sessions of runs.
func newDetail(runs []results.Row, opt Options) *Detail {
	rows := make([]*results.Row, len(runs))
	for i := range runs {
		rows[i] = &runs[i]
	}
	d := &Detail{Summaries: map[string]string{}, Accounting: mixAccountings(rows, opt.Files)}
	for _, r := range runs {
		if _, ok := d.Summaries[r.Session]; !ok {
			d.Summaries[r.Session] = sessionSummary(r.Session, runs, opt.Files)
		}
	}
	return d
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
		if Ranked(t) {
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
	f.Searches(buf, t)
	f.marks(buf, t)
	f.Failed(buf, t.Failed)
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

// WithBars inserts a ‖ wherever the group changes between columns.
func WithBars(groups []string, corner string, cells []string) []string {
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
		rows[i] = WithBars(t.Groups, r.Label, texts)
	}
	return text.TSV{}.Grid(w, WithBars(t.Groups, t.Corner, t.Columns), rows)
}

// Ranked reports whether a table gives the figure its proxies are ranked
// by (throughput, handshakes, sustainable rates), not their CPU or
// memory.
func Ranked(t Table) bool {
	return t.Kind == "throughput" || t.Kind == "handshake" || t.Kind == KindSweep
}

// sameTriple reports whether next continues the triple of t: the CPU or
// memory table after the throughput one of the same family and machine.
func sameTriple(t, next Table) bool {
	return next.Title != "" && !Ranked(next) &&
		next.Session == t.Session && next.Family == t.Family && next.Machine == t.Machine
}

// markdownCell is a cell in markdown: its text with the figure in bold
// when marked: "**35.0** ‡ *".
func markdownCell(c Cell) string {
	if !c.Bold {
		return ShownText(c)
	}
	return "**" + c.Figure + "**" + c.Text[len(c.Figure):]
}

// spreadView says whether a table's cells are written with their spread
// ("±3% n=3", cellSpread) beside the median.
type spreadView int

const (
	mediansAlone spreadView = iota
	WithSpreads
)

// writeMarkdown writes t as a markdown table; withSpreads, each cell
// with its spread, as bench report writes it.
func writeMarkdown(w io.Writer, t Table, s spreadView) error {
	rows := make([][]string, len(t.Rows))
	for i, r := range t.Rows {
		cells := make([]string, len(r.Cells))
		for j, c := range r.Cells {
			cells[j] = markdownCell(c)
			if s == WithSpreads {
				cells[j] += detailSuffix(c)
			}
		}
		rows[i] = WithBars(t.Groups, r.Label, cells)
	}
	if err := (text.Markdown{}).Grid(w, WithBars(t.Groups, t.Corner, t.Columns), rows); err != nil {
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

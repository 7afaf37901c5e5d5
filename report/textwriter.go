package report

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"bench/internal/text"
)

// TextWriter is a text format of the report: markdown, with what
// explains the tables (headlines, summaries, legends, notes grouped by
// cell), or the reference results' tab-separated text, the figures with
// their spreads, searches, failed runs and notes as rows. Each writes
// what the other has in its own way, or leaves it out.
type TextWriter interface {
	text.Format
	// sessionHead writes what follows a session's heading, before its
	// Setup table.
	sessionHead(w *bytes.Buffer, session string, tables []Table)
	// table writes t's grid, with what goes before it.
	table(w *bytes.Buffer, t Table) error
	// Searches writes the cells' searches under a Sustainable rate
	// table.
	Searches(w *bytes.Buffer, t Table)
	// marks writes what t's marks mean.
	marks(w *bytes.Buffer, t Table)
	// Failed lists the failed runs of a table.
	Failed(w *bytes.Buffer, failed []Failure)
	// notes lists what t's ok runs noted.
	notes(w *bytes.Buffer, t Table)
	// setupNotes lists the notes of a session's Setup table.
	setupNotes(w *bytes.Buffer, notes []string)
	// tripleEnd writes what follows the last table of the triple of a
	// ranked table, figures.
	tripleEnd(w *bytes.Buffer, figures Table)
	// Legend writes the legend of a comparison, s.
	Legend(w *bytes.Buffer, s string)
}

var (
	_ TextWriter = MarkdownWriter{}
	_ TextWriter = tsvWriter{}
)

// TextWriterOf is the writer of a text format, FormatTSV or markdown.
func TextWriterOf(format string) TextWriter {
	if format == FormatTSV {
		return tsvWriter{}
	}
	return MarkdownWriter{}
}

// MarkdownWriter writes GitHub markdown, with the detail d where it is
// not nil.
type MarkdownWriter struct {
	text.Markdown
	d *Detail
}

// sessionHead writes the detail's summary of the session, and the
// summary of its tables (summaryLines).
func (f MarkdownWriter) sessionHead(w *bytes.Buffer, session string, tables []Table) {
	if f.d != nil && f.d.Summaries[session] != "" {
		w.WriteString(f.Text(f.d.Summaries[session]) + "\n\n")
	}
	lines := SummaryLines(session, tables)
	if len(lines) == 0 {
		return
	}
	f.Heading(w, 2, SummaryHead)
	for _, l := range lines {
		w.WriteString("- " + f.Text(l) + "\n")
	}
	w.WriteString("\n" + SummaryNote + "\n\n")
}

// table writes t's headlines, then t with each cell's spread.
func (f MarkdownWriter) table(w *bytes.Buffer, t Table) error {
	if hs := Headlines(t); len(hs) > 0 {
		for _, h := range hs {
			w.WriteString("- " + f.Text(h.String()) + "\n")
		}
		w.WriteString("\n" + HeadlineNote + "\n\n")
	}
	return writeMarkdown(w, t, WithSpreads)
}

// Searches writes a line a cell.
func (f MarkdownWriter) Searches(w *bytes.Buffer, t Table) {
	lines := searchLines(t)
	if len(lines) == 0 {
		return
	}
	w.WriteString(searchesHead + ":\n\n")
	for _, l := range lines {
		fmt.Fprintf(w, "- %s, %s: %s\n", f.Text(l[0]), f.Text(l[1]), f.Text(l[2]))
	}
	w.WriteString("\n")
}

// marks writes t's legend, and the line of the connections closed.
func (f MarkdownWriter) marks(w *bytes.Buffer, t Table) {
	writeLegend(w, t, WithSpreads)
	if l := ClosedLine(t); l != "" {
		w.WriteString(f.Text(l) + "\n\n")
	}
}

// Failed lists the failed runs of a table.
func (f MarkdownWriter) Failed(w *bytes.Buffer, failed []Failure) {
	if len(failed) == 0 {
		return
	}
	w.WriteString("Failed runs, left out of the medians:\n\n")
	for _, r := range failed {
		fmt.Fprintf(w, "- %s, %s, rep %d: %s\n", f.Text(r.Proxy), f.Text(r.Load), r.Rep, f.Text(noteOrNone(r.Note)))
	}
	w.WriteString("\n")
}

// notes lists the runs' notes of t grouped by cell (groupNotes).
func (f MarkdownWriter) notes(w *bytes.Buffer, t Table) {
	lines := GroupNotes(t.RunNotes)
	if len(lines) == 0 {
		return
	}
	w.WriteString(GroupedNotesHead + ":\n\n")
	for _, l := range lines {
		w.WriteString("- " + f.Text(l) + "\n")
	}
	w.WriteString("\n")
}

func (f MarkdownWriter) setupNotes(w *bytes.Buffer, notes []string) {
	w.WriteString("Notes of the session:\n\n")
	for _, n := range notes {
		w.WriteString("- " + f.Text(n) + "\n")
	}
}

// tripleEnd writes nothing: each cell has its spread.
func (MarkdownWriter) tripleEnd(*bytes.Buffer, Table) {}

// Legend writes the legend of a comparison, s.
func (MarkdownWriter) Legend(w *bytes.Buffer, s string) { w.WriteString(s + "\n") }

// tsvWriter writes the reference results' tab-separated text.
type tsvWriter struct{ text.TSV }

// sessionHead writes nothing: the text has no summary.
func (tsvWriter) sessionHead(*bytes.Buffer, string, []Table) {}

func (tsvWriter) table(w *bytes.Buffer, t Table) error { return writeTSV(w, t) }

// Searches writes a row a cell.
func (tsvWriter) Searches(w *bytes.Buffer, t Table) {
	lines := searchLines(t)
	if len(lines) == 0 {
		return
	}
	text.Line(w, "searches", "scenario", "where each stopped")
	for _, l := range lines {
		text.Line(w, l[:]...)
	}
	w.WriteString("\n")
}

// marks writes the footnote of † under a table that has the mark
// (markdown and the page have it in the legend).
func (tsvWriter) marks(w *bytes.Buffer, t Table) {
	for _, r := range t.Rows {
		for _, c := range r.Cells {
			if c.NoSplice {
				w.WriteString(noSpliceNote + "\n\n")
				return
			}
		}
	}
}

// Failed lists the failed runs of a table.
func (tsvWriter) Failed(w *bytes.Buffer, failed []Failure) {
	if len(failed) == 0 {
		return
	}
	text.Line(w, "failed runs", "load", "rep", "note")
	for _, f := range failed {
		text.Line(w, f.Proxy, f.Load, strconv.Itoa(f.Rep), noteOrNone(f.Note))
	}
	w.WriteString("\n")
}

// notes lists what the ok runs noted, each note once with the columns
// and scenarios that noted it.
func (tsvWriter) notes(w *bytes.Buffer, t Table) {
	if len(t.Notes) == 0 {
		return
	}
	text.Line(w, "notes", "columns", "scenarios")
	for _, n := range t.Notes {
		text.Line(w, n.Text, strings.Join(n.Proxies, ", "), strings.Join(n.Loads, ", "))
	}
	w.WriteString("\n")
}

func (tsvWriter) setupNotes(w *bytes.Buffer, notes []string) {
	w.WriteString("notes\n")
	for _, n := range notes {
		text.Line(w, n)
	}
}

// tripleEnd writes the spread of each of the cells of figures,
// (fastest - slowest) / median in percent, as a grid of the same shape;
// nothing when no cell has two runs.
func (f tsvWriter) tripleEnd(w *bytes.Buffer, figures Table) {
	rows := make([][]string, len(figures.Rows))
	any := false
	for i, r := range figures.Rows {
		texts := make([]string, len(r.Cells))
		for j, c := range r.Cells {
			texts[j] = "–"
			if c.Spread != nil {
				texts[j] = text.Percent(*c.Spread)
				any = true
			}
		}
		rows[i] = WithBars(figures.Groups, r.Label, texts)
	}
	if !any {
		return
	}
	f.Grid(w, WithBars(figures.Groups, "spread", figures.Columns), rows)
	w.WriteString("\n")
}

// Legend writes nothing: the text has no legend.
func (tsvWriter) Legend(*bytes.Buffer, string) {}

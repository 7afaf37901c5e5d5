package text

import (
	"bytes"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Format is a text format of the reports: how it escapes a line of
// text, writes a heading and a table. Markdown and TSV are the two.
type Format interface {
	// Text is s escaped as a line of the format's text.
	Text(s string) string
	// Heading writes a heading of level, 1 the top, and a blank line.
	Heading(w *bytes.Buffer, level int, s string)
	// Grid writes a header and rows as a table, each cell escaped.
	Grid(w io.Writer, header []string, rows [][]string) error
}

// Markdown is GitHub markdown.
type Markdown struct{}

// TSV is tab-separated text, as the reference results have it.
type TSV struct{}

var (
	_ Format = Markdown{}
	_ Format = TSV{}
)

// Text is s escaped as MarkdownText escapes it.
func (Markdown) Text(s string) string { return MarkdownText.Replace(s) }

// Heading writes "## s" for level 2.
func (f Markdown) Heading(w *bytes.Buffer, level int, s string) {
	w.WriteString(strings.Repeat("#", level) + " " + f.Text(s) + "\n\n")
}

// Grid writes a header and rows as a GitHub markdown table, left
// aligned, with each cell escaped (MarkdownCell).
func (Markdown) Grid(w io.Writer, header []string, rows [][]string) error {
	esc := func(cells []string) []string {
		out := make([]string, len(cells))
		for i, c := range cells {
			out[i] = MarkdownCell.Replace(c)
		}
		return out
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

// Text is s escaped as TSVText escapes it.
func (TSV) Text(s string) string { return TSVText.Replace(s) }

// Heading writes s alone, whatever its level.
func (f TSV) Heading(w *bytes.Buffer, _ int, s string) { w.WriteString(f.Text(s) + "\n\n") }

// Grid writes a header and rows as tab-separated lines (Line).
func (TSV) Grid(w io.Writer, header []string, rows [][]string) error {
	var b bytes.Buffer
	Line(&b, header...)
	for _, r := range rows {
		Line(&b, r...)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// Line writes cells as a tab-separated line, each escaped (TSVText): no
// tab or newline of a name or a note shifts a column or begins a line.
func Line(w *bytes.Buffer, cells ...string) {
	for i, c := range cells {
		if i > 0 {
			w.WriteByte('\t')
		}
		w.WriteString(TSVText.Replace(c))
	}
	w.WriteByte('\n')
}

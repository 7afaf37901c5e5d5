package text

import (
	"bench/results"
	"strings"
)

// markdownEscapes are what markdown would take for HTML in text of the
// session files (a proxy's name, a machine's label, a note) and its
// entities, as the page escapes them: GitHub would drop a "<b>" of a
// note and show "&lt;" as "<".
var markdownEscapes = []string{"&", "&amp;", "<", "&lt;", ">", "&gt;"}

var (
	// MarkdownText escapes text of the markdown: headings, list items,
	// captions.
	MarkdownText = Escaper{strings.NewReplacer(markdownEscapes...)}
	// MarkdownCell escapes a table cell's text: as MarkdownText, and the
	// | that would end the cell.
	MarkdownCell = Escaper{strings.NewReplacer(append([]string{"|", `\|`}, markdownEscapes...)...)}
	// TSVText escapes a line's or a cell's text of the tab-separated
	// text: its control characters alone.
	TSVText = Escaper{strings.NewReplacer()}
)

// Escaper escapes a line of text, or a cell, of the session files for
// the format it goes into: each rune a label may not hold written
// visible (results.Visible), so that no newline of a name or a note
// begins a heading, a list or a table's row, and no tab of it shifts a
// column, then what the format's replacer escapes.
type Escaper struct{ r *strings.Replacer }

// Replace is s escaped.
func (e Escaper) Replace(s string) string { return e.r.Replace(results.Visible(s)) }

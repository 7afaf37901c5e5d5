// Package text holds the text the report and the harness share: the
// count of things in words (Plural), the figures as the tables print
// them (Fixed, Thousands, Percent, SharePercent), the escapers of the
// session files' text for markdown and the tab-separated text, and a
// writer per text format (Format: Markdown, TSV) of headings, lines and
// grids.
package text

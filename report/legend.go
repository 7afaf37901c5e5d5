package report

import (
	"fmt"
	"io"
	"strings"

	"bench/internal/text"
)

// legendItem is one mark of a table and what it says there.
type legendItem struct {
	Mark string // as the table prints it: "*", "‡", "!12%"; bold for bold
	Text string
}

// MarkBold is legendItem's mark of a figure in bold, which each format
// writes its own way.
const MarkBold = "\x00bold"

// LegendOf is the legend of t: each mark its cells carry, once, in the
// order a cell prints them, with what it says in this table; withSpreads,
// the spread of the cells too ("±3% n=3"). Empty for a table with no
// mark.
func LegendOf(t Table, s spreadView) []legendItem {
	var bold, star, bound, noSplice, failed, spread, none bool
	for _, r := range t.Rows {
		for _, c := range r.Cells {
			bold = bold || c.Bold
			star = star || c.Star
			bound = bound || c.Bound
			noSplice = noSplice || c.NoSplice
			failed = failed || FailureText(c) != ""
			none = none || (c.Median == nil && strings.HasPrefix(c.Text, noValue))
			if short, _ := CellSpread(c); s == WithSpreads && short != "" {
				spread = true
			}
		}
	}
	var out []legendItem
	starOnly := markingOf(t.Family) == markStarOnly
	switch {
	case bold && starOnly:
		out = append(out, legendItem{MarkBold + " *", "the best median of the row, and any other whose fastest run reaches the best one's slowest: they cannot be told apart; " + fewestRule})
	case bold:
		out = append(out, legendItem{MarkBold, "the best median of its group in the row (the copying proxies, or the splicing ones after ‖), " +
			"and any other of the group whose fastest run reaches the best one's slowest: they cannot be told apart; " + fewestRule})
	}
	if star && !starOnly {
		out = append(out, legendItem{"*", "the best of the row over both groups, by the same rule"})
	}
	if noSplice {
		out = append(out, legendItem{"†", strings.TrimSuffix(strings.TrimPrefix(noSpliceNote, "† "), ".")})
	}
	if bound {
		out = append(out, legendItem{"‡", BoundLegend(t)})
	}
	if failed {
		counts := "its figure counts the answered ones alone"
		if t.Kind == KindLatency {
			counts = "wrk's latency is of the answered ones alone, bench mix's of every exchange due, a failed one at the time it ended (a timed-out one at its timeout)"
		}
		out = append(out, legendItem{ErrorMark + "p%", fmt.Sprintf("p%% of the cell's exchanges failed (errors, timeouts, cut or wrong answers): "+
			"%s; more than %s, the cell is failing (on the page, %s or less in a lighter mark)",
			counts, text.SharePercent(ErrorWarn), text.SharePercent(ErrorWarn))})
	}
	if spread {
		out = append(out, legendItem{"±p% n=r", "half the range of the cell's r runs, slowest to fastest, is p% of its median (the ± of a headline's ratio and of bench compare's change is half a range too)"})
	}
	if none {
		text := "no figure: the proxy cannot do the mode, or no run of it was ok"
		if t.Kind == "latency" {
			text = "no figure: the load tool gives none, the proxy cannot do the mode, or no run of it was ok"
		} else if !Ranked(t) {
			text += "; no proxy has no proxy's CPU or memory to give"
		}
		out = append(out, legendItem{noValue, text})
	}
	if t.Kind == KindSweep {
		out = append(out, sweepLegend(t)...)
	}
	return out
}

// LegendHead introduces a table's legend.
const LegendHead = "Marks"

// writeLegend writes t's legend (legendOf) under it in markdown, a list
// item a mark: "- **bold**: the best median ...".
func writeLegend(w io.StringWriter, t Table, s spreadView) {
	items := LegendOf(t, s)
	if len(items) == 0 {
		return
	}
	w.WriteString(LegendHead + ":\n\n")
	for _, it := range items {
		mark := text.MarkdownText.Replace(strings.Replace(it.Mark, MarkBold, "**bold**", 1))
		w.WriteString("- " + mark + ": " + text.MarkdownText.Replace(it.Text) + "\n")
	}
	w.WriteString("\n")
}

// ClosedLine says which cells' errors, as the load tool counted them, are
// no failed exchange (results.Row.Closed), and how many; empty where none
// are.
func ClosedLine(t Table) string {
	var cells []string
	for _, r := range t.Rows {
		label, _, _ := strings.Cut(r.Label, ", ")
		for _, c := range r.Cells {
			if c.Closed > 0 {
				cells = append(cells, fmt.Sprintf("%s %s (%s of %s)", c.Proxy, label, text.Thousands(float64(c.Closed)), text.Plural(len(c.Runs), "run")))
			}
		}
	}
	if len(cells) == 0 {
		return ""
	}
	return "Not failed exchanges: wrk's read errors on connections the proxy closed after its answer, one an answer " +
		"(wrk sends its next request again on a new connection; a proxy that keeps no connection alive gives one each time), " +
		"which its notes count among its errors: " + strings.Join(cells, "; ") + "."
}

// NoFigureMix is the text of a mix or HTTPS request cell without an ok
// run, as the reference results' text has it; the markdown and the page
// print it noValue alone.
const NoFigureMix = noValue + " (" + noValue + "k/s)"

// ShownText is a cell's text as markdown and the page print it: a cell
// without a figure as noValue alone, not "– (–k/s)".
func ShownText(c Cell) string {
	if rest, ok := strings.CutPrefix(c.Text, NoFigureMix); ok {
		return noValue + rest
	}
	return c.Text
}

// Legend texts of the marks.
const (
	legendBound      = "most runs bound by the client or the origin"
	legendSweepBound = "most of the windows found bound by the client or the origin"
	LegendNoSplice   = "never spliced: the figure is a copying proxy's"
	LegendFailed     = "exchanges failed; over 1%, their part dashed"
)

// BoundLegend is the legend of t's ‡: what the mark says in its table.
func BoundLegend(t Table) string {
	if t.Kind == KindSweep {
		return legendSweepBound
	}
	return legendBound
}

// fewestRule is the marking rule's word on failures (markBest).
const fewestRule = "of the cells that failed the fewest of their exchanges (none, where one failed none)"

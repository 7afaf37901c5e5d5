package report

import (
	"fmt"
	"io"
	"strings"

	"bench/internal/text"
)

// legendItem is one mark of a table and what it says there.
type legendItem struct {
	mark string // as the table prints it: "*", "‡", "!12%"; bold for bold
	text string
}

// markBold is legendItem's mark of a figure in bold, which each format
// writes its own way.
const markBold = "\x00bold"

// legendOf is the legend of t: each mark its cells carry, once, in the
// order a cell prints them, with what it says in this table; withSpreads,
// the spread of the cells too ("±3% n=3"). Empty for a table with no
// mark.
func legendOf(t Table, s spreadView) []legendItem {
	var bold, star, bound, noSplice, failed, spread, none bool
	for _, r := range t.Rows {
		for _, c := range r.Cells {
			bold = bold || c.Bold
			star = star || c.Star
			bound = bound || c.Bound
			noSplice = noSplice || c.NoSplice
			failed = failed || erring(c)
			none = none || (c.Median == nil && strings.HasPrefix(c.Text, noValue))
			if short, _ := cellSpread(c); s == withSpreads && short != "" {
				spread = true
			}
		}
	}
	var out []legendItem
	starOnly := markingOf(t.Family) == markStarOnly
	switch {
	case bold && starOnly:
		out = append(out, legendItem{markBold + " *", "the best median of the row, and any other whose fastest run reaches the best one's slowest: they cannot be told apart"})
	case bold:
		out = append(out, legendItem{markBold, "the best median of its group in the row (the copying proxies, or the splicing ones after ‖), " +
			"and any other of the group whose fastest run reaches the best one's slowest: they cannot be told apart"})
	}
	if star && !starOnly {
		out = append(out, legendItem{"*", "the best of the row over both groups, by the same rule"})
	}
	if noSplice {
		out = append(out, legendItem{"†", strings.TrimSuffix(strings.TrimPrefix(noSpliceNote, "† "), ".")})
	}
	if bound {
		out = append(out, legendItem{"‡", boundLegend(t)})
	}
	if failed {
		out = append(out, legendItem{errorMark + "p%", fmt.Sprintf("p%% of the cell's exchanges failed (errors, timeouts, cut or wrong answers), more than %s: "+
			"its figure counts the answered ones alone", text.SharePercent(ErrorWarn))})
	}
	if spread {
		out = append(out, legendItem{"±p% n=r", "the furthest of the cell's r runs from its median is p% of it away"})
	}
	if none {
		text := "no figure: the proxy cannot do the mode, or no run of it was ok"
		if t.Kind == "latency" {
			text = "no figure: the load tool gives none, the proxy cannot do the mode, or no run of it was ok"
		} else if !ranked(t) {
			text += "; no proxy has no proxy's CPU or memory to give"
		}
		out = append(out, legendItem{noValue, text})
	}
	if t.Kind == kindSweep {
		out = append(out, sweepLegend(t)...)
	}
	return out
}

// legendHead introduces a table's legend.
const legendHead = "Marks"

// writeLegend writes t's legend (legendOf) under it in markdown, a list
// item a mark: "- **bold**: the best median ...".
func writeLegend(w io.StringWriter, t Table, s spreadView) {
	items := legendOf(t, s)
	if len(items) == 0 {
		return
	}
	w.WriteString(legendHead + ":\n\n")
	for _, it := range items {
		mark := text.MarkdownText.Replace(strings.Replace(it.mark, markBold, "**bold**", 1))
		w.WriteString("- " + mark + ": " + text.MarkdownText.Replace(it.text) + "\n")
	}
	w.WriteString("\n")
}

// closedLine says which cells' errors, as the load tool counted them, are
// no failed exchange (results.Row.Closed), and how many; empty where none
// are.
func closedLine(t Table) string {
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

// noFigureMix is the text of a mix or HTTPS request cell without an ok
// run, as the reference results' text has it; the markdown and the page
// print it noValue alone.
const noFigureMix = noValue + " (" + noValue + "k/s)"

// shownText is a cell's text as markdown and the page print it: a cell
// without a figure as noValue alone, not "– (–k/s)".
func shownText(c Cell) string {
	if rest, ok := strings.CutPrefix(c.Text, noFigureMix); ok {
		return noValue + rest
	}
	return c.Text
}

// Legend texts of the marks.
const (
	legendBound     = "most runs bound by the client or the origin"
	legendToolBound = "within 10% of no proxy's rate: the load tool's limit"
	legendNoSplice  = "never spliced: the figure is a copying proxy's"
	legendFailed    = "over 1% of exchanges failed: their part dashed"
)

// boundLegend is the legend of t's ‡: what the mark says in its table.
func boundLegend(t Table) string {
	if t.Kind == kindSweep {
		return legendToolBound
	}
	return legendBound
}

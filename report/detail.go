package report

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"bench/internal/text"
	"bench/results"
)

// The detail of the tables, which the page and the markdown have:
//   - a headline per row of each ranked table: the fastest column, its
//     ratio to the runner-up and to no proxy, and whether the difference
//     to the runner-up is real (decide, bench compare's rule);
//   - each median's spread and runs: "28.0 ±3% n=3";
//   - the summary of each family (summary.go) and bench's build in the
//     Setup table.
//
// The page always and the markdown with Options.Detail add a line of
// what the session ran, its failed runs and its runs with failed
// exchanges, and the command line in the Setup table.
//
// Every format has the ! mark and share of a cell whose exchanges failed
// beyond ErrorWarn; markdown and the page have the runs' notes grouped
// by cell (groupNotes) and each table's legend (legend.go).

// ErrorWarn is the share of a cell's exchanges that failed (errors and
// timeouts less results.Row.Closed) beyond which the cell is failing:
// its ! mark in full on the page, its failures drawn on its bar, the
// headlines and the summary naming it. Every cell with a failed exchange
// carries the ! mark and the share.
const ErrorWarn = 0.01

// ErrorMark is the mark of a cell with failed exchanges, which their
// share follows: "1.0 (1.0k/s) !77%".
const ErrorMark = "!"

// errorShare is the share of the runs' exchanges that failed (errors,
// timeouts, cut or wrong answers: results.Row.Failures): failed /
// (answered + failed), summed over the runs; nil where none did.
func errorShare(runs []*results.Row) *float64 {
	var bad, all int64
	for _, r := range runs {
		f := r.Failures()
		bad += f
		all += r.Requests + f
	}
	if bad == 0 {
		return nil
	}
	s := float64(bad) / float64(all)
	return &s
}

// closedCount is how many of the runs' errors are no failure
// (results.Row.Closed): reads on connections the proxy closed after its
// answer.
func closedCount(runs []*results.Row) int64 {
	var n int64
	for _, r := range runs {
		n += r.Closed()
	}
	return n
}

// FailureText is the mark of a cell with failed exchanges with their
// share, "!77%", "!0.3%", below 0.1% to its first significant digit,
// "!0.002%"; empty for a cell where none failed. The page sets it lighter
// within ErrorWarn.
func FailureText(c Cell) string {
	if c.ErrorShare == nil || *c.ErrorShare <= 0 {
		return ""
	}
	if p := *c.ErrorShare * 100; p < 0.095 {
		return ErrorMark + strconv.FormatFloat(p, 'f', int(math.Ceil(-math.Log10(p))), 64) + "%"
	}
	return ErrorMark + text.SharePercent(*c.ErrorShare)
}

// failedShare is the share of c's exchanges that failed, 0 for none.
func failedShare(c Cell) float64 {
	if c.ErrorShare == nil {
		return 0
	}
	return *c.ErrorShare
}

// Erring reports whether a cell is failing: beyond ErrorWarn.
func Erring(c Cell) bool { return c.ErrorShare != nil && *c.ErrorShare > ErrorWarn }

// CellSpread is what the detail adds to a cell with two runs or more:
// half the range of its runs (slowest to fastest), relative to the
// median, and their number, "±3% n=3", the ± of a headline's ratio and
// of bench compare's change, half the width of a range from the runs'
// extremes; and a longer form, "3 runs: 27.1 to 28.9". Empty for a cell
// with fewer.
func CellSpread(c Cell) (short, long string) {
	if c.Median == nil || len(c.Runs) < 2 || *c.Median == 0 {
		return "", ""
	}
	m := *c.Median
	lo, hi := slices.Min(c.Runs), slices.Max(c.Runs)
	dev := (hi - lo) / 2 / math.Abs(m)
	return fmt.Sprintf("±%s n=%d", text.SharePercent(dev), len(c.Runs)),
		fmt.Sprintf("%d runs: %s to %s", len(c.Runs), ThreeFigures(lo), ThreeFigures(hi))
}

// detailSuffix is what the detail writes after a cell's text: its
// spread, " ±3% n=3".
func detailSuffix(c Cell) string {
	if short, _ := CellSpread(c); short != "" {
		return " " + short
	}
	return ""
}

// ThreeFigures formats a figure with three figures or so, as millis does.
func ThreeFigures(v float64) string { return Millis(v) }

// GroupedNotesHead introduces the grouped notes.
const GroupedNotesHead = "Notes of the runs counted, by cell (a range where the cell's runs differ; " +
	"a note of several cells once with them)"

// runNote is an ok run's note, with the cell it is of.
type runNote struct{ proxy, load, text string }

// noteNumber is a number in a note's text; noteFigures keeps those that
// stand alone, not a part of a name (TLSv1.3, TLS_AES_128_GCM_SHA256,
// X25519).
var noteNumber = regexp.MustCompile(`[0-9]+(?:\.[0-9]+)?`)

// noteFigures are the figures of a note's part, where they stand in it:
// the numbers noteNumber finds that no letter, digit, '_' or '.' touches.
func noteFigures(text string) [][]int {
	word := func(c byte) bool {
		return c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	var out [][]int
	for _, m := range noteNumber.FindAllStringIndex(text, -1) {
		if (m[0] > 0 && word(text[m[0]-1])) || (m[1] < len(text) && word(text[m[1]])) {
			continue
		}
		out = append(out, m)
	}
	return out
}

// notePart is one part of a cell's notes (a note split at "; "): its
// text between its figures, and each figure over the cell's runs.
type notePart struct {
	pieces  []string   // the text around the figures, one more than them
	figures [][]string // each figure as each run wrote it
}

// text is the part with each figure intact where the runs agree on it,
// and as the range of theirs where they differ: "14913–18083 errors".
func (p *notePart) text() string {
	var b strings.Builder
	for i, piece := range p.pieces {
		b.WriteString(piece)
		if i == len(p.figures) {
			break
		}
		fs := p.figures[i]
		lo, hi := fs[0], fs[0]
		val := func(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v }
		for _, f := range fs[1:] {
			if val(f) < val(lo) {
				lo = f
			}
			if val(f) > val(hi) {
				hi = f
			}
		}
		b.WriteString(lo)
		if val(hi) != val(lo) {
			b.WriteString("–" + hi)
		}
	}
	return b.String()
}

// GroupNotes groups the runs' notes by cell: each note is split into its
// parts (at "; " outside parentheses), and the parts of a cell's runs
// that differ in their figures alone are one, each figure intact or the
// range of the runs' ("14913–18083 errors and 0 timeouts beside
// 14933–18085 completed exchanges"). A part that reads the same in
// several cells is a line with the cells it is of ("9950 of 20000
// connections, ... — nginx mix-http; squid mix-http"); a cell's other
// parts are a line of its own ("tinyproxy ka-1k: ...").
func GroupNotes(notes []runNote) []string {
	type cell struct{ proxy, load string }
	type cellParts struct {
		cell  cell
		keys  []string
		parts map[string]*notePart
	}
	var cells []*cellParts
	byCell := map[cell]*cellParts{}
	for _, n := range notes {
		k := cell{n.proxy, n.load}
		cp := byCell[k]
		if cp == nil {
			cp = &cellParts{cell: k, parts: map[string]*notePart{}}
			byCell[k] = cp
			cells = append(cells, cp)
		}
		for _, text := range splitNote(n.text) {
			figs := noteFigures(text)
			var pieces, values []string
			last := 0
			for _, m := range figs {
				pieces = append(pieces, text[last:m[0]])
				values = append(values, text[m[0]:m[1]])
				last = m[1]
			}
			pieces = append(pieces, text[last:])
			key := strings.Join(pieces, "\x00")
			p := cp.parts[key]
			if p == nil {
				p = &notePart{pieces: pieces, figures: make([][]string, len(values))}
				cp.parts[key] = p
				cp.keys = append(cp.keys, key)
			}
			for i, v := range values {
				p.figures[i] = append(p.figures[i], v)
			}
		}
	}
	// each part's text, and the cells that have it
	type line struct {
		text  string
		cells []string
	}
	var shared []*line
	byText := map[string]*line{}
	texts := make([][]string, len(cells))
	for i, cp := range cells {
		name := cp.cell.proxy + " " + cp.cell.load
		for _, k := range cp.keys {
			t := cp.parts[k].text()
			texts[i] = append(texts[i], t)
			l := byText[t]
			if l == nil {
				l = &line{text: t}
				byText[t] = l
				shared = append(shared, l)
			}
			l.cells = append(l.cells, name)
		}
	}
	var out []string
	for _, l := range shared {
		if len(l.cells) > 1 {
			out = append(out, l.text+" — "+strings.Join(l.cells, "; "))
		}
	}
	for i, cp := range cells {
		var own []string
		for _, t := range texts[i] {
			if len(byText[t].cells) == 1 {
				own = append(own, t)
			}
		}
		if len(own) > 0 {
			out = append(out, cp.cell.proxy+" "+cp.cell.load+": "+strings.Join(own, "; "))
		}
	}
	return out
}

// splitNote splits a note at "; " outside parentheses.
func splitNote(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ';':
			if depth == 0 && strings.HasPrefix(s[i:], "; ") {
				out = append(out, s[start:i])
				start = i + 2
			}
		}
	}
	return append(out, s[start:])
}

// sessionSummary is the line that opens a session in the detail: its
// machines, what ran, and how many runs failed. A sweep's search counts
// as a run, by the window it found (SearchResults): the tables' cells,
// not the steps between.
func sessionSummary(id string, rows []results.Row, files []results.SessionFile) string {
	var machines, cols []string
	scenarios := map[string]bool{}
	runs, failed, reps := 0, 0, 0
	erred, beyond := 0, 0 // ok runs with failed exchanges, and beyond ErrorWarn of theirs
	searches, windows := 0, 0
	var own []results.Row
	for _, r := range rows {
		if r.Session == id {
			own = append(own, r)
			if r.Load == results.LoadSweep {
				windows++
			}
		}
	}
	for _, r := range SearchResults(own) {
		runs++
		if r.Load == results.LoadSweep {
			searches++
		}
		if r.Status != results.OK {
			failed++
		} else if f := r.Failures(); f > 0 {
			erred++
			if float64(f) > ErrorWarn*float64(f+r.Requests) {
				beyond++
			}
		}
		reps = max(reps, r.Rep)
		scenarios[results.ScenarioName(r.Mode, r.Load)] = true
		if !slices.Contains(machines, r.Machine) {
			machines = append(machines, r.Machine)
		}
		if !slices.Contains(cols, r.Proxy) {
			cols = append(cols, r.Proxy)
		}
	}
	for i, m := range machines {
		for _, f := range files {
			if f.Meta != nil && f.Meta.Session == id && f.Meta.Machine.Label == m {
				if c := cpusAndMemory(f.Meta.Machine); c != "" {
					machines[i] += " (" + c + ")"
				}
				break
			}
		}
	}
	method := fmt.Sprintf("up to %d repetitions", reps)
	for _, f := range files {
		if m := f.Meta; m != nil && m.Session == id && m.Reps > 0 {
			method = fmt.Sprintf("%d repetitions of %s after %s of warm-up", m.Reps, time.Duration(m.Window), time.Duration(m.Warmup))
			break
		}
	}
	exchanges := "none with a failed exchange"
	if erred > 0 {
		exchanges = fmt.Sprintf("%d with failed exchanges, %d of them in more than %s of theirs", erred, beyond, text.SharePercent(ErrorWarn))
	}
	ran := fmt.Sprintf("%d runs, %d failed", runs, failed)
	if searches > 0 {
		ran = fmt.Sprintf("%d runs, %d of them searches for a sustainable rate (%s, each counted by the window it found), %d failed or found none",
			runs, searches, text.Plural(windows, "window"), failed)
	}
	return fmt.Sprintf("On %s: %d scenarios, %d columns (%s), %s: %s, %s.",
		strings.Join(machines, "; "), len(scenarios), len(cols), strings.Join(cols, ", "), method, ran, exchanges)
}

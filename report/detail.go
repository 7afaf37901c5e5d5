package report

import (
	"bench/report/results"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The detail of the tables, which the page always has and the text
// formats have with Options.Detail (the default markdown is the
// reference results' layout, without it):
//   - a headline per row of each ranked table: the fastest column, its
//     ratio to the runner-up and to no proxy, and whether the difference
//     to the runner-up is real (decide, bench compare's rule);
//   - each median's spread and runs: "28.0 ±3% n=3";
//   - the ! mark on a cell whose runs had errors or timeouts beyond
//     ErrorWarn of their exchanges;
//   - the runs' notes grouped: one line per note with the cells it is of;
//   - a line of what the session ran, and bench's build and the command
//     line in the Setup table.

// ErrorWarn is the share of a cell's exchanges that errored or timed out
// beyond which the cell carries the ! mark.
const ErrorWarn = 0.01

// errorMark is the mark of a cell beyond ErrorWarn, and its footnote.
const (
	errorMark     = "!"
	errorMarkNote = "! errors or timeouts in more than 1% of the cell's exchanges, counted with its answered ones: " +
		"its figure counts exchanges that did not all go well (the notes say how many)."
)

// errorShare is the share of the runs' exchanges that errored or timed
// out: (errors + timeouts) / (completed + errors + timeouts), summed over
// the runs; nil where none did.
func errorShare(runs []*results.Row) *float64 {
	var bad, all int64
	for _, r := range runs {
		bad += r.Errors + r.Timeouts
		all += r.Requests + r.Errors + r.Timeouts
	}
	if bad == 0 {
		return nil
	}
	s := float64(bad) / float64(all)
	return &s
}

// erring reports whether a cell carries the ! mark.
func erring(c Cell) bool { return c.ErrorShare != nil && *c.ErrorShare > ErrorWarn }

// hasErring reports whether any cell of t carries the ! mark.
func hasErring(t Table) bool {
	for _, r := range t.Rows {
		if slices.ContainsFunc(r.Cells, erring) {
			return true
		}
	}
	return false
}

// cellSpread is what the detail adds to a cell with two runs or more:
// the furthest of its runs from the median, relative to it, and their
// number, "±3% n=3"; and a longer form, "3 runs: 27.1 to 28.9". Empty
// for a cell with fewer.
func cellSpread(c Cell) (short, long string) {
	if c.Median == nil || len(c.Runs) < 2 || *c.Median == 0 {
		return "", ""
	}
	m := *c.Median
	lo, hi := slices.Min(c.Runs), slices.Max(c.Runs)
	dev := max(hi-m, m-lo) / math.Abs(m)
	return fmt.Sprintf("±%s n=%d", sharePercent(dev), len(c.Runs)),
		fmt.Sprintf("%d runs: %s to %s", len(c.Runs), threeFigures(lo), threeFigures(hi))
}

// detailSuffix is what the detail writes after a cell's text: its !
// mark and its spread, " ! ±3% n=3".
func detailSuffix(c Cell) string {
	var s string
	if erring(c) {
		s += " " + errorMark
	}
	if short, _ := cellSpread(c); short != "" {
		s += " " + short
	}
	return s
}

// sharePercent formats a share as a percentage, a decimal below 1%: 0.034
// -> "3%", 0.004 -> "0.4%".
func sharePercent(v float64) string {
	if v*100 < 0.95 {
		return fixed(v*100, 1) + "%"
	}
	return percent(v)
}

// threeFigures formats a figure with three figures or so, as millis does.
func threeFigures(v float64) string { return millis(v) }

// Headline is the answer of a row of a ranked table: its fastest column,
// how much faster than the runner-up and than no proxy, and whether the
// difference to the runner-up is real.
type Headline struct {
	Label   string `json:"label"`
	Fastest string `json:"fastest"`
	// RunnerUp is the next column by median, empty where the row has no
	// other proxy; Ratio the fastest's median over its, Err the ratio's
	// uncertainty from the two cells' ranges.
	RunnerUp string  `json:"runner_up,omitempty"`
	Ratio    float64 `json:"ratio,omitempty"`
	Err      float64 `json:"err,omitempty"`
	// Real: the two can be told apart, by Test (TestU or TestRange), as
	// bench compare decides; P is the U test's.
	Real bool     `json:"real"`
	Test string   `json:"test,omitempty"`
	P    *float64 `json:"p,omitempty"`
	// Baseline is no proxy's column, empty where the row has none; the
	// fastest's median over its, and the ratio's uncertainty.
	Baseline     string  `json:"baseline,omitempty"`
	BaseRatio    float64 `json:"base_ratio,omitempty"`
	BaseRatioErr float64 `json:"base_ratio_err,omitempty"`
}

// headlined reports whether t's rows get headlines: a ranked table whose
// columns are the proxies of one machine (not a tunnel's directions, nor
// the combined layout's averages over machines).
func headlined(t Table) bool {
	return ranked(t) && t.Family != famTunnel && t.Family != famHandshake && t.Family != famCombined
}

// Headlines are the headlines of t's rows that have a fastest proxy and
// something to set it against.
func Headlines(t Table) []Headline {
	if !headlined(t) {
		return nil
	}
	var out []Headline
	for _, r := range t.Rows {
		var proxies []Cell
		var base *Cell
		for i, c := range r.Cells {
			switch {
			case c.Median == nil || len(c.Runs) == 0:
			case c.Group == results.Baseline:
				base = &r.Cells[i]
			default:
				proxies = append(proxies, c)
			}
		}
		slices.SortStableFunc(proxies, func(a, b Cell) int {
			switch {
			case *a.Median > *b.Median:
				return -1
			case *a.Median < *b.Median:
				return 1
			}
			return 0
		})
		if len(proxies) == 0 || (len(proxies) == 1 && base == nil) {
			continue
		}
		h := Headline{Label: r.Label, Fastest: proxies[0].Proxy}
		if len(proxies) > 1 {
			h.RunnerUp = proxies[1].Proxy
			h.Ratio, h.Err = ratio(proxies[0], proxies[1])
			h.Real, h.Test, h.P = Decide(proxies[1].Runs, proxies[0].Runs)
		}
		if base != nil {
			h.Baseline = base.Proxy
			h.BaseRatio, h.BaseRatioErr = ratio(proxies[0], *base)
		}
		out = append(out, h)
	}
	return out
}

// ratio is a's median over b's, and its uncertainty as hyperfine gives
// it, with half of each cell's range in place of the standard deviation.
func ratio(a, b Cell) (float64, float64) {
	ma, mb := *a.Median, *b.Median
	if mb == 0 {
		return math.Inf(1), 0
	}
	half := func(c Cell, m float64) float64 {
		if m == 0 {
			return 0
		}
		return (slices.Max(c.Runs) - slices.Min(c.Runs)) / 2 / m
	}
	q := ma / mb
	return q, q * math.Hypot(half(a, ma), half(b, mb))
}

// String is the headline as the page and the markdown print it:
// "ka-1k, k req/s: nginx: 1.23 ± 0.05 times haproxy (real, range),
// 0.81 ± 0.02 times no proxy".
func (h Headline) String() string {
	times := func(q, e float64, of string) string {
		s := fixed(q, 2)
		if e >= 0.005 {
			s += " ± " + fixed(e, 2)
		}
		return s + " times " + of
	}
	var parts []string
	if h.RunnerUp != "" {
		v := "within noise, " + h.Test
		switch {
		case h.Test == TestOneRun:
			v = "one run: no spread to tell it from noise"
		case h.Real:
			v = "real, " + h.Test
		}
		if h.P != nil {
			v += " p=" + strconv.FormatFloat(*h.P, 'f', 3, 64)
		}
		parts = append(parts, times(h.Ratio, h.Err, h.RunnerUp)+" ("+v+")")
	}
	if h.Baseline != "" {
		parts = append(parts, times(h.BaseRatio, h.BaseRatioErr, h.Baseline))
	}
	return h.Label + ": " + h.Fastest + ": " + strings.Join(parts, ", ")
}

// headlineNote says how the headlines read, under them.
const headlineNote = "Fastest of each row by median; ± from the two cells' ranges (slowest to fastest run); " +
	"real or within noise to the runner-up as bench compare decides it (U test where there are runs enough, " +
	"else range: real when their runs' ranges do not overlap; nothing where a cell has one run)."

// groupedNotesHead introduces the grouped notes.
const groupedNotesHead = "Notes of the runs counted, each once with its cells (n: a number that differs between runs; " +
	"each cell's range of it in parentheses)"

// runNote is an ok run's note, with the cell it is of.
type runNote struct{ proxy, load, text string }

// noteNumber is a number in a note, which the grouping leaves out.
var noteNumber = regexp.MustCompile(`[0-9]+(?:\.[0-9]+)?`)

// notePart is one part of grouped notes: its text with the numbers that
// differ between runs as n, and the cells it is of with their numbers.
type notePart struct {
	pieces []string    // the text between the numbers
	first  []string    // the numbers as the first run wrote them
	values [][]float64 // each number over every run
	cells  []noteCell
}

type noteCell struct {
	proxy, load string
	values      [][]float64 // each number over the cell's runs
}

// groupNotes groups the runs' notes: each note is split into its parts
// (at "; " outside parentheses), and parts that differ in their numbers
// alone are one, listed once with the cells they are of. A number that
// is the same in every run stays in the text; the others are n, and
// each cell gives their range over its runs: "n errors and 0 timeouts
// beside n completed exchanges: tinyproxy ka-1k (53319–54830 /
// 53320–54837)".
func groupNotes(notes []runNote) []string {
	var parts []*notePart
	byKey := map[string]*notePart{}
	for _, n := range notes {
		for _, text := range splitNote(n.text) {
			key := noteNumber.ReplaceAllString(text, "\x00")
			p := byKey[key]
			if p == nil {
				p = &notePart{pieces: noteNumber.Split(text, -1), first: noteNumber.FindAllString(text, -1)}
				byKey[key] = p
				parts = append(parts, p)
			}
			nums := noteNumber.FindAllString(text, -1)
			i := slices.IndexFunc(p.cells, func(c noteCell) bool { return c.proxy == n.proxy && c.load == n.load })
			if i < 0 {
				p.cells = append(p.cells, noteCell{proxy: n.proxy, load: n.load, values: make([][]float64, len(nums))})
				i = len(p.cells) - 1
			}
			if p.values == nil {
				p.values = make([][]float64, len(nums))
			}
			for j, s := range nums {
				v, _ := strconv.ParseFloat(s, 64)
				p.values[j] = append(p.values[j], v)
				p.cells[i].values[j] = append(p.cells[i].values[j], v)
			}
		}
	}
	out := make([]string, len(parts))
	for i, p := range parts {
		var b strings.Builder
		var varying []int
		for j, piece := range p.pieces {
			b.WriteString(piece)
			if j == len(p.values) {
				break
			}
			if slices.Min(p.values[j]) == slices.Max(p.values[j]) {
				b.WriteString(p.first[j])
			} else {
				b.WriteString("n")
				varying = append(varying, j)
			}
		}
		cells := make([]string, len(p.cells))
		for k, c := range p.cells {
			cells[k] = c.proxy + " " + c.load
			var ranges []string
			for _, j := range varying {
				lo, hi := slices.Min(c.values[j]), slices.Max(c.values[j])
				r := strconv.FormatFloat(lo, 'f', -1, 64)
				if hi != lo {
					r += "–" + strconv.FormatFloat(hi, 'f', -1, 64)
				}
				ranges = append(ranges, r)
			}
			if len(ranges) > 0 {
				cells[k] += " (" + strings.Join(ranges, " / ") + ")"
			}
		}
		out[i] = b.String() + " — " + strings.Join(cells, "; ")
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
// machines, what ran, and how many runs failed.
func sessionSummary(id string, rows []results.Row, files []results.SessionFile) string {
	var machines, cols []string
	scenarios := map[string]bool{}
	runs, failed, reps := 0, 0, 0
	for _, r := range rows {
		if r.Session != id {
			continue
		}
		runs++
		if r.Status != results.OK {
			failed++
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
	return fmt.Sprintf("On %s: %d scenarios, %d columns (%s), %s: %d runs, %d failed.",
		strings.Join(machines, "; "), len(scenarios), len(cols), strings.Join(cols, ", "), method, runs, failed)
}

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
// timeouts less results.Row.Closed) beyond which the cell carries the !
// mark and the share.
const ErrorWarn = 0.01

// ErrorMark is the mark of a cell beyond ErrorWarn, which its share of
// failed exchanges follows: "1.0 (1.0k/s) !77%".
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

// FailureText is the mark of a cell beyond ErrorWarn with its share,
// "!77%"; empty for another.
func FailureText(c Cell) string {
	if !Erring(c) {
		return ""
	}
	return ErrorMark + text.SharePercent(*c.ErrorShare)
}

// Erring reports whether a cell carries the ! mark.
func Erring(c Cell) bool { return c.ErrorShare != nil && *c.ErrorShare > ErrorWarn }

// CellSpread is what the detail adds to a cell with two runs or more:
// the furthest of its runs from the median, relative to it, and their
// number, "±3% n=3"; and a longer form, "3 runs: 27.1 to 28.9". Empty
// for a cell with fewer.
func CellSpread(c Cell) (short, long string) {
	if c.Median == nil || len(c.Runs) < 2 || *c.Median == 0 {
		return "", ""
	}
	m := *c.Median
	lo, hi := slices.Min(c.Runs), slices.Max(c.Runs)
	dev := max(hi-m, m-lo) / math.Abs(m)
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

// Headline is the answer of a row of a ranked table: its fastest column,
// how much faster than the runner-up and than no proxy, and whether the
// difference to the runner-up is real. A row of a fixed-rate load
// (results.FixedRate), where every healthy proxy delivers the rate
// asked, ranks by its p99 latency instead, lowest first, among the cells
// that failed no more than ErrorWarn of their exchanges; those that did
// are named apart.
type Headline struct {
	Label   string `json:"label"`
	Fastest string `json:"fastest"`
	// Metric is what the row ranks by: empty for its figure (higher is
	// better), MetricP99 at a fixed rate (lower is better); Value the
	// fastest's p99 there, in milliseconds.
	Metric string  `json:"metric,omitempty"`
	Value  float64 `json:"value,omitempty"`
	// RunnerUp is the next column by median, empty where the row has no
	// other proxy; Ratio the fastest's median over its, Err the ratio's
	// uncertainty from the two cells' ranges.
	RunnerUp string  `json:"runner_up,omitempty"`
	Ratio    float64 `json:"ratio,omitempty"`
	Err      float64 `json:"err,omitempty"`
	// Real: the two can be told apart, by Test (TestU or TestRange), as
	// bench compare decides, and the ratio's interval excludes no change
	// (Ratio ± Err does not reach 1); Wide where the test told them
	// apart but the interval reaches 1. P is the U test's.
	Real bool     `json:"real"`
	Wide bool     `json:"wide,omitempty"`
	Test string   `json:"test,omitempty"`
	P    *float64 `json:"p,omitempty"`
	// Baseline is no proxy's column, empty where the row has none; the
	// fastest's median over its, and the ratio's uncertainty.
	Baseline     string  `json:"baseline,omitempty"`
	BaseRatio    float64 `json:"base_ratio,omitempty"`
	BaseRatioErr float64 `json:"base_ratio_err,omitempty"`
	// Beyond says why the fastest beat no proxy, where it did
	// (beyondBaseline); empty where it did not.
	Beyond string `json:"beyond_baseline,omitempty"`
	// Failing are the cells of a fixed-rate row left out of its ranking,
	// having failed more than ErrorWarn of their exchanges: "squid !62%".
	Failing []string `json:"failing,omitempty"`
}

// Headlined reports whether t's rows get headlines: a ranked table whose
// columns are the proxies of one machine (not a tunnel's directions, nor
// the combined layout's averages over machines).
func Headlined(t Table) bool {
	return Ranked(t) && t.Family != FamTunnel && t.Family != FamHandshake && t.Family != famCombined
}

// rowLoad is the load of a row's runs, empty where none of its cells has
// one.
func rowLoad(r TableRow) string {
	for _, c := range r.Cells {
		if len(c.IDs) > 0 {
			return c.IDs[0].Load
		}
	}
	return ""
}

// ranking is what a row's headline ranks its cells by.
type ranking int

const (
	byFigure ranking = iota // the cells' figures, higher is better
	byP99                   // at a fixed rate, the cells' p99, lower is better
)

// rankingOf is the ranking of the rows of load.
func rankingOf(load string) ranking {
	if results.FixedRate(load) {
		return byP99
	}
	return byFigure
}

// rankedBy is what a headline ranks a cell by, as rank says: its figure
// or its p99 (its median and its runs'); ok false for a cell that takes
// no part.
func rankedBy(c Cell, rank ranking) (m float64, runs []float64, ok bool) {
	if rank == byP99 {
		if c.P99 == nil || len(c.p99s) == 0 {
			return 0, nil, false
		}
		return *c.P99, c.p99s, true
	}
	if c.Median == nil || len(c.Runs) == 0 {
		return 0, nil, false
	}
	return *c.Median, c.Runs, true
}

// Headlines are the headlines of t's rows that have a fastest proxy and
// something to set it against.
func Headlines(t Table) []Headline {
	if !Headlined(t) {
		return nil
	}
	type ranking struct {
		c    Cell
		m    float64
		runs []float64
	}
	var out []Headline
	for _, r := range t.Rows {
		load := rowLoad(r)
		rank := rankingOf(load)
		fixedRate := rank == byP99
		var proxies []ranking
		var base *ranking
		var failing []string
		for _, c := range r.Cells {
			m, runs, ok := rankedBy(c, rank)
			switch {
			case fixedRate && Erring(c):
				failing = append(failing, c.Proxy+" "+FailureText(c))
			case !ok:
			case c.Group == results.Baseline:
				base = &ranking{c, m, runs}
			default:
				proxies = append(proxies, ranking{c, m, runs})
			}
		}
		slices.SortStableFunc(proxies, func(a, b ranking) int {
			if fixedRate {
				a, b = b, a // the lowest latency first
			}
			switch {
			case a.m > b.m:
				return -1
			case a.m < b.m:
				return 1
			}
			return 0
		})
		if len(proxies) == 0 || (len(proxies) == 1 && base == nil && len(failing) == 0) {
			continue
		}
		first := proxies[0]
		h := Headline{Label: r.Label, Fastest: first.c.Proxy, Failing: failing}
		if fixedRate {
			h.Metric, h.Value = MetricP99, first.m
		}
		if len(proxies) > 1 {
			next := proxies[1]
			h.RunnerUp = next.c.Proxy
			h.Ratio, h.Err = ratio(first.m, first.runs, next.m, next.runs)
			h.Real, h.Test, h.P = Decide(next.runs, first.runs)
			if h.Real && math.Abs(h.Ratio-1) <= h.Err {
				h.Real, h.Wide = false, true
			}
		}
		if base != nil {
			h.Baseline = base.c.Proxy
			h.BaseRatio, h.BaseRatioErr = ratio(first.m, first.runs, base.m, base.runs)
			if better := h.BaseRatio > 1 != fixedRate; better && h.BaseRatio != 1 {
				h.Beyond = beyondBaseline(load, base.c, h.BaseRatio, h.BaseRatioErr)
			}
		}
		out = append(out, h)
	}
	return out
}

// beyondBaseline says why a proxy beat no proxy by q ± e in a row of
// load, where base is no proxy's cell: within the ±, no change; no
// proxy's runs paced by the client or the origin (they share CPUs, and
// without a proxy they had the more work); a load that opens a
// connection for each exchange, which a proxy keeps open to the origin;
// else what the files do not explain.
func beyondBaseline(load string, base Cell, q, e float64) string {
	switch {
	case math.Abs(q-1) <= e:
		return "faster than no proxy within the ±: no change"
	case base.pace.Elsewhere():
		return "faster than no proxy: the " + string(base.pace) + " set the pace of no proxy's runs"
	case strings.HasPrefix(load, "close"):
		return "faster than no proxy: it keeps its connections to the origin open, where without it each exchange opens one"
	}
	return "faster than no proxy beyond the ±, which neither the runs' pace nor the load explains"
}

// ratio is a over b, the medians of the runs ra and rb, and its
// uncertainty as hyperfine gives it, with half of each cell's range in
// place of the standard deviation.
func ratio(a float64, ra []float64, b float64, rb []float64) (float64, float64) {
	if b == 0 {
		return math.Inf(1), 0
	}
	half := func(runs []float64, m float64) float64 {
		if m == 0 {
			return 0
		}
		return (slices.Max(runs) - slices.Min(runs)) / 2 / m
	}
	q := a / b
	return q, q * math.Hypot(half(ra, a), half(rb, b))
}

// String is the headline as the page and the markdown print it:
// "ka-1k, k req/s: nginx: 1.23 ± 0.05 times haproxy (real, range),
// 0.81 ± 0.02 times no proxy"; at a fixed rate "mix-http-3k, p99 at
// its fixed rate: nginx: 4.10 ms, 0.52 ± 0.10 times haproxy's (real,
// range); failed more than 1% of their exchanges: squid !62%".
func (h Headline) String() string {
	times := func(q, e float64, of string) string {
		s := text.Fixed(q, 2)
		if e >= 0.005 {
			s += " ± " + text.Fixed(e, 2)
		}
		if h.Metric != "" {
			of += "'s"
		}
		return s + " times " + of
	}
	label, parts := h.Label, []string(nil)
	if h.Metric != "" {
		label += ", " + h.Metric + " at its fixed rate"
		parts = append(parts, Millis(h.Value)+" ms")
	}
	if h.RunnerUp != "" {
		v := "within noise, " + h.Test
		switch {
		case h.Test == TestOneRun:
			v = "one run: no spread to tell it from noise"
		case h.Real:
			v = "real, " + h.Test
		case h.Wide:
			v = "within noise: the ± reaches no change, though " + h.Test + " tells them apart"
		}
		if h.P != nil {
			v += " p=" + strconv.FormatFloat(*h.P, 'f', 3, 64)
		}
		parts = append(parts, times(h.Ratio, h.Err, h.RunnerUp)+" ("+v+")")
	}
	if h.Baseline != "" {
		b := times(h.BaseRatio, h.BaseRatioErr, h.Baseline)
		if h.Beyond != "" {
			b += " (" + h.Beyond + ")"
		}
		parts = append(parts, b)
	}
	s := label + ": " + h.Fastest + ": " + strings.Join(parts, ", ")
	if len(h.Failing) > 0 {
		s += "; failed more than " + text.SharePercent(ErrorWarn) + " of their exchanges: " + strings.Join(h.Failing, ", ")
	}
	return s
}

// HeadlineNote says how the headlines read, under them.
const HeadlineNote = "Fastest of each row by median (at a fixed rate, the lowest p99 of the cells that failed no more than 1% of their exchanges: " +
	"every healthy proxy delivers the rate asked); ± from the two cells' ranges (slowest to fastest run); " +
	"real to the runner-up as bench compare decides it (U test where there are runs enough, " +
	"else range: real when their runs' ranges do not overlap; nothing where a cell has one run) and only where the ± does not reach no change, " +
	"else within noise."

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
// machines, what ran, and how many runs failed.
func sessionSummary(id string, rows []results.Row, files []results.SessionFile) string {
	var machines, cols []string
	scenarios := map[string]bool{}
	runs, failed, reps := 0, 0, 0
	erred, beyond := 0, 0 // ok runs with failed exchanges, and beyond ErrorWarn of theirs
	for _, r := range rows {
		if r.Session != id {
			continue
		}
		runs++
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
	return fmt.Sprintf("On %s: %d scenarios, %d columns (%s), %s: %d runs, %d failed, %s.",
		strings.Join(machines, "; "), len(scenarios), len(cols), strings.Join(cols, ", "), method, runs, failed, exchanges)
}

package report

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"bench/internal/text"
	"bench/results"
)

// The sustainable rate: a sweep's rows (load results.LoadSweep) are the
// steps of a search, a repetition each, for the highest rate a column
// sustains within the session's bounds (results.Sweep's SLO). A search's
// result is the rate of its last confirming window that passed; the
// table's cell is the median of its repetitions' results, marked as the
// other tables mark theirs, ‡ where the client or the origin set the
// pace of most of the windows found. A search whose load failed at
// every rate (results.Step.Flat) found none, and its cell says so.

// KindSweep is the kind of the Sustainable rate table.
const KindSweep = "sustainable"

// noRate is the cell of a column none of whose searches found a rate.
const noRate = "none"

// minSearches is the fewest searches a cell needs for the marking rule
// to tell it apart from another: one search's rate has no spread, and
// 1.97 against 1.96 says nothing.
const minSearches = 2

// everyRate is the cell of a column whose searches all ended as its load
// failed at every rate.
const everyRate = "fails at every rate"

// Search is one repetition's search for a column's sustainable rate, as
// its steps' rows tell it.
type Search struct {
	Rep int `json:"rep"`
	// Rate is the rate its last confirming window that passed offered,
	// in exchanges a second; where none passed but one failed, the rate
	// of a search whose confirms all failed (results.Unconfirmed), and
	// Unconfirmed is set; null where it found no rate.
	Rate        *float64 `json:"rate_per_s"`
	Unconfirmed bool     `json:"unconfirmed,omitempty"`
	// Flat is a search ended by a load that failed at every rate, and
	// Cause what its last window's run says of why, where it says
	// (results.HalfCloseCause).
	Flat  bool   `json:"fails_at_every_rate,omitempty"`
	Cause string `json:"cause,omitempty"`
	// Stop is its last step that failed, the one that bounds the rate
	// from above (or, where it found none, says why); null where none
	// failed.
	Stop  *SearchStep  `json:"stop,omitempty"`
	Steps []SearchStep `json:"steps"`

	rows   []*results.Row // the steps' rows, in Steps' order
	result int            // the index of the confirming window found, -1 for none
	// unconfirmed is the index of the step whose rate is Rate where it
	// is not confirmed, -1 for none
	unconfirmed int
}

// SearchStep is a step of a search: a window at a fixed rate, whether it
// met the bounds, and which role set the pace in it.
type SearchStep struct {
	N       int           `json:"step"` // 0 for a confirming window
	Confirm bool          `json:"confirm,omitempty"`
	Offered float64       `json:"offered_per_s"` // exchanges a second
	Pass    bool          `json:"pass"`
	Flat    bool          `json:"fails_at_every_rate,omitempty"` // it ended the search: the load fails at every rate
	Why     string        `json:"why,omitempty"`                 // the bound it missed, or why its run failed
	Bound   results.Bound `json:"bound,omitempty"`
	// P50 and P99 are its latency in milliseconds, every exchange due
	// in its window; absent where its run gave none.
	P50 *float64 `json:"p50_ms,omitempty"`
	P99 *float64 `json:"p99_ms,omitempty"`
}

// stepOf is a sweep row's step. A run that failed failed its step
// whatever its note says; a note without a step (a row made by hand) is
// read as a step that failed for what the note says.
func stepOf(r *results.Row) SearchStep {
	st, ok, _ := results.ParseStep(r.Note)
	s := SearchStep{N: st.N, Confirm: st.Confirm, Offered: r.OfferedRate, Pass: ok && st.Pass && r.Status == results.OK,
		Flat: ok && st.Flat, Why: st.Why, Bound: r.Bound}
	if !ok {
		s.Why = noteOrNone(r.Note)
	}
	if !s.Pass && s.Why == "" {
		s.Why = "the run failed: " + noteOrNone(stepRest(r.Note))
	}
	if r.HasLatency {
		p50, p99 := r.P50Ms, r.P99Ms
		s.P50, s.P99 = &p50, &p99
	}
	return s
}

// stepRest is what a sweep row's note says after its step: the other
// notes of the run ("3 connections did not open").
func stepRest(note string) string {
	if _, ok, _ := results.ParseStep(note); !ok {
		return note
	}
	_, rest, _ := strings.Cut(note, "; ")
	return rest
}

// searchOf is the search of one repetition from its steps' rows, in the
// order they ran: by the start of their windows, then as they came; a row
// without a start (a step that could not be measured, written by a
// session from before it stamped them) last, as it ended its search.
func searchOf(rep int, rows []*results.Row) Search {
	rows = slices.Clone(rows)
	slices.SortStableFunc(rows, func(a, b *results.Row) int {
		switch az, bz := a.Started.IsZero(), b.Started.IsZero(); {
		case az == bz:
			return a.Started.Compare(b.Started)
		case az:
			return 1
		}
		return -1
	})
	s := Search{Rep: rep, Steps: make([]SearchStep, len(rows)), rows: rows, result: -1, unconfirmed: -1}
	var passed []float64
	lowest, confirmFailed := 0.0, false
	for i, r := range rows {
		st := stepOf(r)
		s.Steps[i] = st
		switch {
		case st.Confirm && st.Pass:
			rate := st.Offered
			s.Rate, s.result = &rate, i
		case st.Pass:
			passed = append(passed, st.Offered)
		default:
			s.Stop = &s.Steps[i]
			s.Flat = st.Flat
			if st.Flat {
				s.Cause, _ = results.HalfCloseCause(r.Note)
			}
			confirmFailed = confirmFailed || st.Confirm
			if lowest == 0 || st.Offered < lowest {
				lowest = st.Offered
			}
		}
	}
	// A search whose confirms all failed, and that ended as a search
	// does rather than by a failed run, has the rate of its highest pass
	// below them, not confirmed.
	if s.result < 0 && confirmFailed && !s.Flat && rows[len(rows)-1].Status == results.OK {
		if rate, ok := results.Unconfirmed(passed, lowest); ok {
			s.Rate, s.Unconfirmed = &rate, true
			s.unconfirmed = slices.IndexFunc(s.Steps, func(st SearchStep) bool { return st.Pass && !st.Confirm && st.Offered == rate })
		}
	}
	return s
}

// searchKey is a search among a session's rows: a cell's repetition on a
// machine (its steps' RunID without their step).
func searchKey(r *results.Row) results.RunID {
	id := r.ID()
	id.Step = ""
	return id
}

// RateText is a rate, in exchanges a second, as the notes and the charts
// print it: "4.38k/s".
func RateText(perSecond float64) string { return ThreeFigures(results.RateFigure(perSecond)) + "k/s" }

// hasSweep reports whether any of rows is a sweep's step.
func hasSweep(rows []results.Row) bool {
	for i := range rows {
		if rows[i].Load == results.LoadSweep {
			return true
		}
	}
	return false
}

// SearchResults are rows with each search's steps replaced by the row of
// its result, in the place of its first step: its confirming window that
// passed (whose figure, results.Row.Figure, is the rate found), or the step of a rate
// not confirmed noting so, or where it found none, its last step as a
// failed run noting why. It is what compare and
// the trends take for a sweep's runs. Rows without a sweep are rows
// themselves.
func SearchResults(rows []results.Row) []results.Row {
	if !hasSweep(rows) {
		return rows
	}
	out := make([]results.Row, 0, len(rows))
	at := map[results.RunID]int{} // the place of each search's result in out
	steps := map[results.RunID][]*results.Row{}
	for i := range rows {
		r := &rows[i]
		if r.Load != results.LoadSweep {
			out = append(out, *r)
			continue
		}
		k := searchKey(r)
		if _, ok := at[k]; !ok {
			at[k] = len(out)
			out = append(out, results.Row{})
		}
		steps[k] = append(steps[k], r)
	}
	for k, i := range at {
		s := searchOf(k.Rep, steps[k])
		if s.result >= 0 {
			out[i] = *s.rows[s.result]
			continue
		}
		if s.unconfirmed >= 0 {
			out[i] = *s.rows[s.unconfirmed]
			out[i].Note = "not confirmed: " + s.StopText()
			continue
		}
		out[i] = *s.rows[len(s.rows)-1]
		out[i].Status, out[i].Note = results.Failed, "no sustainable rate: "+s.StopText()
	}
	return out
}

// StopText says where the search stopped: its last failed step, at what
// rate, why, and the role that set the pace in it; "step 9 at 4.46k/s
// failed: p99 63.2 ms over 50 ms (bound: proxy)".
func (s Search) StopText() string {
	if s.Stop == nil {
		if s.Rate == nil {
			return "no step failed and none confirmed a rate (the search did not end)"
		}
		return "no step failed"
	}
	st := s.Stop
	if st.N == 0 && !st.Confirm {
		// no step's note: the search's own row, which could not start
		return "the search did not start: " + st.Why
	}
	what := fmt.Sprintf("step %d", st.N)
	if st.Confirm {
		what = "the confirming window"
	}
	verdict := "failed"
	if st.Flat {
		verdict = "failed, as at every rate"
	}
	t := fmt.Sprintf("%s at %s %s: %s", what, RateText(st.Offered), verdict, st.Why)
	if st.Bound != "" {
		t += " (bound: " + string(st.Bound) + ")"
	}
	if s.Cause != "" {
		t += "; " + s.Cause
	}
	return t
}

// String is the search in a cell's note: "rep 1: 4.38k/s; step 9 at
// 4.46k/s failed: ...", "rep 2: no rate; step 1 at 0.500k/s failed:
// ...".
func (s Search) String() string {
	found := "no rate"
	switch {
	case s.Rate != nil:
		found = RateText(*s.Rate)
	case s.Flat:
		found = "no rate, failing at every rate"
	}
	if s.Unconfirmed {
		found += " not confirmed"
	}
	return fmt.Sprintf("rep %d: %s; %s", s.Rep, found, s.StopText())
}

// sweepTable is the Sustainable rate table of a machine's sweeps: a row
// per mix mode, a cell per column, each the median of its repetitions'
// sustainable rates in k req/s, bold and * by the rule of the other
// tables, ‡ where the client or the origin set the pace of most of the
// windows found, "none" where no search found a rate ("fails at every
// rate" where each ended so), and under it each cell's searches: where
// each stopped and why. Where no proxy found no rate, or a lower one
// than a proxy's, a note says why that is no ceiling of the proxies'.
func sweepTable(machine string, rows []*results.Row) Table {
	g := newGrid(rows, func(r *results.Row) (string, string) {
		label := RowLabel(r.Mode, r.Load)
		return label, label
	}, nil)
	// the runs' notes, their steps left out: what else they noted
	g.notes, g.runs1 = nil, nil
	for _, r := range rows {
		if rest := stepRest(r.Note); r.Status == results.OK && rest != "" {
			noted := *r
			noted.Note = rest
			g.note(&noted, RowLabel(r.Mode, r.Load))
		}
	}
	steps := sweepSteps(rows)
	names, groups := g.header()
	t := Table{Family: FamSweep, Kind: KindSweep, Machine: machine, Session: rows[0].Session,
		Corner: "scenario (" + short(machine) + ")", Columns: names, Groups: groups, Failed: g.failed, Notes: g.notes, RunNotes: g.runs1,
		Caption: sweepCaption(nil)}
	for _, k := range g.keys {
		unit := results.UnitOf(g.modes[k], g.loads[k])
		cells := make([]Cell, len(g.cols))
		spreads := make([]*spread, len(g.cols))
		for i, c := range g.cols {
			var s Summary
			cells[i], s = sweepCell(c, steps[[2]string{k, c.proxy}])
			spreads[i] = newSpread(c.group, s)
		}
		if n, ok := baselineNote(cells, g.modes[k], RowLabel(g.modes[k], g.loads[k])); ok {
			// in the data, and among the cells' notes the page and the
			// markdown print
			t.Notes = append(t.Notes, n)
			t.RunNotes = append(t.RunNotes, runNote{proxy: n.Proxies[0], load: n.Loads[0], text: n.Text})
		}
		if tooFewSearches(cells) {
			for _, sp := range spreads {
				sp.eligible = false // no bold, no *
			}
		}
		markCells(cells, spreads, markGroups)
		t.Rows = append(t.Rows, TableRow{Label: unitLabel(k, unit), Cells: cells, Unit: unit})
	}
	return t
}

// sweepSteps are the steps of the sweeps' runs, ok or failed, by their
// row's label and column, then by repetition.
func sweepSteps(rows []*results.Row) map[[2]string]map[int][]*results.Row {
	steps := map[[2]string]map[int][]*results.Row{} // (scenario, proxy) -> rep -> its steps, ok or failed
	for _, r := range rows {
		k := [2]string{RowLabel(r.Mode, r.Load), r.Proxy}
		if steps[k] == nil {
			steps[k] = map[int][]*results.Row{}
		}
		steps[k][r.Rep] = append(steps[k][r.Rep], r)
	}
	return steps
}

// sweepCell is column c's cell of a Sustainable rate row, from the steps
// of each of its repetitions (reps): its searches in the order of the
// repetitions, and the median of the rates they found, with how many
// found one and how many were not confirmed; and the summary of those
// rates.
func sweepCell(c column, reps map[int][]*results.Row) (Cell, Summary) {
	var searches []Search
	var rates []float64
	var found, flatRows []*results.Row // the windows of the rates found; the windows of searches ended failing at every rate
	unconfirmed, flat := 0, 0
	for _, rep := range slices.Sorted(maps.Keys(reps)) {
		s := searchOf(rep, reps[rep])
		searches = append(searches, s)
		if s.Rate != nil {
			rates = append(rates, results.RateFigure(*s.Rate))
			found = append(found, s.rows[max(s.result, s.unconfirmed)])
		}
		if s.Unconfirmed {
			unconfirmed++
		}
		if s.Flat {
			flat++
			flatRows = append(flatRows, s.rows...)
		}
	}
	s := summaryOf(rates)
	fig := "–"
	switch {
	case s.OK && len(rates) < len(searches):
		// the median of those that found one, and how many did
		fig = fmt.Sprintf("%s (%d of %d found)", ThreeFigures(s.Median), len(rates), len(searches))
	case s.OK:
		fig = ThreeFigures(s.Median)
	case flat > 0 && flat == len(searches):
		fig = everyRate
	case len(searches) > 0:
		fig = noRate
	}
	if unconfirmed > 0 {
		fig += fmt.Sprintf(" (%d not confirmed)", unconfirmed)
	}
	cell := cellOf(c, s, fig)
	cell.Searches = searches
	cell.Chart = s
	cell.Bound = c.group != results.Baseline && boundElsewhere(found)
	// the failures of the windows found, as any cell's; where none was,
	// those of the windows that failed at every rate
	cell.ErrorShare = errorShare(found)
	if len(found) == 0 && len(flatRows) > 0 {
		cell.ErrorShare = errorShare(flatRows)
	}
	return cell, s
}

// baselineNote is the note of a Sustainable rate row of mode (label)
// whose no proxy cell found no rate, or a lower one than a proxy's: no
// proxy is the client straight to the origin, so that what stopped its
// search is the client's or the origin's own limit in that load, not a
// ceiling of the proxies' rates; ok is false where its rate is the row's
// highest.
func baselineNote(cells []Cell, mode results.Mode, label string) (Note, bool) {
	i := slices.IndexFunc(cells, func(c Cell) bool { return c.Group == results.Baseline })
	if i < 0 || len(cells[i].Searches) == 0 {
		return Note{}, false
	}
	base := cells[i]
	var above *Cell
	for j := range cells {
		c := &cells[j]
		if c.Group != results.Baseline && c.Median != nil && (base.Median == nil || *c.Median > *base.Median) && (above == nil || *c.Median > *above.Median) {
			above = c
		}
	}
	if above == nil {
		return Note{}, false
	}
	what := "found no rate"
	if base.Median != nil {
		what = fmt.Sprintf("found %sk/s, less than %s's %sk/s", ThreeFigures(*base.Median), above.Proxy, ThreeFigures(*above.Median))
	}
	alone := "the client and the origin do in this load on their own"
	if mode == results.MixTLS {
		alone = "the client and the origin do on their own, the origin ending the TLS (bench's own, in Go) where the proxy does in the other columns"
	}
	return Note{Text: fmt.Sprintf("%s %s: its search stopped where %s. No proxy is the client straight to the origin: "+
		"this is what %s, not a ceiling of the proxies' rates", base.Proxy, what, base.Searches[0].StopText(), alone),
		Proxies: []string{base.Proxy}, Loads: []string{label}}, true
}

// tooFewSearches reports whether a proxy's cell of a row found a rate in
// fewer than minSearches searches: the row cannot be marked.
func tooFewSearches(cells []Cell) bool {
	return slices.ContainsFunc(cells, func(c Cell) bool {
		return c.Group != results.Baseline && c.Median != nil && len(c.Runs) < minSearches
	})
}

// sweepLegend are the marks of a Sustainable rate table of its own:
// "none", and a row left unmarked for too few searches.
func sweepLegend(t Table) []legendItem {
	var none, flat, unmarked bool
	for _, r := range t.Rows {
		unmarked = unmarked || tooFewSearches(r.Cells)
		for _, c := range r.Cells {
			none = none || (c.Median == nil && strings.HasPrefix(c.Text, noRate))
			flat = flat || (c.Median == nil && strings.HasPrefix(c.Text, everyRate))
		}
	}
	var out []legendItem
	if none {
		out = append(out, legendItem{noRate, "no search of the column found a sustainable rate: where each stopped, and why, is under the table and on the chart"})
	}
	if flat {
		out = append(out, legendItem{everyRate, "each search of the column ended with no rate, its load failing about as large a share of its exchanges " +
			"at a rate as at four times it: no rate is within the bound on failures, and the failures are not the load's (why, where its runs say, is under the table)"})
	}
	if unmarked {
		out = append(out, legendItem{"no bold, no *", fmt.Sprintf("a row where a proxy's cell has fewer than %d searches: "+
			"one search's rate has no spread to tell two cells apart (--reps %d or more gives one)", minSearches, minSearches)})
	}
	return out
}

// sweepCaption says how the Sustainable rate table was found, with the
// session's bounds where its metadata records them (sw; nil where not).
func sweepCaption(sw *results.Sweep) string {
	bounds := "the session's bounds (its metadata, which records them, was not given)"
	if sw != nil {
		bounds = SloText(sw.SLO)
	}
	return "Sustainable rate: the highest rate, in thousands of exchanges a second, at which a window of a fixed rate met " + bounds +
		" (failures: errors, timeouts, dropped and late exchanges, of those due) and achieved " +
		strconv.FormatFloat(results.AchievedShare*100, 'f', -1, 64) + "% of the rate, " +
		"found by a search of such windows and confirmed over a whole one; the median of the repetitions " +
		"(\"(2 of 3 found)\": the median of those that found one; " +
		"\"(1 not confirmed)\": of those, searches whose confirms all failed, their rate the highest a step passed below every rate that failed). " +
		"A window fails on its failures where they are more than the bound explains by chance (a binomial bound at " +
		text.SharePercent(results.Significance) + ")" + minDueText(sw) + "."
}

// minDueText is what the caption says of the exchanges a window holds
// under sw's bound on failures: ", each holding 998 exchanges due at
// least to tell it (longer at a low rate)"; empty without its bounds or
// with no failure allowed.
func minDueText(sw *results.Sweep) string {
	if sw == nil || results.MinDue(sw.SLO.Errors) == 0 {
		return ""
	}
	return fmt.Sprintf(", each holding %d exchanges due at least to tell it (longer at a low rate)", results.MinDue(sw.SLO.Errors))
}

// SloText is a sweep's bounds in words: "p99 at most 50 ms, failures at
// most 0.1%".
func SloText(slo results.SLO) string {
	return "p99 at most " + MillisSpan(slo.P99) + ", failures at most " + text.SharePercent(slo.Errors)
}

// MillisSpan formats a span in milliseconds: "50 ms", "2.5 ms".
func MillisSpan(s results.Span) string {
	return strconv.FormatFloat(float64(time.Duration(s))/float64(time.Millisecond), 'f', -1, 64) + " ms"
}

// withSweepSettings gives each Sustainable rate table the bounds of its
// session, from the metadata of files (the session and the machine
// theirs), and its caption says them.
func withSweepSettings(tables []Table, files []results.SessionFile) {
	for i := range tables {
		t := &tables[i]
		if t.Kind != KindSweep {
			continue
		}
		for _, f := range files {
			if f.Meta != nil && f.Meta.Session == t.Session && f.Meta.Machine.Label == t.Machine && f.Meta.Sweep != nil {
				t.Sweep = f.Meta.Sweep
				break
			}
		}
		t.Caption = sweepCaption(t.Sweep)
	}
}

// searchesHead introduces the cells' searches under a Sustainable rate
// table.
const searchesHead = "Where each search stopped: the rate it found, and its last step that failed, why, " +
	"and the role that set the pace in it (bound)"

// searchLines are the notes of the cells of t that searched: a column,
// its row's scenario and its searches, one a repetition.
func searchLines(t Table) [][3]string {
	var out [][3]string
	for _, r := range t.Rows {
		label, _, _ := strings.Cut(r.Label, ", ")
		for _, c := range r.Cells {
			if len(c.Searches) == 0 {
				continue
			}
			texts := make([]string, len(c.Searches))
			for i, s := range c.Searches {
				texts[i] = s.String()
			}
			out = append(out, [3]string{c.Proxy, label, strings.Join(texts, "; ")})
		}
	}
	return out
}

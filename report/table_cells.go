package report

import (
	"math"
	"slices"
	"sort"

	"bench/results"
)

// column is a table's column: a proxy and its group.
type column struct {
	proxy string
	group results.Group
}

// grid holds one family's runs on one machine by scenario and column.
type grid struct {
	keys   []string                // scenario keys in order of first appearance
	labels map[string]string       // scenario key -> label without its unit
	loads  map[string]string       // scenario key -> load
	modes  map[string]results.Mode // scenario key -> mode
	cols   []column
	runs   map[[2]string][]*results.Row // (scenario key, proxy) -> ok runs
	failed []Failure
	notes  []Note
	runs1  []runNote // the ok runs' notes one by one
}

// note adds an ok run's note to the grid's, under the scenario's label.
func (g *grid) note(r *results.Row, label string) {
	if r.Note == "" {
		return
	}
	g.runs1 = append(g.runs1, runNote{proxy: r.Proxy, load: label, text: r.Note})
	i := slices.IndexFunc(g.notes, func(n Note) bool { return n.Text == r.Note })
	if i < 0 {
		g.notes = append(g.notes, Note{Text: r.Note})
		i = len(g.notes) - 1
	}
	n := &g.notes[i]
	if !slices.Contains(n.Proxies, r.Proxy) {
		n.Proxies = append(n.Proxies, r.Proxy)
	}
	if !slices.Contains(n.Loads, label) {
		n.Loads = append(n.Loads, label)
	}
}

// newGrid sorts rows into scenarios (key returns a scenario's key and
// label) and columns: the baseline first, then copy, then splice, each in
// order of first appearance. A run's failure and note name it by its
// scenario's label, or by what name returns when it is not nil (where
// the label leaves out a part that tells runs apart: a tunnel's
// direction).
func newGrid(rows []*results.Row, key func(*results.Row) (string, string), name func(*results.Row) string) *grid {
	g := &grid{labels: map[string]string{}, loads: map[string]string{}, modes: map[string]results.Mode{}, runs: map[[2]string][]*results.Row{}}
	seen := map[string]bool{}
	for _, r := range rows {
		k, label := key(r)
		if _, ok := g.labels[k]; !ok {
			g.keys = append(g.keys, k)
			g.labels[k], g.loads[k], g.modes[k] = label, r.Load, r.Mode
		}
		if !seen[r.Proxy] {
			seen[r.Proxy] = true
			g.cols = append(g.cols, column{r.Proxy, r.Group})
		}
		if name != nil {
			label = name(r)
		}
		if r.Status != results.OK {
			g.failed = append(g.failed, Failure{Proxy: r.Proxy, Load: label, Rep: r.Rep, Note: r.Note})
			continue
		}
		g.note(r, label)
		id := [2]string{k, r.Proxy}
		g.runs[id] = append(g.runs[id], r)
	}
	sort.SliceStable(g.cols, func(i, j int) bool {
		return slices.Index(results.Groups, g.cols[i].group) < slices.Index(results.Groups, g.cols[j].group)
	})
	return g
}

func (g *grid) header() (names, groups []string) {
	for _, c := range g.cols {
		names = append(names, c.proxy)
		groups = append(groups, string(c.group))
	}
	return names, groups
}

// column returns the column of proxy.
func (g *grid) column(proxy string) column {
	var col column
	for _, c := range g.cols {
		if c.proxy == proxy {
			col = c
		}
	}
	return col
}

// Figures returns f of every ok run that gives a finite figure.
func Figures(runs []*results.Row, f func(*results.Row) float64) []float64 {
	vals := make([]float64, 0, len(runs))
	for _, r := range runs {
		if v := f(r); !math.IsNaN(v) && !math.IsInf(v, 0) {
			vals = append(vals, v)
		}
	}
	return vals
}

// Summary is the median and range of a cell's figures.
type Summary struct {
	OK                bool
	Median, Low, High float64
	Runs              []float64
}

// Summarize is the summary of the figures f gives of runs.
func Summarize(runs []*results.Row, f func(*results.Row) float64) Summary {
	return summaryOf(Figures(runs, f))
}

// summaryOf is the summary of figures.
func summaryOf(vals []float64) Summary {
	if len(vals) == 0 {
		return Summary{}
	}
	out := slices.Clone(vals)
	sorted := slices.Clone(vals)
	slices.Sort(sorted)
	m := results.Median(sorted)
	return Summary{OK: true, Median: m, Low: sorted[0], High: sorted[len(sorted)-1], Runs: out}
}

// boundElsewhere is the ‡ rule: most runs were bound by the client or the
// origin rather than by the proxy.
func boundElsewhere(runs []*results.Row) bool {
	n := 0
	for _, r := range runs {
		if r.Bound.Elsewhere() {
			n++
		}
	}
	return len(runs) > 0 && 2*n > len(runs)
}

// paceOf is the role that set the pace of most of the runs, empty where
// none did.
func paceOf(runs []*results.Row) results.Bound {
	n := map[results.Bound]int{}
	for _, r := range runs {
		n[r.Bound]++
		if 2*n[r.Bound] > len(runs) {
			return r.Bound
		}
	}
	return ""
}

// newSpread is what the marking rule knows of a cell of group with the
// figures s; the baseline takes no part.
func newSpread(group results.Group, s Summary) *spread {
	return &spread{ok: s.OK, value: s.Median, low: s.Low, high: s.High,
		eligible: group != results.Baseline, group: group}
}

// cellOf builds a cell from a summary; figure formats the median. Runs is
// never nil, so that JSON gives a cell without runs as [].
func cellOf(c column, s Summary, figure string) Cell {
	runs := s.Runs
	if runs == nil {
		runs = []float64{}
	}
	cell := Cell{Proxy: c.proxy, Group: c.group, Runs: runs, Figure: figure}
	if s.OK {
		m := s.Median
		cell.Median = &m
	}
	if s.OK && len(s.Runs) >= 2 && s.Median > 0 {
		sp := (s.High - s.Low) / s.Median
		cell.Spread = &sp
	}
	return cell
}

// neverSpliced is the † rule: a splicing column whose runs all counted
// the proxy's pipes, and none found one. Runs that did not count them
// (files from before the count) leave the cell unmarked: unknown is not
// none.
func neverSpliced(c column, runs []*results.Row) bool {
	if c.group != results.Splice || len(runs) == 0 {
		return false
	}
	for _, r := range runs {
		if spliced, known := r.Spliced(); spliced || !known {
			return false
		}
	}
	return true
}

// finish sets a cell's text from its figure and marks.
func (c *Cell) finish() {
	t := c.Figure
	if c.NoSplice {
		t += " †"
	}
	if c.Bound {
		t += " ‡"
	}
	if c.Star {
		t += " *"
	}
	if f := FailureText(*c); f != "" {
		t += " " + f
	}
	c.Text = t
}

// MedianRun is the run whose figure (Figure) is the median of runs, the lower of
// the two middle ones for an even count: a run that ran, whose profile
// stands for the cell. Nil without runs.
func MedianRun(runs []*results.Row) *results.RunID {
	if len(runs) == 0 {
		return nil
	}
	sorted := make([]*results.Row, len(runs))
	copy(sorted, runs)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Figure() < sorted[j].Figure() })
	id := sorted[(len(sorted)-1)/2].ID()
	return &id
}

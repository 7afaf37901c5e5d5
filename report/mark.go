package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"bench/internal/text"
	"bench/results"
)

// spread is what the marking rule knows of a cell: its median and the
// range of its runs (for the combined layout, the averages over machines).
type spread struct {
	ok       bool    // at least one ok run
	value    float64 // the median (or the average of the machines' medians)
	low      float64 // the slowest run
	high     float64 // the fastest run
	bold     bool
	star     bool
	eligible bool // takes part in the marking (not the baseline)
	group    results.Group
	failed   float64 // the share of its exchanges that failed (Cell.ErrorShare)
}

// reaches is the reference results' "cannot be told apart" test: the fastest run of
// one cell reaches the slowest run of the best. The slack absorbs the
// rounding of figures computed from the same integers in different orders.
func reaches(high, bestLow float64) bool {
	return high >= bestLow-1e-9*math.Abs(bestLow)
}

// threshold returns the slowest run of the best cell among those in(c)
// accepts; when several share the best median the lowest of their slowest
// runs counts, so that a tie never depends on the order of the columns.
func threshold(cells []*spread, in func(*spread) bool) (float64, bool) {
	found := false
	var best, low float64
	for _, c := range cells {
		if !c.ok || !c.eligible || !in(c) {
			continue
		}
		switch {
		case !found || c.value > best:
			found, best, low = true, c.value, c.low
		case c.value == best && c.low < low:
			low = c.low
		}
	}
	return low, found
}

// marking is the rule a table's rows are marked by.
type marking int

const (
	// markGroups: bold is the best of each group (copy or splice), the
	// star the best over both.
	markGroups marking = iota
	// markStarOnly: the star alone, a starred cell bold too: the
	// CONNECT and SOCKS tables, where one proxy alone splices.
	markStarOnly
)

// markingOf is the rule of family fam's tables.
func markingOf(fam string) marking {
	if fam == famConnect || fam == famSocks {
		return markStarOnly
	}
	return markGroups
}

// markRow applies the reference results' rule to one row. Bold: the best median of its
// group (copy or splice) and any other of the group whose fastest run
// reaches the best's slowest, of the cells that failed the fewest of
// their exchanges (markBest). Star: the same over both groups. By
// markStarOnly only the star is decided, and a starred cell is bold too.
// The baseline takes no part.
func markRow(cells []*spread, rule marking) {
	markBest(cells, func(*spread) bool { return true }, func(c *spread) {
		c.star = true
		if rule == markStarOnly {
			c.bold = true
		}
	})
	if rule == markStarOnly {
		return
	}
	for _, g := range []results.Group{results.Copy, results.Splice} {
		markBest(cells, func(c *spread) bool { return c.group == g }, func(c *spread) { c.bold = true })
	}
}

// markBest applies mark to each cell among those in(c) accepts that
// failed the fewest of their exchanges (none, where one of them failed
// none) whose fastest run reaches the slowest run of the best of those:
// a cell is never the best over one that failed less.
func markBest(cells []*spread, in func(*spread) bool, mark func(*spread)) {
	least := math.Inf(1)
	for _, c := range cells {
		if c.ok && c.eligible && in(c) {
			least = min(least, c.failed)
		}
	}
	fewest := func(c *spread) bool { return in(c) && c.failed <= least }
	low, ok := threshold(cells, fewest)
	if !ok {
		return
	}
	for _, c := range cells {
		if c.ok && c.eligible && fewest(c) && reaches(c.high, low) {
			mark(c)
		}
	}
}

// markCells marks a row's cells by the rule of markRow and sets their text.
func markCells(cells []Cell, spreads []*spread, rule marking) {
	for i := range cells {
		if e := cells[i].ErrorShare; e != nil {
			spreads[i].failed = *e
		}
	}
	markRow(spreads, rule)
	for i := range cells {
		cells[i].Bold, cells[i].Star = spreads[i].bold, spreads[i].star
		cells[i].finish()
	}
}

// SpreadWarn is the spread of a cell's runs, (fastest - slowest) /
// median, beyond which the closing summary of a session names the cell:
// its median may well move with more runs.
const SpreadWarn = 0.10

// NoisyCell is a cell whose runs spread more than SpreadWarn.
type NoisyCell struct {
	Table  *Table
	Label  string // the row's
	Column string // the column's: the proxy, or a tunnel's direction
	Cell   Cell
	Spread float64
}

// Noisy returns the cells of the ranked tables (throughput, handshakes;
// not the CPU and memory ones) whose runs spread more than SpreadWarn, in
// the tables' order.
func Noisy(tables []Table) []NoisyCell {
	var out []NoisyCell
	for i := range tables {
		t := &tables[i]
		if !Ranked(*t) {
			continue
		}
		for _, r := range t.Rows {
			for j, c := range r.Cells {
				if c.Spread != nil && *c.Spread > SpreadWarn {
					out = append(out, NoisyCell{Table: t, Label: r.Label, Column: columnName(t, r.Label, j, c), Cell: c, Spread: *c.Spread})
				}
			}
		}
	}
	return out
}

// WriteNoisy writes the closing summary of a session: the cells whose
// runs spread more than SpreadWarn, and what to do about it. It writes
// nothing when there are none.
func WriteNoisy(w io.Writer, tables []Table) {
	noisy := Noisy(tables)
	if len(noisy) == 0 {
		return
	}
	fmt.Fprintf(w, "cells whose runs spread more than %s from the fastest to the slowest (relative to the median); "+
		"their medians may move with more runs: add repetitions (--reps 5), or let bench repeat each cell until its median is settled (--reps auto):\n",
		text.Percent(SpreadWarn))
	for _, n := range noisy {
		fmt.Fprintf(w, "  %s\n", n)
	}
}

// String is the noisy cell as the session's closing summary and the page
// name it: "HTTP proxy, ka-1k, k req/s, nginx: 14% over 5 runs".
func (n NoisyCell) String() string {
	return fmt.Sprintf("%s, %s, %s: %s over %d runs", n.Table.Family, n.Label, n.Column, text.Percent(n.Spread), len(n.Cell.Runs))
}

// NoisyHead introduces the noisy cells on the page.
func NoisyHead(n int) string {
	return fmt.Sprintf("The runs of %s spread more than %s of the median from the fastest to the slowest: those medians may move with more runs",
		text.Plural(n, "cell"), text.Percent(SpreadWarn))
}

// columnName names a cell's column: its proxy; in a table whose columns
// are not the proxies and are more than one (a tunnel's directions, each
// row one proxy's), the column's own name too, after the proxy's where
// the row's label does not give it.
func columnName(t *Table, label string, j int, c Cell) string {
	if len(t.Columns) < 2 || j >= len(t.Columns) || slices.Contains(t.Columns, c.Proxy) {
		return c.Proxy
	}
	if strings.Contains(label, "("+c.Proxy+")") {
		return t.Columns[j]
	}
	return c.Proxy + ", " + t.Columns[j]
}

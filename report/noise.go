package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"bench/internal/text"
)

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
		if !ranked(*t) {
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
		fmt.Fprintf(w, "  %s, %s, %s: %s over %d runs\n", n.Table.Family, n.Label, n.Column, text.Percent(n.Spread), len(n.Cell.Runs))
	}
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

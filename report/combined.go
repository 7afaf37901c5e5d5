package report

import (
	"slices"
	"strings"

	"bench/internal/text"
	"bench/results"
	"gonum.org/v1/gonum/stat"
)

// combinedTables is the layout of the 11 October results: one throughput
// table of the HTTP proxy, CONNECT, SOCKS and relay scenarios whose cells
// read "M4 / Intel / average", from each machine's newest session, then
// the other families a table per machine.
func combinedTables(rows []*results.Row) []Table {
	var machines []string
	byMachine := map[string][]*results.Row{}
	for _, r := range rows {
		if _, ok := byMachine[r.Machine]; !ok {
			machines = append(machines, r.Machine)
		}
		byMachine[r.Machine] = append(byMachine[r.Machine], r)
	}
	var kept, plainRows []*results.Row
	var ids []string
	for _, m := range machines {
		s := sessions(byMachine[m])[0]
		if !slices.Contains(ids, s.id) {
			ids = append(ids, s.id)
		}
		kept = append(kept, s.rows...)
		for _, r := range s.rows {
			if plain(FamilyOf(r.Mode, r.Load)) {
				plainRows = append(plainRows, r)
			}
		}
	}
	var out []Table
	if len(plainRows) > 0 {
		out = append(out, combinedTable(machines, strings.Join(ids, " / "), plainRows))
	}
	return append(out, machineTables(kept, plain)...)
}

// combinedLabel names a scenario across modes as the 11 October tables
// do: the relay's loads bare, the others prefixed with their mode.
func combinedLabel(r *results.Row) string {
	if r.Mode == results.Relay || strings.HasPrefix(r.Load, string(r.Mode)+"-") {
		return r.Load
	}
	return results.ScenarioName(r.Mode, r.Load)
}

func combinedTable(machines []string, sessionIDs string, rows []*results.Row) Table {
	g := newGrid(rows, func(r *results.Row) (string, string) { return string(r.Mode) + "\x00" + r.Load, combinedLabel(r) }, nil)
	var shorts []string
	for _, m := range machines {
		shorts = append(shorts, short(m))
	}
	machine := strings.Join(shorts, " / ") + " / average"
	names, groups := g.header()
	t := Table{Family: famCombined, Kind: "throughput", Machine: machine, Session: sessionIDs,
		Corner: "scenario (" + machine + ")", Columns: names, Groups: groups, Failed: g.failed, Notes: g.notes, RunNotes: g.runs1}
	for _, k := range g.keys {
		unit := results.UnitOf(g.modes[k], g.loads[k])
		cells := make([]Cell, len(g.cols))
		spreads := make([]*spread, len(g.cols))
		for i, c := range g.cols {
			var parts []string
			var meds, lows, highs, all []float64
			for _, m := range machines {
				var runs []*results.Row
				for _, r := range g.runs[[2]string{k, c.proxy}] {
					if r.Machine == m {
						runs = append(runs, r)
					}
				}
				s := Summarize(runs, unit.Of)
				all = append(all, s.Runs...)
				if !s.OK {
					parts = append(parts, "–")
					continue
				}
				parts = append(parts, text.Fixed(s.Median, 1))
				meds, lows, highs = append(meds, s.Median), append(lows, s.Low), append(highs, s.High)
			}
			// the average and its range: from the average of each
			// machine's slowest run to that of the fastest
			avg := Summary{Runs: all}
			if len(meds) == len(machines) {
				avg.OK = true
				avg.Median, avg.Low, avg.High = stat.Mean(meds, nil), stat.Mean(lows, nil), stat.Mean(highs, nil)
				parts = append(parts, text.Fixed(avg.Median, 1))
			} else {
				parts = append(parts, "–")
			}
			spreads[i] = newSpread(c.group, avg)
			cells[i] = cellOf(c, avg, strings.Join(parts, " / "))
		}
		markCells(cells, spreads, markGroups)
		t.Rows = append(t.Rows, TableRow{Label: unitLabel(g.labels[k], unit), Cells: cells, Unit: unit})
	}
	return t
}

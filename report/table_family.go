package report

import (
	"slices"
	"strings"

	"bench/internal/text"
	"bench/report/chart"
	"bench/results"
	"gonum.org/v1/gonum/stat"
)

func familyTables(fam, machine string, rows []*results.Row) []Table {
	switch {
	case plain(fam):
		return []Table{plainTable(fam, machine, rows)}
	case fam == famHTTPS || fam == FamMix:
		return tripleTables(fam, machine, rows)
	case fam == FamSweep:
		return []Table{sweepTable(machine, rows)}
	case fam == FamTunnel:
		return []Table{tunnelTable(machine, rows)}
	default:
		return []Table{handshakeTable(machine, rows)}
	}
}

// unitLabel appends a plain row's unit: "ka-1k, k req/s".
func unitLabel(label string, unit results.Unit) string { return label + ", " + string(unit) }

// RowLabel is the one label of a scenario's row in the tables of its
// family, which compare names its cells by: the load in the plain
// families ("ka-1k"; their table names the mode), the scenario's name in
// the HTTPS, mix and sustainable rate families ("tls-term-ka-1k",
// "mix-http-3k", "mix-http-sweep"), the load in stunnel's
// ("TLS_AES_128_GCM_SHA256-up", "full").
func RowLabel(mode results.Mode, load string) string {
	switch fam := FamilyOf(mode, load); {
	case plain(fam):
		return strings.TrimPrefix(load, "http-")
	case fam == famHTTPS || fam == FamMix || fam == FamSweep:
		return results.ScenarioName(mode, load)
	}
	return load
}

func plainTable(fam, machine string, rows []*results.Row) Table {
	g := newGrid(rows, func(r *results.Row) (string, string) { return r.Load, RowLabel(r.Mode, r.Load) }, nil)
	names, groups := g.header()
	t := Table{Family: fam, Kind: "throughput", Machine: machine, Session: rows[0].Session,
		Corner: "scenario (" + short(machine) + ")", Columns: names, Groups: groups, Failed: g.failed, Notes: g.notes, RunNotes: g.runs1}
	rule := markingOf(fam)
	for _, k := range g.keys {
		unit := results.UnitOf(g.modes[k], g.loads[k])
		cells := make([]Cell, len(g.cols))
		spreads := make([]*spread, len(g.cols))
		for i, c := range g.cols {
			runs := g.runs[[2]string{k, c.proxy}]
			s := Summarize(runs, unit.Of)
			fig := "–"
			if s.OK {
				fig = text.Fixed(s.Median, 1)
			}
			cells[i] = cellOf(c, s, fig)
			cells[i].Bound = c.group != results.Baseline && boundElsewhere(runs)
			cells[i].NoSplice = neverSpliced(c, runs)
			cells[i].fromRuns(runs)
			spreads[i] = newSpread(c.group, s)
		}
		markCells(cells, spreads, rule)
		t.Rows = append(t.Rows, TableRow{Label: unitLabel(g.labels[k], unit), Cells: cells, Unit: unit})
	}
	return t
}

// tripleTables builds the throughput, CPU and memory tables of the HTTPS
// and mix families. Their cells carry ‡ in the throughput table and no
// other mark, as in the reference results.
func tripleTables(fam, machine string, rows []*results.Row) []Table {
	g := newGrid(rows, func(r *results.Row) (string, string) {
		label := RowLabel(r.Mode, r.Load)
		return label, label
	}, nil)
	names, groups := g.header()
	base := Table{Family: fam, Machine: machine, Session: rows[0].Session, Corner: "scenario",
		Columns: names, Groups: groups}
	thr, cpu, mem := base, base, base
	thr.Kind, thr.Title, thr.Failed, thr.Notes, thr.RunNotes = "throughput", titleThroughput, g.failed, g.notes, g.runs1
	cpu.Kind, cpu.Title = "cpu", titleCPU
	mem.Kind, mem.Title = "memory", titleMemory
	for _, k := range g.keys {
		load := g.loads[k]
		var tc, cc, mc []Cell
		for _, c := range g.cols {
			runs := g.runs[[2]string{k, c.proxy}]
			baseline := c.group == results.Baseline

			// throughput: Gbit/s, and requests a second unless a stream
			s := Summarize(runs, gbits)
			var fig string
			switch {
			case results.Stream(load) && s.OK:
				fig = text.Fixed(s.Median, 1)
			case results.Stream(load):
				fig = "–"
			case s.OK:
				fig = smallGbits(s.Median) + " (" + text.Fixed(Summarize(runs, kreqs).Median, 1) + "k/s)"
			default:
				fig = NoFigureMix
			}
			cell := cellOf(c, s, fig)
			cell.Bound = !baseline && boundElsewhere(runs)
			cell.NoSplice = neverSpliced(c, runs)
			cell.fromRuns(runs)
			cell.finish()
			tc = append(tc, cell)

			// CPU: seconds per gigabyte for bulk loads, µs per request
			// for the others; none for the baseline, which has no proxy
			f, unit := usPerReq, " µs/req"
			if results.Bulk(load) {
				f, unit = sPerGB, " s/GB"
			}
			s = Summarize(runs, f)
			switch {
			case baseline:
				s, fig = Summary{}, "–"
			case !s.OK:
				fig = "–" + unit
			case results.Bulk(load):
				fig = text.Fixed(s.Median, 2) + unit
			default:
				fig = text.Thousands(s.Median) + unit
			}
			cell = cellOf(c, s, fig)
			cell.finish()
			cc = append(cc, cell)

			// peak memory, MB
			s = Summarize(runs, megabytes)
			fig = "–"
			if baseline {
				s = Summary{}
			} else if s.OK {
				fig = text.Thousands(s.Median)
			}
			cell = cellOf(c, s, fig)
			cell.finish()
			mc = append(mc, cell)
		}
		label := g.labels[k]
		thr.Rows = append(thr.Rows, TableRow{Label: label, Cells: tc, Unit: results.UnitOf(g.modes[k], load)})
		cpu.Rows = append(cpu.Rows, TableRow{Label: label, Cells: cc})
		mem.Rows = append(mem.Rows, TableRow{Label: label, Cells: mc})
	}
	return []Table{thr, cpu, mem}
}

// smallGbits formats the Gbit/s of a request load as the reference
// results do, with two decimals, but with three below 0.01, where two
// would read as nothing moved: 1k answers at 0.3k/s are 0.003 Gbit/s, not
// 0.00.
func smallGbits(v float64) string {
	if v > 0 && v < 0.005 {
		return text.Fixed(v, 3)
	}
	return text.Fixed(v, 2)
}

// proxyLabels returns the row labels of g's scenarios, label's name of
// each with the proxy appended when a table holds more than one proxy's
// rows (stunnel's tables have their directions as columns).
func proxyLabels(g *grid, label func(string) string) []string {
	out := make([]string, len(g.keys))
	for i, k := range g.keys {
		proxy, rest, _ := strings.Cut(k, "\x00")
		out[i] = label(rest)
		if len(g.cols) > 1 {
			out[i] += " (" + proxy + ")"
		}
	}
	return out
}

// Directions are the columns of a tunnel's table, loads "<suite>-up" and
// "<suite>-down".
var Directions = []string{"Client to server", "Server to client"}

// tunnelTable is stunnel's throughput table: Gbit/s per cipher suite,
// client to server (load "<suite>-up") and server to client ("-down").
func tunnelTable(machine string, rows []*results.Row) Table {
	g := newGrid(rows, func(r *results.Row) (string, string) {
		suite := strings.TrimSuffix(strings.TrimSuffix(r.Load, "-up"), "-down")
		return r.Proxy + "\x00" + suite, suite
	}, func(r *results.Row) string { return r.Load })
	t := Table{Family: FamTunnel, Kind: "throughput", Machine: machine, Session: rows[0].Session,
		Corner: "Ciphersuite", Columns: slices.Clone(Directions),
		Groups: []string{"", ""}, Failed: g.failed, Notes: g.notes, RunNotes: g.runs1}
	labels := proxyLabels(g, func(s string) string { return s })
	for i, k := range g.keys {
		proxy, suite, _ := strings.Cut(k, "\x00")
		col := g.column(proxy)
		var cells []Cell
		for _, dir := range []string{"-up", "-down"} {
			var runs []*results.Row
			for _, r := range g.runs[[2]string{k, proxy}] {
				if r.Load == suite+dir {
					runs = append(runs, r)
				}
			}
			s := Summarize(runs, gbits)
			fig := "–"
			if s.OK {
				fig = text.Fixed(s.Median, 2) + " Gbit/s"
			}
			cell := cellOf(col, s, fig)
			cell.fromRuns(runs)
			cell.Bound = col.group != results.Baseline && boundElsewhere(runs)
			cell.finish()
			cells = append(cells, cell)
		}
		t.Rows = append(t.Rows, TableRow{Label: labels[i], Cells: cells, Unit: results.Gbits})
	}
	return t
}

// handshakeTable is stunnel's handshake table: connections a second, full
// handshakes (load "full") and resumed sessions ("resumed").
func handshakeTable(machine string, rows []*results.Row) Table {
	g := newGrid(rows, func(r *results.Row) (string, string) { return r.Proxy + "\x00" + r.Load, r.Load }, nil)
	t := Table{Family: FamHandshake, Kind: "handshake", Machine: machine, Session: rows[0].Session,
		Corner: "Handshake", Columns: []string{"Connections/s"}, Groups: []string{""}, Failed: g.failed, Notes: g.notes, RunNotes: g.runs1}
	labels := proxyLabels(g, func(load string) string {
		switch load {
		case "full":
			return "Full handshake"
		case "resumed":
			return "Resumed session"
		}
		return load
	})
	for i, k := range g.keys {
		proxy, _, _ := strings.Cut(k, "\x00")
		col := g.column(proxy)
		runs := g.runs[[2]string{k, proxy}]
		s := Summarize(runs, reqs)
		fig := "–"
		if s.OK {
			fig = text.Thousands(s.Median)
		}
		cell := cellOf(col, s, fig)
		cell.fromRuns(runs)
		cell.Bound = col.group != results.Baseline && boundElsewhere(runs)
		cell.finish()
		t.Rows = append(t.Rows, TableRow{Label: labels[i], Cells: []Cell{cell}, Unit: results.Conns})
	}
	return t
}

// NewPalette gives each column of the tables its colour (chart.PaletteOf).
func NewPalette(tables []Table) chart.Palette {
	var names []string
	for _, t := range tables {
		switch t.Family {
		case FamTunnel: // its columns are directions (directionColors)
		case FamHandshake: // its one column holds every proxy's rows
			for _, r := range t.Rows {
				for _, c := range r.Cells {
					names = append(names, c.Proxy)
				}
			}
		default:
			for j, name := range t.Columns {
				if results.Group(t.Groups[j]) != results.Baseline {
					names = append(names, name)
				}
			}
		}
	}
	return chart.PaletteOf(names, Directions)
}

// Per-run figures, derived as DESIGN.md states them.

func gbits(r *results.Row) float64 { return r.Gbps() }

func kreqs(r *results.Row) float64 { return r.PerSecond() / 1e3 }

func reqs(r *results.Row) float64 { return r.PerSecond() }

func usPerReq(r *results.Row) float64 { return r.CPUProxy / float64(r.Requests) * 1e6 }

func sPerGB(r *results.Row) float64 { return r.CPUProxy / (float64(r.Bytes) / 1e9) }

func megabytes(r *results.Row) float64 { return float64(r.PeakMemBytes) / 1e6 }

// short returns a machine's short label for a table's corner: the label up
// to its parenthesis, "ARM (M4)" -> "ARM".
func short(machine string) string {
	if i := strings.Index(machine, " ("); i > 0 {
		return machine[:i]
	}
	return machine
}

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

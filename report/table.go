package report

import (
	"bench/report/results"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
)

// Table is one table of the report: a family's figures on one machine (or,
// in the combined layout, on every machine) in one session.
type Table struct {
	Family  string     `json:"family"`          // "HTTP proxy", "HTTPS", ...
	Kind    string     `json:"kind"`            // throughput, cpu, memory, handshake
	Machine string     `json:"machine"`         // "ARM (M4)"; "M4 / Intel / average" combined
	Session string     `json:"session"`         // the session id
	Title   string     `json:"title,omitempty"` // the subheading of a triple: "proxy peak memory, MB"
	Corner  string     `json:"corner"`          // the header's first cell: "scenario (ARM)"
	Columns []string   `json:"columns"`         // the header's other cells, without ‖
	Groups  []string   `json:"groups"`          // each column's group; a ‖ sits where it changes
	Rows    []TableRow `json:"rows"`
	Failed  []Failure  `json:"failed,omitempty"` // failed runs, kept out of the medians
	Notes   []Note     `json:"notes,omitempty"`  // what the ok runs' notes say
	// Caption is what the table's reader must know of how its figures
	// were measured (the latency tables': closed or open loop; the
	// Sustainable rate's bounds).
	Caption string `json:"caption,omitempty"`
	// Sweep is how the session searched for the sustainable rates, its
	// bounds, where its metadata records them: the Sustainable rate
	// table's alone.
	Sweep *results.Sweep `json:"sweep,omitempty"`

	runNotes []runNote // the ok runs' notes, each with its cell, for the detail
}

// Note is what ok runs noted (scaled-down connections, errors), with the
// columns and scenarios of the runs that noted it.
type Note struct {
	Text    string   `json:"text"`
	Proxies []string `json:"proxies"`
	Loads   []string `json:"loads"`
}

// TableRow is a row of a table: a scenario and a cell per column.
type TableRow struct {
	Label string `json:"label"` // "ka-1k, k req/s", "tls-term-ka-1k", "mix-http-3k"
	Cells []Cell `json:"cells"`

	unit results.Unit // the unit of the scenario (results.UnitOf), for the charts
}

// Cell is one figure: the median of a column's ok runs in a scenario.
type Cell struct {
	Proxy  string        `json:"proxy"`
	Group  results.Group `json:"group"`
	Text   string        `json:"text"`   // as printed in text form, marks included: "35.0 ‡ *"
	Median *float64      `json:"median"` // in the table's unit; null without an ok run
	Runs   []float64     `json:"runs"`   // the ok runs' figures in the same unit
	// Spread is (fastest - slowest) / median of the runs: how far apart
	// they were, null with fewer than two.
	Spread *float64 `json:"spread"`
	Bold   bool     `json:"bold"`
	Star   bool     `json:"star"`
	// Bound: most runs bound by the client or the origin (‡); in the
	// Sustainable rate table, a rate within 10% of no proxy's, the load
	// tool's own limit.
	Bound bool `json:"bound"`
	// NoSplice: a splicing column whose runs all counted the proxy's
	// pipes and found none (†): it copied, whatever its group says.
	NoSplice bool `json:"no_splice,omitempty"`
	// P50, P99 and P999 are the latency of a throughput cell, in
	// milliseconds: the median of its ok runs' percentiles, where the
	// load tool gives them (P999: bench mix alone); absent otherwise.
	P50  *float64 `json:"p50_ms,omitempty"`
	P99  *float64 `json:"p99_ms,omitempty"`
	P999 *float64 `json:"p999_ms,omitempty"`
	// ErrorShare is the share of a throughput cell's exchanges that
	// failed (errorShare); absent where none did. Beyond ErrorWarn the
	// cell carries the ! mark and the share: "1.0 (1.0k/s) !77%".
	ErrorShare *float64 `json:"error_share,omitempty"`
	// Closed is how many of the runs' errors, as the load tool counted
	// them, are no failed exchange: wrk's reads on connections the proxy
	// closed after its answer (results.Row.Closed).
	Closed int64 `json:"closed_after_answer,omitempty"`
	// Searches are a Sustainable rate cell's searches, one a
	// repetition: the rate each found, its steps and where it stopped.
	Searches []Search `json:"searches,omitempty"`

	figure string          // the figure alone, for markdown's bold
	p99s   []float64       // the ok runs' p99, where the load tool gives it, for the headlines
	pace   results.Bound   // the role that set the pace of most runs (paceOf)
	ids    []results.RunID // the ok runs, for the charts of their data
	median *results.RunID  // the run of the median figure, whose profile the page links (MedianRun)
	chart  summary         // the ok runs' figures in their scenario's unit (results.UnitOf), for the bar charts
}

// Failure is a failed run, listed under its table.
type Failure struct {
	Proxy string `json:"proxy"`
	Load  string `json:"load"`
	Rep   int    `json:"rep"`
	Note  string `json:"note"`
}

// The families of tables, in the order the report prints them.
const (
	famHTTP      = "HTTP proxy"
	famConnect   = "CONNECT tunnel"
	famSocks     = "SOCKSv5 tunnel"
	famRelay     = "TCP relay"
	famHTTPS     = "HTTPS"
	famMix       = "mix scenarios"
	famSweep     = "Sustainable rate"
	famTunnel    = "TLS tunnel"
	famHandshake = "TLS handshakes"
	famCombined  = "Throughput"
)

var families = []string{famHTTP, famConnect, famSocks, famRelay, famHTTPS, famMix, famSweep, famTunnel, famHandshake}

// familyOf maps a mode and a load to their family: a sweep's steps
// (results.LoadSweep) to the Sustainable rate, apart from the mixes'
// other loads; the others by their mode.
func familyOf(mode results.Mode, load string) string {
	if load == results.LoadSweep {
		return famSweep
	}
	switch mode {
	case results.HTTP:
		return famHTTP
	case results.Connect:
		return famConnect
	case results.Socks:
		return famSocks
	case results.Relay:
		return famRelay
	case results.TLSTerm, results.TLSInit:
		return famHTTPS
	case results.TLSTunnel:
		return famTunnel
	case results.TLSHandshake:
		return famHandshake
	}
	return famMix
}

func plain(family string) bool {
	return family == famHTTP || family == famConnect || family == famSocks || family == famRelay
}

// Subheadings of the throughput, CPU and memory triples, as in the reference results.
const (
	titleThroughput = "throughput, Gbit/s (thousands of requests per second for HTTP)"
	titleCPU        = "proxy CPU time per gigabyte or per request"
	titleMemory     = "proxy peak memory, MB"
)

// Layouts of Options.Layout.
const (
	LayoutMachine  = "machine"  // a table per machine (the default)
	LayoutCombined = "combined" // "M4 / Intel / average" cells across machines
)

// Tables builds the report's tables from runs: for each session, newest
// first, each family and each machine. opt.Session keeps one session;
// opt.Layout combined puts the HTTP proxy, CONNECT, SOCKS and relay figures
// of every machine's newest session into one table of combined cells.
// A layout or session the options name that cannot be had is refused as
// results.InputError.
func Tables(runs []results.Row, opt Options) ([]Table, error) {
	rows := make([]*results.Row, len(runs))
	for i := range runs {
		rows[i] = &runs[i]
	}
	if opt.Session != "" {
		var kept []*results.Row
		var ids []string
		for _, r := range rows {
			if r.Session == opt.Session {
				kept = append(kept, r)
			} else if !slices.Contains(ids, r.Session) {
				ids = append(ids, r.Session)
			}
		}
		if len(kept) == 0 {
			return nil, results.BadInput(fmt.Errorf("no session %q in the files; they hold %s", opt.Session, strings.Join(ids, ", ")))
		}
		rows = kept
	}
	switch opt.Layout {
	case "", LayoutMachine:
		var out []Table
		for _, s := range sessions(rows) {
			out = append(out, machineTables(s.rows, nil)...)
		}
		withSweepSettings(out, opt.Files)
		if opt.Latency {
			out = withLatency(out, mixAccountings(rows, opt.Files))
		}
		return out, nil
	case LayoutCombined:
		out := combinedTables(rows)
		withSweepSettings(out, opt.Files)
		if opt.Latency {
			out = withLatency(out, mixAccountings(rows, opt.Files))
		}
		return out, nil
	}
	return nil, results.BadInput(fmt.Errorf("unknown layout %q (want %s or %s)", opt.Layout, LayoutMachine, LayoutCombined))
}

// session is the runs of one session id.
type session struct {
	id     string
	latest time.Time
	rows   []*results.Row
}

// sessions splits rows by session id, newest first: by the latest start
// of a run, then by id.
func sessions(rows []*results.Row) []*session {
	var list []*session
	byID := map[string]*session{}
	for _, r := range rows {
		s := byID[r.Session]
		if s == nil {
			s = &session{id: r.Session}
			byID[r.Session] = s
			list = append(list, s)
		}
		if r.Started.After(s.latest) {
			s.latest = r.Started
		}
		s.rows = append(s.rows, r)
	}
	sort.SliceStable(list, func(i, j int) bool {
		if !list[i].latest.Equal(list[j].latest) {
			return list[i].latest.After(list[j].latest)
		}
		return list[i].id > list[j].id
	})
	return list
}

// machineTables renders the families of rows, a table set per machine;
// skip leaves families out (the combined layout has them already).
func machineTables(rows []*results.Row, skip func(family string) bool) []Table {
	var machines []string
	byFamily := map[string]map[string][]*results.Row{} // machine -> family -> runs
	for _, r := range rows {
		fams := byFamily[r.Machine]
		if fams == nil {
			fams = map[string][]*results.Row{}
			byFamily[r.Machine] = fams
			machines = append(machines, r.Machine)
		}
		f := familyOf(r.Mode, r.Load)
		fams[f] = append(fams[f], r)
	}
	var out []Table
	for _, fam := range families {
		if skip != nil && skip(fam) {
			continue
		}
		for _, m := range machines {
			if fr := byFamily[m][fam]; len(fr) > 0 {
				out = append(out, familyTables(fam, m, fr)...)
			}
		}
	}
	return out
}

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

// figures returns f of every ok run that gives a finite figure.
func figures(runs []*results.Row, f func(*results.Row) float64) []float64 {
	vals := make([]float64, 0, len(runs))
	for _, r := range runs {
		if v := f(r); !math.IsNaN(v) && !math.IsInf(v, 0) {
			vals = append(vals, v)
		}
	}
	return vals
}

// summary is the median and range of a cell's figures.
type summary struct {
	ok             bool
	med, low, high float64
	runs           []float64
}

func summarize(runs []*results.Row, f func(*results.Row) float64) summary {
	return summaryOf(figures(runs, f))
}

// summaryOf is the summary of figures.
func summaryOf(vals []float64) summary {
	if len(vals) == 0 {
		return summary{}
	}
	out := slices.Clone(vals)
	sorted := slices.Clone(vals)
	m := results.Median(sorted) // sorts it
	return summary{ok: true, med: m, low: sorted[0], high: sorted[len(sorted)-1], runs: out}
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
func newSpread(group results.Group, s summary) *spread {
	return &spread{ok: s.ok, value: s.med, low: s.low, high: s.high,
		eligible: group != results.Baseline, group: group}
}

// cellOf builds a cell from a summary; figure formats the median. Runs is
// never nil, so that JSON gives a cell without runs as [].
func cellOf(c column, s summary, figure string) Cell {
	runs := s.runs
	if runs == nil {
		runs = []float64{}
	}
	cell := Cell{Proxy: c.proxy, Group: c.group, Runs: runs, figure: figure}
	if s.ok {
		m := s.med
		cell.Median = &m
	}
	if s.ok && len(s.runs) >= 2 && s.med > 0 {
		sp := (s.high - s.low) / s.med
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
	t := c.figure
	if c.NoSplice {
		t += " †"
	}
	if c.Bound {
		t += " ‡"
	}
	if c.Star {
		t += " *"
	}
	if f := failureText(*c); f != "" {
		t += " " + f
	}
	c.Text = t
}

func familyTables(fam, machine string, rows []*results.Row) []Table {
	switch {
	case plain(fam):
		return []Table{plainTable(fam, machine, rows)}
	case fam == famHTTPS || fam == famMix:
		return tripleTables(fam, machine, rows)
	case fam == famSweep:
		return []Table{sweepTable(machine, rows)}
	case fam == famTunnel:
		return []Table{tunnelTable(machine, rows)}
	default:
		return []Table{handshakeTable(machine, rows)}
	}
}

// unitLabel appends a plain row's unit: "ka-1k, k req/s".
func unitLabel(label string, unit results.Unit) string { return label + ", " + string(unit) }

// rowLabel is the one label of a scenario's row in the tables of its
// family, which compare names its cells by: the load in the plain
// families ("ka-1k"; their table names the mode), the scenario's name in
// the HTTPS, mix and sustainable rate families ("tls-term-ka-1k",
// "mix-http-3k", "mix-http-sweep"), the load in stunnel's
// ("TLS_AES_128_GCM_SHA256-up", "full").
func rowLabel(mode results.Mode, load string) string {
	switch fam := familyOf(mode, load); {
	case plain(fam):
		return strings.TrimPrefix(load, "http-")
	case fam == famHTTPS || fam == famMix || fam == famSweep:
		return results.ScenarioName(mode, load)
	}
	return load
}

func plainTable(fam, machine string, rows []*results.Row) Table {
	g := newGrid(rows, func(r *results.Row) (string, string) { return r.Load, rowLabel(r.Mode, r.Load) }, nil)
	names, groups := g.header()
	t := Table{Family: fam, Kind: "throughput", Machine: machine, Session: rows[0].Session,
		Corner: "scenario (" + short(machine) + ")", Columns: names, Groups: groups, Failed: g.failed, Notes: g.notes, runNotes: g.runs1}
	starOnly := fam == famConnect || fam == famSocks
	for _, k := range g.keys {
		unit := results.UnitOf(g.modes[k], g.loads[k])
		cells := make([]Cell, len(g.cols))
		spreads := make([]*spread, len(g.cols))
		for i, c := range g.cols {
			runs := g.runs[[2]string{k, c.proxy}]
			s := summarize(runs, unit.Of)
			fig := "–"
			if s.ok {
				fig = fixed(s.med, 1)
			}
			cells[i] = cellOf(c, s, fig)
			cells[i].Bound = c.group != results.Baseline && boundElsewhere(runs)
			cells[i].NoSplice = neverSpliced(c, runs)
			cells[i].fromRuns(runs)
			spreads[i] = newSpread(c.group, s)
		}
		markCells(cells, spreads, starOnly)
		t.Rows = append(t.Rows, TableRow{Label: unitLabel(g.labels[k], unit), Cells: cells, unit: unit})
	}
	return t
}

// tripleTables builds the throughput, CPU and memory tables of the HTTPS
// and mix families. Their cells carry ‡ in the throughput table and no
// other mark, as in the reference results.
func tripleTables(fam, machine string, rows []*results.Row) []Table {
	g := newGrid(rows, func(r *results.Row) (string, string) {
		label := rowLabel(r.Mode, r.Load)
		return label, label
	}, nil)
	names, groups := g.header()
	base := Table{Family: fam, Machine: machine, Session: rows[0].Session, Corner: "scenario",
		Columns: names, Groups: groups}
	thr, cpu, mem := base, base, base
	thr.Kind, thr.Title, thr.Failed, thr.Notes, thr.runNotes = "throughput", titleThroughput, g.failed, g.notes, g.runs1
	cpu.Kind, cpu.Title = "cpu", titleCPU
	mem.Kind, mem.Title = "memory", titleMemory
	for _, k := range g.keys {
		load := g.loads[k]
		var tc, cc, mc []Cell
		for _, c := range g.cols {
			runs := g.runs[[2]string{k, c.proxy}]
			baseline := c.group == results.Baseline

			// throughput: Gbit/s, and requests a second unless a stream
			s := summarize(runs, gbits)
			var fig string
			switch {
			case results.Stream(load) && s.ok:
				fig = fixed(s.med, 1)
			case results.Stream(load):
				fig = "–"
			case s.ok:
				fig = smallGbits(s.med) + " (" + fixed(summarize(runs, kreqs).med, 1) + "k/s)"
			default:
				fig = noFigureMix
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
			s = summarize(runs, f)
			switch {
			case baseline:
				s, fig = summary{}, "–"
			case !s.ok:
				fig = "–" + unit
			case results.Bulk(load):
				fig = fixed(s.med, 2) + unit
			default:
				fig = thousands(s.med) + unit
			}
			cell = cellOf(c, s, fig)
			cell.finish()
			cc = append(cc, cell)

			// peak memory, MB
			s = summarize(runs, megabytes)
			fig = "–"
			if baseline {
				s = summary{}
			} else if s.ok {
				fig = thousands(s.med)
			}
			cell = cellOf(c, s, fig)
			cell.finish()
			mc = append(mc, cell)
		}
		label := g.labels[k]
		thr.Rows = append(thr.Rows, TableRow{Label: label, Cells: tc, unit: results.UnitOf(g.modes[k], load)})
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
		return fixed(v, 3)
	}
	return fixed(v, 2)
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

// directions are the columns of a tunnel's table, loads "<suite>-up" and
// "<suite>-down".
var directions = []string{"Client to server", "Server to client"}

// tunnelTable is stunnel's throughput table: Gbit/s per cipher suite,
// client to server (load "<suite>-up") and server to client ("-down").
func tunnelTable(machine string, rows []*results.Row) Table {
	g := newGrid(rows, func(r *results.Row) (string, string) {
		suite := strings.TrimSuffix(strings.TrimSuffix(r.Load, "-up"), "-down")
		return r.Proxy + "\x00" + suite, suite
	}, func(r *results.Row) string { return r.Load })
	t := Table{Family: famTunnel, Kind: "throughput", Machine: machine, Session: rows[0].Session,
		Corner: "Ciphersuite", Columns: slices.Clone(directions),
		Groups: []string{"", ""}, Failed: g.failed, Notes: g.notes, runNotes: g.runs1}
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
			s := summarize(runs, gbits)
			fig := "–"
			if s.ok {
				fig = fixed(s.med, 2) + " Gbit/s"
			}
			cell := cellOf(col, s, fig)
			cell.fromRuns(runs)
			cell.finish()
			cells = append(cells, cell)
		}
		t.Rows = append(t.Rows, TableRow{Label: labels[i], Cells: cells, unit: results.Gbits})
	}
	return t
}

// handshakeTable is stunnel's handshake table: connections a second, full
// handshakes (load "full") and resumed sessions ("resumed").
func handshakeTable(machine string, rows []*results.Row) Table {
	g := newGrid(rows, func(r *results.Row) (string, string) { return r.Proxy + "\x00" + r.Load, r.Load }, nil)
	t := Table{Family: famHandshake, Kind: "handshake", Machine: machine, Session: rows[0].Session,
		Corner: "Handshake", Columns: []string{"Connections/s"}, Groups: []string{""}, Failed: g.failed, Notes: g.notes, runNotes: g.runs1}
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
		s := summarize(runs, reqs)
		fig := "–"
		if s.ok {
			fig = thousands(s.med)
		}
		cell := cellOf(col, s, fig)
		cell.fromRuns(runs)
		cell.finish()
		t.Rows = append(t.Rows, TableRow{Label: labels[i], Cells: []Cell{cell}, unit: results.Conns})
	}
	return t
}

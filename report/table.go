package report

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"bench/inputerr"
	"bench/results"
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

	RunNotes []runNote `json:"-"` // the ok runs' notes, each with its cell, for the detail
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

	Unit results.Unit `json:"-"` // the unit of the scenario (results.UnitOf), for the charts
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
	// Sustainable rate table, most of the windows its searches found.
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

	Figure    string          `json:"-"` // the figure alone, for markdown's bold
	p99s      []float64       // the ok runs' p99, where the load tool gives it, for the headlines
	pace      results.Bound   // the role that set the pace of most runs (paceOf)
	IDs       []results.RunID `json:"-"` // the ok runs, for the charts of their data
	MedianRun *results.RunID  `json:"-"` // the run of the median figure, whose profile the page links (MedianRun)
	Chart     Summary         `json:"-"` // the ok runs' figures in their scenario's unit (results.UnitOf), for the bar charts
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
	FamHTTP      = "HTTP proxy"
	famConnect   = "CONNECT tunnel"
	famSocks     = "SOCKSv5 tunnel"
	famRelay     = "TCP relay"
	famHTTPS     = "HTTPS"
	FamMix       = "mix scenarios"
	FamSweep     = "Sustainable rate"
	FamTunnel    = "TLS tunnel"
	FamHandshake = "TLS handshakes"
	famCombined  = "Throughput"
)

// Families are the tables' families in the order of the report.
var Families = []string{FamHTTP, famConnect, famSocks, famRelay, famHTTPS, FamMix, FamSweep, FamTunnel, FamHandshake}

// FamilyOf maps a mode and a load to their family: a sweep's steps
// (results.LoadSweep) to the Sustainable rate, apart from the mixes'
// other loads; the others by their mode.
func FamilyOf(mode results.Mode, load string) string {
	if load == results.LoadSweep {
		return FamSweep
	}
	switch mode {
	case results.HTTP:
		return FamHTTP
	case results.Connect:
		return famConnect
	case results.Socks:
		return famSocks
	case results.Relay:
		return famRelay
	case results.TLSTerm, results.TLSInit:
		return famHTTPS
	case results.TLSTunnel:
		return FamTunnel
	case results.TLSHandshake:
		return FamHandshake
	}
	return FamMix
}

func plain(family string) bool {
	return family == FamHTTP || family == famConnect || family == famSocks || family == famRelay
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
// inputerr.Error.
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
			return nil, inputerr.Bad(fmt.Errorf("no session %q in the files; they hold %s", opt.Session, strings.Join(ids, ", ")))
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
	return nil, inputerr.Bad(fmt.Errorf("unknown layout %q (want %s or %s)", opt.Layout, LayoutMachine, LayoutCombined))
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
		f := FamilyOf(r.Mode, r.Load)
		fams[f] = append(fams[f], r)
	}
	var out []Table
	for _, fam := range Families {
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

package report

import (
	"fmt"
	"slices"
	"strings"

	"bench/internal/text"
	"bench/results"
)

// The summary that opens a session, in the page and the markdown: a line
// per family of tables on a machine, the answer of its ranked tables
// across their loads: which column led how many rows and by how much
// (Headlines), which role set the pace of its cells, and which cells
// failed more than ErrorWarn of their exchanges.

// SummaryHead titles the summary.
const SummaryHead = "Summary"

// FamilyGroup are the tables of one family on one machine of a session,
// in the order of the report.
type FamilyGroup struct {
	Session, Family, Machine string
	Tables                   []Table
}

// ByFamily groups tables by session, family and machine, as the report
// heads them.
func ByFamily(tables []Table) []FamilyGroup {
	var out []FamilyGroup
	for _, t := range tables {
		if n := len(out); n > 0 && out[n-1].Session == t.Session && out[n-1].Family == t.Family && out[n-1].Machine == t.Machine {
			out[n-1].Tables = append(out[n-1].Tables, t)
			continue
		}
		out = append(out, FamilyGroup{t.Session, t.Family, t.Machine, []Table{t}})
	}
	return out
}

// summaryLine is the summary of a family on a machine: "HTTP proxy on
// EPYC: nginx led 2 of 5 rows (ahead of the runner-up 1.01–1.76 times),
// haproxy 1 (...); 2 rows level; the pace set by the proxy in 20 cells,
// the client in 4; exchanges failed in 7 cells, more than 1% of theirs
// in 5: tinyproxy 3 (up to 99%), squid 2 (up to 3%)". At a fixed rate a
// leader is ahead by the runner-up's p99 over its own. Empty for a
// family with no ranked table.
func summaryLine(f FamilyGroup) string {
	fc := countFamily(f)
	if !fc.ranked {
		return ""
	}
	var parts []string
	if len(fc.leads) > 0 {
		parts = append(parts, leadsText(fc.leads, fc.rows))
	}
	if fc.level > 0 {
		parts = append(parts, text.Plural(fc.level, "row")+" level")
	}
	if p := paceText(fc.pace); p != "" {
		parts = append(parts, p)
	}
	parts = append(parts, failingText(fc.fails, fc.failed, fc.failedAny))
	return f.Family + " on " + f.Machine + ": " + strings.Join(parts, "; ") + "."
}

// familyLead is a column that led rows of a family's ranked tables by a
// real difference (or with no runner-up): how many, how many of them
// without splicing (a splicing column that never spliced), and the range
// of its ratios to the runner-up.
type familyLead struct {
	name          string
	rows, copying int
	lo, hi        float64 // the ratios to the runner-up
}

// ratios is the range of l's ratios to the runner-up: "1.01–1.76", or
// one figure where they round the same.
func (l *familyLead) ratios() string {
	by := text.Fixed(l.lo, 2)
	if hi := text.Fixed(l.hi, 2); hi != by {
		by += "–" + hi
	}
	return by
}

// familyFailing is a column with cells beyond ErrorWarn in a family's
// ranked tables: how many, and the largest share of failed exchanges of
// them.
type familyFailing struct {
	name  string
	cells int
	worst float64
}

// String is the failing column as the summary names it: "squid 2 (up to
// 3%)".
func (x *familyFailing) String() string {
	return fmt.Sprintf("%s %d (up to %s)", x.name, x.cells, text.SharePercent(x.worst))
}

// familyCounts are what summaryLine says of a family's ranked tables:
// the leaders, the most rows led first, and the rows; the cells whose
// pace each role set; the columns with failing cells, the most cells
// first, and the failing cells. Ranked is false when the family has no
// ranked table.
type familyCounts struct {
	leads     []*familyLead
	rows      int
	level     int // rows whose fastest and runner-up cannot be told apart
	pace      map[results.Bound]int
	fails     []*familyFailing
	failed    int // cells beyond ErrorWarn
	failedAny int // cells with a failed exchange
	ranked    bool
}

// countFamily counts the leaders, the paces and the failing cells of
// f's ranked tables.
func countFamily(f FamilyGroup) familyCounts {
	fc := familyCounts{pace: map[results.Bound]int{}}
	for _, t := range f.Tables {
		if !Ranked(t) {
			continue
		}
		fc.ranked = true
		for _, h := range Headlines(t) {
			fc.rows++
			fc.lead(h)
		}
		for _, r := range t.Rows {
			for _, c := range r.Cells {
				if c.Median == nil {
					continue
				}
				if c.pace != "" {
					fc.pace[c.pace]++
				}
				if FailureText(c) != "" {
					fc.failedAny++
				}
				if Erring(c) {
					fc.failed++
					fc.failing(c)
				}
			}
		}
	}
	slices.SortStableFunc(fc.leads, func(a, b *familyLead) int { return b.rows - a.rows })
	slices.SortStableFunc(fc.fails, func(a, b *familyFailing) int { return b.cells - a.cells })
	return fc
}

// lead counts headline h's row for its leader, and its ratio to the
// runner-up: at a fixed rate, the runner-up's p99 over the leader's; or,
// where the two are level, as a level row.
func (fc *familyCounts) lead(h Headline) {
	if h.Level {
		fc.level++
		return
	}
	i := slices.IndexFunc(fc.leads, func(l *familyLead) bool { return l.name == h.Fastest })
	if i < 0 {
		fc.leads = append(fc.leads, &familyLead{name: h.Fastest})
		i = len(fc.leads) - 1
	}
	l := fc.leads[i]
	l.rows++
	if h.NeverSpliced {
		l.copying++
	}
	if h.RunnerUp != "" && h.Ratio > 0 {
		q := h.Ratio
		if h.Metric != "" {
			q = 1 / q // a latency: the runner-up's over the fastest's
		}
		if l.lo == 0 || q < l.lo {
			l.lo = q
		}
		l.hi = max(l.hi, q)
	}
}

// failing counts the failing cell c for its column.
func (fc *familyCounts) failing(c Cell) {
	i := slices.IndexFunc(fc.fails, func(x *familyFailing) bool { return x.name == c.Proxy })
	if i < 0 {
		fc.fails = append(fc.fails, &familyFailing{name: c.Proxy})
		i = len(fc.fails) - 1
	}
	fc.fails[i].cells++
	fc.fails[i].worst = max(fc.fails[i].worst, *c.ErrorShare)
}

// leadsText is the leaders' part of a summary line, each lead real:
// "nginx led 4 of 5 rows (ahead of the runner-up 1.01–1.76 times),
// haproxy splice-auto 1 (ahead of the runner-up 1.10 times; never
// spliced in 1)", of rows in all.
func leadsText(leads []*familyLead, rows int) string {
	var ls []string
	for i, l := range leads {
		s := fmt.Sprintf("%s %d", l.name, l.rows)
		if i == 0 {
			s = fmt.Sprintf("%s led %d of %d rows", l.name, l.rows, rows)
		}
		if l.lo > 0 {
			s += fmt.Sprintf(" (ahead of the runner-up %s times", l.ratios())
			if l.copying > 0 {
				s += fmt.Sprintf("; never spliced in %d", l.copying)
			}
			s += ")"
		}
		ls = append(ls, s)
	}
	return strings.Join(ls, ", ")
}

// paceText is the paces' part of a summary line: "the pace set by the
// proxy in 20 cells, the client in 4", the roles in results.Bounds'
// order; empty when no cell's pace is known.
func paceText(pace map[results.Bound]int) string {
	var ps []string
	for _, b := range results.Bounds {
		if n := pace[b]; n > 0 {
			role := "the " + string(b)
			if b == results.BoundNone {
				role = "no role"
			}
			p := fmt.Sprintf("%s in %d", role, n)
			if len(ps) == 0 {
				p += " cell"
				if n > 1 {
					p += "s"
				}
			}
			ps = append(ps, p)
		}
	}
	if len(ps) == 0 {
		return ""
	}
	return "the pace set by " + strings.Join(ps, ", ")
}

// failingText is the failures' part of a summary line: "exchanges
// failed in 7 cells, more than 1% of theirs in 5: tinyproxy 3 (up to
// 99%), squid 2 (up to 3%)", of failed cells beyond ErrorWarn and any
// cells with a failed exchange; or that none failed any.
func failingText(fails []*familyFailing, failed, any int) string {
	switch {
	case any == 0:
		return "no cell failed an exchange"
	case failed == 0:
		return fmt.Sprintf("exchanges failed in %s, none more than %s of theirs", text.Plural(any, "cell"), text.SharePercent(ErrorWarn))
	}
	var fs []string
	for _, x := range fails {
		fs = append(fs, x.String())
	}
	return fmt.Sprintf("exchanges failed in %s, more than %s of theirs in %d: %s", text.Plural(any, "cell"), text.SharePercent(ErrorWarn), failed, strings.Join(fs, ", "))
}

// FamilySummary is the summary of a family's ranked tables on a machine
// in short parts, a row of the page's first screen: the leaders (their
// rows, and how far ahead of the runner-up), the rows level, the cells
// with failed exchanges, and the roles that set the pace.
type FamilySummary struct {
	Family, Machine string
	Rows            int    // the ranked rows
	Leads           string // "nginx 3 (1.50–1.96×), haproxy 1 (1.10×)"; "none"
	Level           int    // the rows whose fastest and runner-up are level
	Failed          string // "none"; "7 cells, none over 1%"; "7 cells; over 1%: squid 2 (up to 3%)"
	Pace            string // "proxy 22, client 8"
}

// FamilySummaries are the summaries of a session's families that have
// ranked tables, in the order of the report.
func FamilySummaries(session string, tables []Table) []FamilySummary {
	var out []FamilySummary
	for _, f := range ByFamily(tables) {
		if f.Session != session {
			continue
		}
		fc := countFamily(f)
		if !fc.ranked {
			continue
		}
		fs := FamilySummary{Family: f.Family, Machine: f.Machine, Rows: fc.rows, Level: fc.level, Leads: "none", Failed: "none"}
		var leads []string
		for _, l := range fc.leads {
			s := fmt.Sprintf("%s %d", l.name, l.rows)
			var why []string
			if l.lo > 0 {
				why = append(why, l.ratios()+"×")
			}
			if l.copying > 0 {
				why = append(why, fmt.Sprintf("never spliced in %d", l.copying))
			}
			if len(why) > 0 {
				s += " (" + strings.Join(why, "; ") + ")"
			}
			leads = append(leads, s)
		}
		if len(leads) > 0 {
			fs.Leads = strings.Join(leads, ", ")
		}
		switch {
		case fc.failedAny > 0 && fc.failed == 0:
			fs.Failed = fmt.Sprintf("%s, none over %s", text.Plural(fc.failedAny, "cell"), text.SharePercent(ErrorWarn))
		case fc.failedAny > 0:
			var ws []string
			for _, x := range fc.fails {
				ws = append(ws, x.String())
			}
			fs.Failed = fmt.Sprintf("%s; over %s: %s", text.Plural(fc.failedAny, "cell"), text.SharePercent(ErrorWarn), strings.Join(ws, ", "))
		}
		var ps []string
		for _, b := range results.Bounds {
			if n := fc.pace[b]; n > 0 {
				role := string(b)
				if b == results.BoundNone {
					role = "no role"
				}
				ps = append(ps, fmt.Sprintf("%s %d", role, n))
			}
		}
		fs.Pace = strings.Join(ps, ", ")
		out = append(out, fs)
	}
	return out
}

// FamilySummaryHeader is the header of the page's table of the family
// summaries, in FamilySummary's order.
var FamilySummaryHeader = []string{"Family", "Led (rows; × the runner-up)", "Level", "Failed exchanges", "Pace set by (cells)"}

// SummaryLines are the summary of a session's tables, a line a family on
// a machine.
func SummaryLines(session string, tables []Table) []string {
	var out []string
	for _, f := range ByFamily(tables) {
		if f.Session != session {
			continue
		}
		if l := summaryLine(f); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// SummaryNote says how the summary reads, under it.
const SummaryNote = "Led: the rows whose fastest is ahead of the runner-up by a real difference (the headlines'), " +
	"and by how much (×): its figure over the runner-up's (at a fixed rate, the runner-up's p99 over its own); level: the rows where the two cannot be told apart; " +
	"failed exchanges: the cells where any failed, and those where more than 1% did; the pace: the role that set the pace of most of a cell's runs."

// Anchor is the id of a heading of the page: its words lower case,
// joined by "-", anything else dropped.
func Anchor(words ...string) string {
	var b strings.Builder
	for _, w := range words {
		for _, r := range strings.ToLower(w) {
			switch {
			case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
				b.WriteRune(r)
			case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
				b.WriteByte('-')
			}
		}
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "-") {
			b.WriteByte('-')
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

package report

import (
	"bench/report/results"
	"fmt"
	"slices"
	"strings"
)

// The summary that opens a session, in the page and the markdown: a line
// per family of tables on a machine, the answer of its ranked tables
// across their loads: which column led how many rows and by how much
// (Headlines), which role set the pace of its cells, and which cells
// failed more than ErrorWarn of their exchanges.

// summaryHead titles the summary.
const summaryHead = "Summary"

// familyGroup are the tables of one family on one machine of a session,
// in the order of the report.
type familyGroup struct {
	session, family, machine string
	tables                   []Table
}

// byFamily groups tables by session, family and machine, as the report
// heads them.
func byFamily(tables []Table) []familyGroup {
	var out []familyGroup
	for _, t := range tables {
		if n := len(out); n > 0 && out[n-1].session == t.Session && out[n-1].family == t.Family && out[n-1].machine == t.Machine {
			out[n-1].tables = append(out[n-1].tables, t)
			continue
		}
		out = append(out, familyGroup{t.Session, t.Family, t.Machine, []Table{t}})
	}
	return out
}

// summaryLine is the summary of a family on a machine: "HTTP proxy on
// EPYC: nginx led 4 of 5 rows (ahead of the runner-up 1.01–1.76 times,
// real in 2), haproxy 1 (...); the pace set by the proxy in 20 cells, the
// client in 4; more than 1% of the exchanges failed in 5 cells:
// tinyproxy 3 (up to 99%), squid 2 (up to 3%)". At a fixed rate a
// leader is ahead by the runner-up's p99 over its own. Empty for a
// family with no ranked table.
func summaryLine(f familyGroup) string {
	type lead struct {
		name       string
		rows, real int
		lo, hi     float64 // the ratios to the runner-up
	}
	var leads []*lead
	rows := 0
	pace := map[results.Bound]int{}
	type failing struct {
		name  string
		cells int
		worst float64
	}
	var fails []*failing
	failed := 0
	anyRanked := false
	for _, t := range f.tables {
		if !ranked(t) {
			continue
		}
		anyRanked = true
		for _, h := range Headlines(t) {
			rows++
			i := slices.IndexFunc(leads, func(l *lead) bool { return l.name == h.Fastest })
			if i < 0 {
				leads = append(leads, &lead{name: h.Fastest, lo: h.Ratio, hi: h.Ratio})
				i = len(leads) - 1
			}
			l := leads[i]
			l.rows++
			if h.Real {
				l.real++
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
		for _, r := range t.Rows {
			for _, c := range r.Cells {
				if c.Median == nil {
					continue
				}
				if c.pace != "" {
					pace[c.pace]++
				}
				if erring(c) {
					failed++
					i := slices.IndexFunc(fails, func(x *failing) bool { return x.name == c.Proxy })
					if i < 0 {
						fails = append(fails, &failing{name: c.Proxy})
						i = len(fails) - 1
					}
					fails[i].cells++
					fails[i].worst = max(fails[i].worst, *c.ErrorShare)
				}
			}
		}
	}
	if !anyRanked {
		return ""
	}
	var parts []string
	slices.SortStableFunc(leads, func(a, b *lead) int { return b.rows - a.rows })
	if len(leads) > 0 {
		var ls []string
		for i, l := range leads {
			s := fmt.Sprintf("%s %d", l.name, l.rows)
			if i == 0 {
				s = fmt.Sprintf("%s led %d of %d rows", l.name, l.rows, rows)
			}
			if l.lo > 0 {
				by := fixed(l.lo, 2)
				if fixed(l.hi, 2) != by {
					by += "–" + fixed(l.hi, 2)
				}
				real := "none real"
				if l.real > 0 {
					real = fmt.Sprintf("real in %d", l.real)
				}
				s += fmt.Sprintf(" (ahead of the runner-up %s times, %s)", by, real)
			}
			ls = append(ls, s)
		}
		parts = append(parts, strings.Join(ls, ", "))
	}
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
	if len(ps) > 0 {
		parts = append(parts, "the pace set by "+strings.Join(ps, ", "))
	}
	if failed == 0 {
		parts = append(parts, "no cell failed more than "+sharePercent(ErrorWarn)+" of its exchanges")
	} else {
		slices.SortStableFunc(fails, func(a, b *failing) int { return b.cells - a.cells })
		var fs []string
		for _, x := range fails {
			fs = append(fs, fmt.Sprintf("%s %d (up to %s)", x.name, x.cells, sharePercent(x.worst)))
		}
		parts = append(parts, fmt.Sprintf("more than %s of the exchanges failed in %d cells: %s", sharePercent(ErrorWarn), failed, strings.Join(fs, ", ")))
	}
	return f.family + " on " + f.machine + ": " + strings.Join(parts, "; ") + "."
}

// summaryLines are the summary of a session's tables, a line a family on
// a machine.
func summaryLines(session string, tables []Table) []string {
	var out []string
	for _, f := range byFamily(tables) {
		if f.session != session {
			continue
		}
		if l := summaryLine(f); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// summaryNote says how the summary reads, under it.
const summaryNote = "Led: the headline's fastest of the row (at a fixed rate, the lowest p99 of the cells that did not fail); " +
	"the pace: the role that set the pace of most of a cell's runs."

// anchor is the id of a heading of the page: its words lower case,
// joined by "-", anything else dropped.
func anchor(words ...string) string {
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

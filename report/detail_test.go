package report

import (
	"strings"
	"testing"

	"bench/results"
)

// TestHeadlines: the fastest proxy of a row against the runner-up and no
// proxy, real where their runs' ranges do not overlap, else the two
// level, no leader named; no verdict where a cell has a single run; a
// lead of a splicing column that never spliced says so.
func TestHeadlines(t *testing.T) {
	cell := func(proxy string, g results.Group, runs ...float64) Cell {
		s := summaryOf(runs)
		c := cellOf(column{proxy, g}, s, "")
		return c
	}
	neverSpliced := func(c Cell) Cell {
		c.NoSplice = true
		return c
	}
	for _, c := range []struct {
		name  string
		cells []Cell
		want  string
	}{
		// apart: 20 to 22 against 10 to 11
		{"real", []Cell{cell("no proxy", results.Baseline, 40, 40, 40), cell("a", results.Copy, 10, 10.5, 11), cell("b", results.Copy, 20, 21, 22)},
			"r: b: 2.00 ± 0.13 times a (real, range), 0.53 ± 0.03 times no proxy"},
		// overlapping ranges
		{"noise", []Cell{cell("a", results.Copy, 10, 11, 12), cell("b", results.Splice, 11.5, 11.6, 11.7)},
			"r: b and a level: 1.05 ± 0.10 (within noise, range)"},
		// 4 runs a side: the U test decides
		{"U", []Cell{cell("a", results.Copy, 1, 1, 1, 1), cell("b", results.Copy, 2, 2, 2, 2)},
			"r: b: 2.00 times a (real, U p=0.029)"},
		// one run each: no spread, so no verdict, however far apart
		{"one run", []Cell{cell("a", results.Copy, 10), cell("b", results.Copy, 20)},
			"r: b and a, not told apart: 2.00 times a (one run: no spread to tell it from noise)"},
		// one proxy and no proxy
		{"alone", []Cell{cell("no proxy", results.Baseline, 10), cell("a", results.Copy, 5)},
			"r: a: 0.50 times no proxy"},
		// level, and no proxy beside them: the ratio to no proxy is the
		// first's, and says so
		{"level with no proxy", []Cell{cell("no proxy", results.Baseline, 20, 20, 20), cell("a", results.Copy, 10, 11, 12), cell("b", results.Copy, 11.5, 11.6, 11.7)},
			"r: b and a level: 1.05 ± 0.10 (within noise, range), b 0.58 times no proxy"},
		// a splicing column that never spliced leads as a copying proxy
		{"never spliced", []Cell{cell("a", results.Copy, 10, 10.5, 11), neverSpliced(cell("s", results.Splice, 20, 21, 22))},
			"r: s (never spliced: its lead is a copying proxy's): 2.00 ± 0.13 times a (real, range)"},
	} {
		hs := Headlines(Table{Kind: "throughput", Family: FamHTTP, Rows: []TableRow{{Label: "r", Cells: c.cells}}})
		if len(hs) != 1 || hs[0].String() != c.want {
			t.Errorf("Headlines(%s) = %v; want %q", c.name, hs, c.want)
		}
	}
	// one proxy alone: nothing to set it against
	if hs := Headlines(Table{Kind: "throughput", Family: famSocks, Rows: []TableRow{{Label: "r", Cells: []Cell{cell("a", results.Copy, 1, 2)}}}}); len(hs) != 0 {
		t.Errorf("Headlines(one proxy) = %v; want none", hs)
	}
}

// TestGroupNotes: a cell's notes that differ in their figures alone are
// one, each figure intact or the range of the cell's runs'; a part that
// reads the same in several cells is one line with them.
func TestGroupNotes(t *testing.T) {
	for _, c := range []struct {
		name  string
		notes []runNote
		want  []string
	}{
		// one note over two cells' runs: a line a cell, each its own range
		{"ranges", []runNote{{"a", "x", "3 errors beside 10"}, {"a", "x", "5 errors beside 10"}, {"b", "y", "4 errors beside 10"}},
			[]string{"a x: 3–5 errors beside 10", "b y: 4 errors beside 10"}},
		// a note of two parts: the one both cells have once with them
		{"parts", []runNote{{"a", "x", "9950 of 20000 connections; 1 error (2 of them late)"}, {"b", "y", "9950 of 20000 connections"}},
			[]string{"9950 of 20000 connections — a x; b y", "a x: 1 error (2 of them late)"}},
		// a ; inside parentheses does not split
		{"parenthesis", []runNote{{"a", "x", "group X (the OpenSSL; 3.0)"}},
			[]string{"a x: group X (the OpenSSL; 3.0)"}},
		// the digits of a name are no figure: the cipher suites stay apart and whole
		{"names", []runNote{{"a", "up", "negotiated TLSv1.3, TLS_AES_128_GCM_SHA256, X25519"}, {"a", "up", "negotiated TLSv1.3, TLS_AES_256_GCM_SHA384, X25519"}},
			[]string{"a up: negotiated TLSv1.3, TLS_AES_128_GCM_SHA256, X25519; negotiated TLSv1.3, TLS_AES_256_GCM_SHA384, X25519"}},
		// figures with decimals, the same in each run: kept as written
		{"decimals", []runNote{{"a", "x", "p99 2.50 ms"}, {"a", "x", "p99 2.50 ms"}, {"a", "x", "p99 3.1 ms"}},
			[]string{"a x: p99 2.50–3.1 ms"}},
	} {
		got := GroupNotes(c.notes)
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("groupNotes(%s) = %q; want %q", c.name, got, c.want)
		}
	}
}

// TestErrorShare: the ! mark beyond 1% of a cell's exchanges errored or
// timed out, summed over its runs.
func TestErrorShare(t *testing.T) {
	run := func(requests, errors, timeouts int64) *results.Row {
		return &results.Row{Requests: requests, Errors: errors, Timeouts: timeouts}
	}
	for _, c := range []struct {
		name string
		runs []*results.Row
		want bool
	}{
		// none
		{"clean", []*results.Row{run(1000, 0, 0)}, false},
		// 0.5%
		{"below", []*results.Row{run(995, 5, 0)}, false},
		// 2% over two runs, one clean
		{"beyond", []*results.Row{run(1000, 0, 0), run(960, 10, 30)}, true},
		// nothing answered
		{"unanswered", []*results.Row{run(0, 0, 7)}, true},
		// a read error after each answer (tinyproxy's connections): no failure
		{"closed after each answer", []*results.Row{run(14933, 14913, 0), run(18085, 18083, 0)}, false},
		// the same, and 6% timeouts: those are failures
		{"closed, and timeouts", []*results.Row{run(4095, 4095, 261)}, true},
	} {
		if got := Erring(Cell{ErrorShare: errorShare(c.runs)}); got != c.want {
			t.Errorf("erring(%s) = %v; want %v", c.name, got, c.want)
		}
	}
}

// TestHeadlinesByLoad: a fixed-rate row ranks by p99, lowest first,
// among the cells that failed no more than 1% of their exchanges, and
// names those that did; "real" only where the ± does not reach no
// change; a proxy faster than no proxy says why.
func TestHeadlinesByLoad(t *testing.T) {
	share := func(v float64) *float64 { return &v }
	cell := func(proxy, load string, g results.Group, runs ...float64) Cell {
		c := cellOf(column{proxy, g}, summaryOf(runs), "")
		c.IDs = []results.RunID{{Proxy: proxy, Load: load}}
		return c
	}
	// latency: a cell whose p99 runs are p99s, and whose share failed
	latency := func(c Cell, failed *float64, p99s ...float64) Cell {
		s := summaryOf(p99s)
		c.P99, c.p99s, c.ErrorShare = &s.Median, p99s, failed
		return c
	}
	paced := func(c Cell, b results.Bound) Cell { c.pace = b; return c }
	for _, c := range []struct {
		name  string
		cells []Cell
		want  string
	}{
		// at a fixed rate, by p99: b's lower latency wins though a
		// delivers more, each failing as few, and says its failures;
		// c's 9% of failed exchanges keep it out
		{"fixed rate", []Cell{
			latency(cell("a", "mix-3k", results.Copy, 3.0, 3.0, 3.0), share(0.001), 8, 9, 10),
			latency(cell("b", "mix-3k", results.Copy, 2.9, 2.9, 2.9), share(0.001), 4, 4.5, 5),
			latency(cell("c", "mix-3k", results.Copy, 2.0, 2.0, 2.0), share(0.09), 1, 1, 1),
		}, "r, p99 at its fixed rate: b !0.1%: 4.50 ms, 0.50 ± 0.08 times a's (real, range); left out, having failed more of their exchanges: c !9%"},
		// a cell never leads over one that failed less: b, faster, left
		// out for its 0.1% beside a's none
		{"fewest failed", []Cell{
			cell("a", "ka-1k", results.Copy, 10, 10.5, 11),
			latency(cell("b", "ka-1k", results.Copy, 20, 21, 22), share(0.001), 1, 1, 1),
			cell("c", "ka-1k", results.Copy, 5, 5.5, 6),
		}, "r: a: 1.91 ± 0.20 times c (real, range); left out, having failed more of their exchanges: b !0.1%"},
		// the closed-loop mix still ranks by its figure
		{"closed loop", []Cell{
			latency(cell("a", "mix", results.Copy, 10, 10.5, 11), nil, 8, 9, 10),
			latency(cell("b", "mix", results.Copy, 20, 21, 22), nil, 1, 1, 1),
		}, "r: b: 2.00 ± 0.13 times a (real, range)"},
		// apart by range, but the ± (0.23) reaches no change
		{"wide", []Cell{cell("a", "ka-1k", results.Copy, 8, 10, 10.1), cell("b", "ka-1k", results.Copy, 10.2, 12, 14)},
			"r: b and a level: 1.20 ± 0.23 (within noise: the ± reaches no change, though range tells them apart)"},
		// faster than no proxy whose runs the client paced
		{"client paced", []Cell{paced(cell("no proxy", "ka-1k", results.Baseline, 10, 10, 10), results.BoundClient), cell("a", "ka-1k", results.Copy, 12, 12, 12)},
			"r: a: 1.20 times no proxy (faster than no proxy: the client set the pace of no proxy's runs)"},
		// faster than no proxy on a load of a connection an exchange
		{"close", []Cell{paced(cell("no proxy", "close-1k", results.Baseline, 10, 10, 10), results.BoundProxy), cell("a", "close-1k", results.Copy, 15, 15, 15)},
			"r: a: 1.50 times no proxy (faster than no proxy: it keeps its connections to the origin open, where without it each exchange opens one)"},
		// faster, within the ±
		{"noise", []Cell{cell("no proxy", "ka-1k", results.Baseline, 9, 10, 11), cell("a", "ka-1k", results.Copy, 9.5, 10.5, 11.5)},
			"r: a: 1.05 ± 0.15 times no proxy (faster than no proxy within the ±: no change)"},
		// faster, and nothing in the files says why
		{"unexplained", []Cell{paced(cell("no proxy", "ka-1k", results.Baseline, 10, 10, 10), results.BoundProxy), cell("a", "ka-1k", results.Copy, 15, 15, 15)},
			"r: a: 1.50 times no proxy (faster than no proxy beyond the ±, which neither the runs' pace nor the load explains)"},
		// at a fixed rate, a lower p99 than no proxy's is faster
		{"fixed rate baseline", []Cell{
			paced(latency(cell("no proxy", "mix-3k", results.Baseline, 3, 3, 3), nil, 10, 10, 10), results.BoundOrigin),
			latency(cell("a", "mix-3k", results.Copy, 3, 3, 3), nil, 5, 5, 5),
		}, "r, p99 at its fixed rate: a: 5.00 ms, 0.50 times no proxy's (faster than no proxy: the origin set the pace of no proxy's runs)"},
	} {
		hs := Headlines(Table{Kind: "throughput", Family: FamMix, Rows: []TableRow{{Label: "r", Cells: c.cells}}})
		if len(hs) != 1 || hs[0].String() != c.want {
			t.Errorf("Headlines(%s) = %v; want %q", c.name, hs, c.want)
		}
	}
}

// TestSummaryLeadRatios: a leader's ratios to its runner-up in the
// summary line are each at least 1, its first row's among them; a level
// row leads for no one, and a lead that never spliced says so: at a
// fixed rate the runner-up's p99 over the leader's, else the leader's
// figure over the runner-up's; a row with no runner-up gives none. (The
// first row's had been taken as it came, a p99 ratio uninverted: "ahead
// of the runner-up 0.95–1.05 times".)
func TestSummaryLeadRatios(t *testing.T) {
	fc := &familyCounts{}
	fc.lead(Headline{Fastest: "nginx", Metric: MetricP99, RunnerUp: "haproxy", Ratio: 0.95, Real: true})
	fc.lead(Headline{Fastest: "nginx", Metric: MetricP99, RunnerUp: "haproxy", Ratio: 0.8, Real: true})
	fc.lead(Headline{Fastest: "haproxy splice-auto", RunnerUp: "nginx", Ratio: 1.3, Real: true, NeverSpliced: true})
	fc.lead(Headline{Fastest: "squid"})
	fc.lead(Headline{Fastest: "tinyproxy", RunnerUp: "squid", Ratio: 1.0, Level: true})
	if got, want := leadsText(fc.leads, 5), "nginx led 2 of 5 rows (ahead of the runner-up 1.05–1.25 times), haproxy splice-auto 1 (ahead of the runner-up 1.30 times; never spliced in 1), squid 1"; got != want {
		t.Errorf("leads %q; want %q", got, want)
	}
	if fc.level != 1 {
		t.Errorf("%d rows level; want tinyproxy's and squid's, where neither leads", fc.level)
	}
}

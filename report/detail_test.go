package report

import (
	"bytes"
	"fmt"
	"html"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"bench/report/htmldoc"
	"bench/results"
)

// detailMeta is the metadata of pageSession's machine, as a session
// since bench recorded its build and its mix accounting writes it.
func detailMeta() *results.Meta {
	return &results.Meta{
		Session: "2026-12-01",
		Machine: results.MachineInfo{Label: "Xeon, 2 CPUs", CPUs: 2, MemoryBytes: 8 << 30},
		Settings: results.Settings{Scenario: "all", Reps: 3,
			Window: results.Span(4 * time.Second), Warmup: results.Span(time.Second)},
		Bench:         &results.BuildInfo{Version: "v1.4.0", Revision: "0123456789abcdef0123", Go: "go1.26.0"},
		MixAccounting: results.MixDue,
		CommandLine:   []string{"bench", "run", "--machine", "Xeon, 2 CPUs"},
	}
}

// noted gives pageSession's runs notes and errors: nginx's ka-1k runs
// one note whose numbers differ run to run (and 2% of their exchanges
// errored), haproxy's ka-1k one that is the same in each.
func noted(rows []results.Row) []results.Row {
	for i := range rows {
		r := &rows[i]
		switch {
		case r.Load != "ka-1k":
		case r.Proxy == "nginx":
			r.Errors = r.Requests / 50
			r.Note = fmt.Sprintf("%d errors and 0 timeouts beside %d completed exchanges", r.Errors, r.Requests)
		case r.Proxy == "haproxy":
			r.Note = "9950 of 20000 connections"
		}
	}
	return rows
}

// page renders rows as the page, with meta beside their file.
func page(t *testing.T, rows []results.Row, meta *results.Meta) string {
	t.Helper()
	var b bytes.Buffer
	opt := Options{Format: FormatHTML, Files: []results.SessionFile{{Path: "s.csv", Meta: meta}}}
	if err := Render(&b, rows, opt); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestPageDetail: the page shows each cell's spread and runs where it
// has two runs or more, a headline with a ratio and a verdict per row of
// each ranked table, the notes once each with their cells, the ! mark
// and share with its legend, and bench's build and command line in
// Setup; the markdown has the same with Detail, and without it all but
// the command line and the session's line.
func TestPageDetail(t *testing.T) {
	rows, _ := pageSession(t)
	rows = noted(rows)
	tables, err := Tables(rows, Options{Latency: true})
	if err != nil {
		t.Fatal(err)
	}
	multi, headlines := 0, 0
	for _, tb := range tables {
		for _, r := range tb.Rows {
			for _, c := range r.Cells {
				if c.Median != nil && len(c.Runs) >= 2 {
					multi++
				}
			}
		}
		if headlined(tb) {
			headlines += len(tb.Rows)
		}
	}
	if multi == 0 || headlines == 0 {
		t.Fatalf("pageSession has %d cells of 2 runs or more and %d headlined rows; want some of each", multi, headlines)
	}
	spreadRE := regexp.MustCompile(`<small class="spread" title="3 runs: [^"]+">±[0-9.]+% n=3</small>`)
	headlineRE := regexp.MustCompile(`<li>[^<]+: [^<:]+: ([0-9.]+ ms, )?[0-9.]+ (± [0-9.]+ )?times [^<]+ \((real|within noise), range\), [0-9.]+ (± [0-9.]+ )?times no proxy(&#39;s)?</li>`)
	markdownSpread := regexp.MustCompile(`±[0-9.]+% n=3`)
	markdownHeadline := regexp.MustCompile(`(?m)^- [^\n]+: [^\n:]+: ([0-9.]+ ms, )?[0-9.]+ (± [0-9.]+ )?times [^\n]+ \((real|within noise), range\)`)
	html := page(t, rows, detailMeta())
	var md, plainMD bytes.Buffer
	files := []results.SessionFile{{Path: "s.csv", Meta: detailMeta()}}
	if err := Render(&md, rows, Options{Files: files, Detail: true}); err != nil {
		t.Fatal(err)
	}
	if err := Render(&plainMD, rows, Options{Files: files}); err != nil {
		t.Fatal(err)
	}
	// the markdown has no latency tables, whose cells have no runs
	mdMulti := 0
	for _, tb := range tables {
		if tb.Kind == "latency" {
			continue
		}
		for _, r := range tb.Rows {
			for _, c := range r.Cells {
				if c.Median != nil && len(c.Runs) >= 2 {
					mdMulti++
				}
			}
		}
	}
	// nginx's ka-1k notes, once, their figures as the range of its runs'
	var errs, answered []int64
	for _, r := range rows {
		if r.Proxy == "nginx" && r.Load == "ka-1k" {
			errs, answered = append(errs, r.Errors), append(answered, r.Requests)
		}
	}
	span := func(v []int64) string {
		lo, hi := slices.Min(v), slices.Max(v)
		if lo == hi {
			return fmt.Sprint(lo)
		}
		return fmt.Sprintf("%d–%d", lo, hi)
	}
	note := "nginx ka-1k: " + span(errs) + " errors and 0 timeouts beside " + span(answered) + " completed exchanges"
	for _, c := range []struct {
		name, out      string
		spread, head   *regexp.Regexp
		spreads, heads int
	}{
		// the page: every cell of 2 runs or more, every headlined row
		{"page", html, spreadRE, headlineRE, multi, headlines},
		// the markdown with Detail: the same but the latency tables
		{"markdown", md.String(), markdownSpread, markdownHeadline, mdMulti, headlines},
	} {
		if got := len(c.spread.FindAllString(c.out, -1)); got != c.spreads {
			t.Errorf("%s: %d cells with their spread and n=3; want %d", c.name, got, c.spreads)
		}
		if got := len(c.head.FindAllString(c.out, -1)); got != c.heads {
			t.Errorf("%s: %d headlines with a ratio and a verdict; want %d:\n%s", c.name, got, c.heads, c.out)
		}
		for _, want := range []string{
			"v1.4.0 0123456789ab, go1.26.0", // bench's build in Setup
			"bench run --machine",           // the command line
			note,                            // nginx's notes once, their figures as ranges
			"haproxy ka-1k: 9950 of 20000 connections\n", // haproxy's, its figures kept
			"3 repetitions of 4s after 1s of warm-up",    // the session's line
		} {
			if c.name == "page" {
				want = strings.TrimSuffix(want, "\n")
			}
			if n := strings.Count(c.out, want); n != 1 {
				t.Errorf("%s: %q %d times; want once", c.name, want, n)
			}
		}
		mark, legend := " !2% ", "- !p%: p% of the cell's exchanges failed"
		if c.name == "page" {
			mark, legend = `title="2% of its exchanges failed`, `<li><span class="err">!p%</span>: p% of the cell&#39;s exchanges failed`
		}
		if !strings.Contains(c.out, legend) || strings.Count(c.out, mark) != 1 {
			t.Errorf("%s: no !2%% mark with its legend on nginx's ka-1k cell, 2%% of whose exchanges failed:\n%s", c.name, c.out)
		}
	}
	if !strings.Contains(plainMD.String(), "!2% ±") {
		t.Errorf("markdown without Detail: no !2%% on nginx's ka-1k cell:\n%s", plainMD.String())
	}
	// without Detail: the headlines, spreads and bench's build as well,
	// but not the command line nor the session's line
	if got := len(markdownHeadline.FindAllString(plainMD.String(), -1)); got != headlines {
		t.Errorf("markdown without Detail: %d headlines; want %d", got, headlines)
	}
	if got := len(markdownSpread.FindAllString(plainMD.String(), -1)); got != mdMulti {
		t.Errorf("markdown without Detail: %d cells with their spread and n=3; want %d", got, mdMulti)
	}
	if !strings.Contains(plainMD.String(), "v1.4.0 0123456789ab, go1.26.0") {
		t.Errorf("markdown without Detail: no bench build in Setup")
	}
	for _, absent := range []string{"command line", "3 repetitions of 4s after 1s of warm-up"} {
		if strings.Contains(plainMD.String(), absent) {
			t.Errorf("markdown without Detail has %q", absent)
		}
	}
}

// TestPageMixAccounting: the page of a session from before bench mix had
// a fixed window says its mix latency counts the answered exchanges
// only, in the latency table's caption and the percentile charts'; that
// of a session since says every exchange due in the window.
func TestPageMixAccounting(t *testing.T) {
	rows, data := pageSession(t)
	old := detailMeta()
	old.Bench, old.MixAccounting = nil, "" // as the reference session's
	noP999 := make([]results.Row, len(rows))
	for i, r := range rows {
		r.P999Ms, r.HasP999 = 0, false
		noP999[i] = r
	}
	for _, c := range []struct {
		name       string
		rows       []results.Row
		meta       *results.Meta
		want, not  string
		wantFigure string
	}{
		// a session since: its metadata says so
		{"due", rows, detailMeta(), captionMix, captionMixAnswered, "every exchange due in the window"},
		// a session from before: its metadata names neither bench's build nor the accounting
		{"answered", rows, old, captionMixAnswered, captionMix, "the answered exchanges only"},
		// no metadata: a mix row with p99.9 is from a bench with the fixed window
		{"due, no metadata", rows, nil, captionMix, captionMixAnswered, "every exchange due in the window"},
		// no metadata and no p99.9: from before
		{"answered, no metadata", noP999, nil, captionMixAnswered, captionMix, "the answered exchanges only"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			opt := Options{Format: FormatHTML, Runs: data}
			if c.meta != nil {
				opt.Files = []results.SessionFile{{Path: "s.csv", Meta: c.meta}}
			}
			if err := Render(&b, c.rows, opt); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if !strings.Contains(out, htmldoc.Esc(c.want)) || strings.Contains(out, htmldoc.Esc(c.not)) {
				t.Errorf("page of the %s session: want the caption %q, not %q", c.name, c.want, c.not)
			}
			figs := regexp.MustCompile(`<figcaption>Latency of [^<]+</figcaption>`).FindAllString(out, -1)
			if len(figs) == 0 {
				t.Fatal("no percentile chart")
			}
			for _, f := range figs {
				if !strings.Contains(f, c.wantFigure) {
					t.Errorf("percentile chart %s; want it to say %q", f, c.wantFigure)
				}
			}
		})
	}
}

// TestHeadlines: the fastest proxy of a row against the runner-up and no
// proxy, real where their runs' ranges do not overlap, no verdict where a
// cell has a single run.
func TestHeadlines(t *testing.T) {
	cell := func(proxy string, g results.Group, runs ...float64) Cell {
		s := summaryOf(runs)
		c := cellOf(column{proxy, g}, s, "")
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
			"r: b: 1.05 ± 0.10 times a (within noise, range)"},
		// 4 runs a side: the U test decides
		{"U", []Cell{cell("a", results.Copy, 1, 1, 1, 1), cell("b", results.Copy, 2, 2, 2, 2)},
			"r: b: 2.00 times a (real, U p=0.029)"},
		// one run each: no spread, so no verdict, however far apart
		{"one run", []Cell{cell("a", results.Copy, 10), cell("b", results.Copy, 20)},
			"r: b: 2.00 times a (one run: no spread to tell it from noise)"},
		// one proxy and no proxy
		{"alone", []Cell{cell("no proxy", results.Baseline, 10), cell("a", results.Copy, 5)},
			"r: a: 0.50 times no proxy"},
	} {
		hs := Headlines(Table{Kind: "throughput", Family: famHTTP, Rows: []TableRow{{Label: "r", Cells: c.cells}}})
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
		got := groupNotes(c.notes)
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
		if got := erring(Cell{ErrorShare: errorShare(c.runs)}); got != c.want {
			t.Errorf("erring(%s) = %v; want %v", c.name, got, c.want)
		}
	}
}

// TestReferenceNotes: the reference session's notes, in the markdown with
// and without the detail and on the page, are grouped by cell with their
// figures intact: no figure turned into n, the cipher suites whole, a
// cell's own notes one line under its table (not one a run), and no
// "– (–k/s)" for a cell without a figure.
func TestReferenceNotes(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "data", "*.csv"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no session file in ../data: %v", err)
	}
	rows, err := results.ReadFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	word := regexp.MustCompile(`(^|[ (])n([ ,:)]|$)`)
	for _, opt := range []Options{{}, {Detail: true}, {Format: FormatHTML}} {
		var b bytes.Buffer
		if err := Render(&b, rows, opt); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if opt.Format == FormatHTML {
			out = html.UnescapeString(regexp.MustCompile(`</?li>`).ReplaceAllString(out, ""))
		}
		for _, want := range []string{
			"negotiated TLSv1.3, TLS_AES_256_GCM_SHA384, X25519, ECDSA", // a cipher suite whole
			"tinyproxy ka-1k: 10777–14813 errors (reads on connections the proxy closed after its answer, not failed exchanges) and 0 timeouts beside 10777–14814 completed exchanges", // figures as the range of the runs'
			"squid mix-http-3k: ", // a cell of the mixes
		} {
			if !strings.Contains(out, want) {
				t.Errorf("%+v: no %q", opt, want)
			}
		}
		if strings.Contains(out, noFigureMix) {
			t.Errorf("%+v: a cell reads %q", opt, noFigureMix)
		}
		// each notes list: no n for a figure, a cell's own line once
		for _, list := range strings.Split(out, groupedNotesHead)[1:] {
			seen := map[string]bool{}
			for _, l := range strings.Split(list, "\n")[2:] {
				if l == "" || strings.HasPrefix(l, "<") {
					break
				}
				if word.MatchString(l) {
					t.Errorf("%+v: a note with n for a figure: %q", opt, l)
				}
				if cell, _, ok := strings.Cut(l, ": "); ok && !strings.Contains(cell, " — ") {
					if seen[cell] {
						t.Errorf("%+v: cell %q has two lines of its own notes under one table", opt, cell)
					}
					seen[cell] = true
				}
			}
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
		c.ids = []results.RunID{{Proxy: proxy, Load: load}}
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
		// delivers more, c's 9% of failed exchanges keep it out
		{"fixed rate", []Cell{
			latency(cell("a", "mix-3k", results.Copy, 3.0, 3.0, 3.0), nil, 8, 9, 10),
			latency(cell("b", "mix-3k", results.Copy, 2.9, 2.9, 2.9), share(0.001), 4, 4.5, 5),
			latency(cell("c", "mix-3k", results.Copy, 2.0, 2.0, 2.0), share(0.09), 1, 1, 1),
		}, "r, p99 at its fixed rate: b: 4.50 ms, 0.50 ± 0.08 times a's (real, range); failed more than 1% of their exchanges: c !9%"},
		// the closed-loop mix still ranks by its figure
		{"closed loop", []Cell{
			latency(cell("a", "mix", results.Copy, 10, 10.5, 11), nil, 8, 9, 10),
			latency(cell("b", "mix", results.Copy, 20, 21, 22), nil, 1, 1, 1),
		}, "r: b: 2.00 ± 0.13 times a (real, range)"},
		// apart by range, but the ± (0.23) reaches no change
		{"wide", []Cell{cell("a", "ka-1k", results.Copy, 8, 10, 10.1), cell("b", "ka-1k", results.Copy, 10.2, 12, 14)},
			"r: b: 1.20 ± 0.23 times a (within noise: the ± reaches no change, though range tells them apart)"},
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
		hs := Headlines(Table{Kind: "throughput", Family: famMix, Rows: []TableRow{{Label: "r", Cells: c.cells}}})
		if len(hs) != 1 || hs[0].String() != c.want {
			t.Errorf("Headlines(%s) = %v; want %q", c.name, hs, c.want)
		}
	}
}

// TestSummaryLeadRatios: a leader's ratios to its runner-up in the
// summary line are each at least 1, its first row's among them: at a
// fixed rate the runner-up's p99 over the leader's, else the leader's
// figure over the runner-up's; a row with no runner-up gives none. (The
// first row's had been taken as it came, a p99 ratio uninverted: "ahead
// of the runner-up 0.95–1.05 times".)
func TestSummaryLeadRatios(t *testing.T) {
	fc := &familyCounts{}
	fc.lead(Headline{Fastest: "nginx", Metric: MetricP99, RunnerUp: "haproxy", Ratio: 0.95})
	fc.lead(Headline{Fastest: "nginx", Metric: MetricP99, RunnerUp: "haproxy", Ratio: 0.8})
	fc.lead(Headline{Fastest: "haproxy", RunnerUp: "nginx", Ratio: 1.3})
	fc.lead(Headline{Fastest: "squid"})
	if got, want := leadsText(fc.leads, 4), "nginx led 2 of 4 rows (ahead of the runner-up 1.05–1.25 times, none real), haproxy 1 (ahead of the runner-up 1.30 times, none real), squid 1"; got != want {
		t.Errorf("leads %q; want %q", got, want)
	}
}

package page

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

	"bench/report"
	"bench/report/htmldoc"
	"bench/report/internal/reporttest"
	"bench/results"
)

// TestPageDetail: the page shows each cell's spread and runs where it
// has two runs or more, a headline with a ratio and a verdict per row of
// each ranked table, the notes once each with their cells, the ! mark
// and share with its legend, and bench's build and command line in
// Setup; the markdown has the same with Detail, and without it all but
// the command line and the session's line.
func TestPageDetail(t *testing.T) {
	rows, _ := reporttest.PageSession(t)
	rows = reporttest.Noted(rows)
	tables, err := report.Tables(rows, report.Options{Latency: true})
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
		if report.Headlined(tb) {
			headlines += len(tb.Rows)
		}
	}
	if multi == 0 || headlines == 0 {
		t.Fatalf("pageSession has %d cells of 2 runs or more and %d headlined rows; want some of each", multi, headlines)
	}
	spreadRE := regexp.MustCompile(`<small class="spread" title="3 runs: [^"]+">±[0-9.]+% n=3</small>`)
	// a leader and its ratio to the runner-up, or two level and their
	// ratio, then the fastest's to no proxy; the cells left out for
	// failing more after
	headlineRE := regexp.MustCompile(`<li>[^<]+: [^<:]+: ([0-9.]+ ms, )?[0-9.]+ (± [0-9.]+ )?(times [^<]+ )?\((real|within noise), range\), ([^<,]+ )?[0-9.]+ (± [0-9.]+ )?times no proxy(&#39;s)?(; left out, having failed more of their exchanges: [^<]+)?</li>`)
	markdownSpread := regexp.MustCompile(`±[0-9.]+% n=3`)
	markdownHeadline := regexp.MustCompile(`(?m)^- [^\n]+: [^\n:]+: ([0-9.]+ ms, )?[0-9.]+ (± [0-9.]+ )?(times [^\n]+ )?\((real|within noise), range\)`)
	html := page(t, rows, detailMeta())
	var md, plainMD bytes.Buffer
	files := []results.SessionFile{{Path: "s.csv", Meta: detailMeta()}}
	if err := render(&md, rows, report.Options{Files: files, Detail: true}); err != nil {
		t.Fatal(err)
	}
	if err := render(&plainMD, rows, report.Options{Files: files}); err != nil {
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
		// the page marks the cell in its latency table too
		mark, legend, marks := " !2% ", "- !p%: p% of the cell's exchanges failed", 1
		if c.name == "page" {
			mark, legend, marks = `title="2% of its exchanges failed`, `<li><span class="err">!p%</span>: p% of the cell&#39;s exchanges failed`, 2
		}
		if !strings.Contains(c.out, legend) || strings.Count(c.out, mark) != marks {
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
	rows, data := reporttest.PageSession(t)
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
		{"due", rows, detailMeta(), report.CaptionMix, report.CaptionMixAnswered, "every exchange due in the window"},
		// a session from before: its metadata names neither bench's build nor the accounting
		{"answered", rows, old, report.CaptionMixAnswered, report.CaptionMix, "the answered exchanges only"},
		// no metadata: a mix row with p99.9 is from a bench with the fixed window
		{"due, no metadata", rows, nil, report.CaptionMix, report.CaptionMixAnswered, "every exchange due in the window"},
		// no metadata and no p99.9: from before
		{"answered, no metadata", noP999, nil, report.CaptionMixAnswered, report.CaptionMix, "the answered exchanges only"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			opt := report.Options{Format: report.FormatHTML, Runs: data}
			if c.meta != nil {
				opt.Files = []results.SessionFile{{Path: "s.csv", Meta: c.meta}}
			}
			if err := render(&b, c.rows, opt); err != nil {
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

// TestReferenceNotes: the reference session's notes, in the markdown with
// and without the detail and on the page, are grouped by cell with their
// figures intact: no figure turned into n, the cipher suites whole, a
// cell's own notes one line under its table (not one a run), and no
// "– (–k/s)" for a cell without a figure.
func TestReferenceNotes(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "data", "*.csv"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no session file in ../data: %v", err)
	}
	rows, err := results.ReadFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	word := regexp.MustCompile(`(^|[ (])n([ ,:)]|$)`)
	for _, opt := range []report.Options{{}, {Detail: true}, {Format: report.FormatHTML}} {
		var b bytes.Buffer
		if err := render(&b, rows, opt); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if opt.Format == report.FormatHTML {
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
		if strings.Contains(out, report.NoFigureMix) {
			t.Errorf("%+v: a cell reads %q", opt, report.NoFigureMix)
		}
		// each notes list: no n for a figure, a cell's own line once
		for _, list := range strings.Split(out, report.GroupedNotesHead)[1:] {
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

// page renders rows as the page, with meta beside their file.
func page(t *testing.T, rows []results.Row, meta *results.Meta) string {
	t.Helper()
	var b bytes.Buffer
	opt := report.Options{Format: report.FormatHTML, Files: []results.SessionFile{{Path: "s.csv", Meta: meta}}}
	if err := render(&b, rows, opt); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

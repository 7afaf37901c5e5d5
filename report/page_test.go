package report

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"bench/internal/chromium"
	"bench/internal/golden"
	"bench/report/internal/reporttest"
	"bench/results"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// pageSession is a small session with every kind of chart: HTTP runs
// (wrk: no series of their own) with a ‡ and a † cell, relay streams
// with iperf3's intervals, and mixes with their histograms; every run
// with the roles' CPU each second.
func pageSession(t testing.TB) ([]results.Row, map[results.RunID]*results.RunData) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	var rows []results.Row
	data := map[results.RunID]*results.RunData{}
	start := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	cols := []struct {
		proxy string
		group results.Group
		speed float64
	}{{"no proxy", results.Baseline, 1.1}, {"nginx", results.Copy, 1}, {"haproxy", results.Copy, 0.8}, {"haproxy splice-auto", results.Splice, 0.9}}
	loads := []struct {
		mode results.Mode
		load string
	}{{results.HTTP, "ka-1k"}, {results.HTTP, "ka-1m"}, {results.Relay, "stream1"}, {results.MixHTTP, "mix"}, {results.MixHTTP, "mix-3k"}}
	for _, l := range loads {
		for _, c := range cols {
			for rep := 1; rep <= 3; rep++ {
				f := c.speed * (1 + 0.05*float64(rep-2))
				r := results.Row{Machine: "Xeon, 2 CPUs", Session: "2026-12-01", Proxy: c.proxy, Kind: "nginx", Group: c.group,
					Mode: l.mode, Load: l.load, Rep: rep, Started: start, Seconds: 4, Status: results.OK, Bound: results.BoundProxy,
					CPUProxy: 3.9, PeakMemBytes: 2e7, HasPipes: true}
				start = start.Add(10 * time.Second)
				switch {
				case results.Stream(l.load):
					r.Bytes = int64(f * 4e9)
				case l.load == "ka-1m":
					r.Requests, r.Bytes = int64(f*2000), int64(f*2e9)
				default:
					r.Requests, r.Bytes = int64(f*1e5), int64(f*1e8)
				}
				if !results.Stream(l.load) {
					r.P50Ms, r.P99Ms, r.HasLatency = 1/f, 5/f, true
				}
				if c.proxy == "nginx" && l.load == "ka-1k" {
					r.Bound = results.BoundClient // ‡
				}
				d := &results.RunData{RunID: r.ID(), Started: r.Started, CPU: map[string][]float64{}}
				for k := 0; k < 4; k++ {
					d.CPU["proxy"] = append(d.CPU["proxy"], 0.9+0.02*rng.Float64())
					d.CPU["client"] = append(d.CPU["client"], 0.5+0.1*rng.Float64())
					d.CPU["origin"] = append(d.CPU["origin"], 0.3+0.1*rng.Float64())
					if results.Stream(l.load) || l.mode == results.MixHTTP {
						d.Intervals = append(d.Intervals, results.Interval{Seconds: 1, Requests: r.Requests / 4, Bytes: r.Bytes / 4 * int64(3+k%2) / 4})
					}
				}
				if l.mode == results.MixHTTP {
					h := hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
					for range 5000 {
						h.RecordValue(int64(200 + rng.ExpFloat64()*800/f))
					}
					b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
					if err != nil {
						t.Fatal(err)
					}
					d.Histogram = string(b)
					r.P999Ms, r.HasP999 = 9/f, true
				}
				data[r.ID()] = d
				rows = append(rows, r)
			}
		}
	}
	return rows, data
}

// wantCharts counts the charts the page must have: a bar chart per
// throughput table with a figure, a percentile chart per mix scenario
// with a histogram, and a time series per cell whose runs kept data.
func wantCharts(t *testing.T, rows []results.Row, data map[results.RunID]*results.RunData) (bars, hdrs, series int) {
	t.Helper()
	tables, err := Tables(rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range tables {
		if tb.Kind == "throughput" || tb.Kind == "handshake" {
			if slices.ContainsFunc(tb.Rows, func(r TableRow) bool {
				return slices.ContainsFunc(r.Cells, func(c Cell) bool { return c.Median != nil })
			}) {
				bars++
			}
		}
	}
	type cell struct {
		machine, session, proxy string
		mode                    results.Mode
		load                    string
	}
	hist, withData := map[cell]bool{}, map[cell]bool{}
	scen := map[[3]string]bool{}
	for i := range rows {
		r := &rows[i]
		d := data[r.ID()]
		if r.Status != results.OK || d == nil {
			continue
		}
		k := cell{r.Machine, r.Session, r.Proxy, r.Mode, r.Load}
		withData[k] = true
		if d.Histogram != "" {
			hist[k] = true
			scen[[3]string{r.Machine, r.Session, results.ScenarioName(r.Mode, r.Load)}] = true
		}
	}
	return bars, len(scen), len(withData)
}

// TestPageInChromium opens the page of a session with every kind of
// chart in headless Chromium, from its file: it loads with no console
// error and fetches nothing but itself, and its charts are those of its
// tables. The screenshot is kept in $BENCH_SCREENSHOTS when set (a
// directory), in the test's temporary directory otherwise.
func TestPageInChromium(t *testing.T) {
	rows, data := pageSession(t)
	var b bytes.Buffer
	if err := Render(&b, rows, Options{Format: FormatHTML, Runs: data}); err != nil {
		t.Fatal(err)
	}
	bars, hdrs, series := wantCharts(t, rows, data)
	if bars == 0 || hdrs != 2 || series != 20 {
		t.Fatalf("the fixture has %d bar charts, %d percentile charts, %d series; want some, 2 and 20", bars, hdrs, series)
	}
	chromium.CheckPage(t, b.Bytes(), "session-page", bars, hdrs, series)
}

// TestPageLayout opens the page of the fixture session in Chromium, as
// wide as a desktop's window and as a phone's, and checks how its charts
// are drawn (chromium.CheckLayout): no text outside its chart nor over
// another, the page no wider than the window, a title on every bar, each
// column one colour.
func TestPageLayout(t *testing.T) {
	rows, data := pageSession(t)
	var b bytes.Buffer
	if err := Render(&b, rows, Options{Format: FormatHTML, Runs: data}); err != nil {
		t.Fatal(err)
	}
	tables, err := Tables(rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, width := range []int{1400, 420} {
		chromium.CheckLayout(t, b.Bytes(), fmt.Sprintf("session-page-%d", width), width, barCount(tables))
	}
}

// TestPageTables opens the page of the fixture session, rendered with
// its runs' data as bench run writes a session's page, in Chromium as
// wide as a desktop's window (1400 px) and as a phone's (420 px), and
// checks how its tables fit (chromium.CheckTables): at 1400 px none cut,
// at both widths every table with figures showing a column of them
// whole beside its labels, and the labels staying in place as the table
// scrolls to its right end.
func TestPageTables(t *testing.T) {
	rows, data := pageSession(t)
	var b bytes.Buffer
	if err := Render(&b, rows, Options{Format: FormatHTML, Runs: data}); err != nil {
		t.Fatal(err)
	}
	for _, width := range []int{1400, 420} {
		chromium.CheckTables(t, b.Bytes(), fmt.Sprintf("session-page-tables-%d", width), width)
	}
}

// barCount is the number of bars of the tables' charts: a bar per cell
// of a throughput table with an ok run.
func barCount(tables []Table) int {
	n := 0
	for _, t := range tables {
		if !ranked(t) {
			continue
		}
		for _, r := range t.Rows {
			for _, c := range r.Cells {
				if c.chart.OK {
					n++
				}
			}
		}
	}
	return n
}

// TestBarChartSVG: the structure of one chart's SVG, its elements with
// their classes, colours and titles, and its texts at their places
// rounded to a point, not its pixels.
func TestBarChartSVG(t *testing.T) {
	rows, _ := pageSession(t)
	tables, err := Tables(rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	svg, ok, err := barChart(tables[0], NewPalette(tables))
	if err != nil || !ok {
		t.Fatalf("barChart(%s) = %v, %v", tables[0].Family, ok, err)
	}
	golden.Check(t, filepath.Join("testdata", "golden", "chart-bar.txt"), reporttest.SVGStructure(t, svg))
}

// TestPageOpening: the fixture session's page, as the reference
// session's (TestReferencePageOpening), opens with its summary, the
// contents linking every family's heading and Setup after the tables.
func TestPageOpening(t *testing.T) {
	rows, data := pageSession(t)
	var b bytes.Buffer
	files := []results.SessionFile{{Path: "s.csv", Meta: detailMeta()}}
	if err := Render(&b, rows, Options{Format: FormatHTML, Runs: data, Files: files}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	session := rows[0].Session
	summary := strings.Index(page, `id="`+summaryID(session)+`"`)
	contents := strings.Index(page, `<nav class="contents">`)
	setup := strings.Index(page, `<h2 id="`+anchor(session, "setup")+`">Setup</h2>`)
	firstTable := strings.Index(page, `<table class="throughput">`)
	if summary < 0 || contents < summary || firstTable < contents || setup < firstTable {
		t.Errorf("the page's summary at %d, contents at %d, first table at %d, Setup at %d; want them in that order", summary, contents, firstTable, setup)
	}
	tables, err := Tables(rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range byFamily(tables) {
		id := anchor(session, f.family)
		if !strings.Contains(page, `<a href="#`+id+`">`) || !strings.Contains(page, `<h2 id="`+id+`">`) {
			t.Errorf("no contents' link to the heading #%s", id)
		}
	}
	if strings.Contains(page, "<details open") {
		t.Errorf("a <details> of the page is open")
	}
	chromium.CheckOpening(t, b.Bytes(), "session-page", summaryID(session), chromium.PageHeight)
}

package page

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"bench/internal/chromium"
	"bench/internal/golden"
	"bench/report"
	"bench/report/internal/reporttest"
	"bench/results"
)

// wantCharts counts the charts the page must have: a bar chart per
// throughput table with a figure, a percentile chart per mix scenario
// with a histogram, and a time series per cell whose runs kept data.
func wantCharts(t *testing.T, rows []results.Row, data map[results.RunID]*results.RunData) (bars, hdrs, series int) {
	t.Helper()
	tables, err := report.Tables(rows, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range tables {
		if tb.Kind == "throughput" || tb.Kind == "handshake" {
			if slices.ContainsFunc(tb.Rows, func(r report.TableRow) bool {
				return slices.ContainsFunc(r.Cells, func(c report.Cell) bool { return c.Median != nil })
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
	rows, data := reporttest.PageSession(t)
	var b bytes.Buffer
	if err := Render(&b, rows, report.Options{Format: report.FormatHTML, Runs: data}); err != nil {
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
	rows, data := reporttest.PageSession(t)
	var b bytes.Buffer
	if err := Render(&b, rows, report.Options{Format: report.FormatHTML, Runs: data}); err != nil {
		t.Fatal(err)
	}
	tables, err := report.Tables(rows, report.Options{})
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
	rows, data := reporttest.PageSession(t)
	var b bytes.Buffer
	if err := Render(&b, rows, report.Options{Format: report.FormatHTML, Runs: data}); err != nil {
		t.Fatal(err)
	}
	for _, width := range []int{1400, 420} {
		chromium.CheckTables(t, b.Bytes(), fmt.Sprintf("session-page-tables-%d", width), width)
	}
}

// barCount is the number of bars of the tables' charts: a bar per cell
// of a throughput table with an ok run.
func barCount(tables []report.Table) int {
	n := 0
	for _, t := range tables {
		if !report.Ranked(t) {
			continue
		}
		for _, r := range t.Rows {
			for _, c := range r.Cells {
				if c.Chart.OK {
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
	rows, _ := reporttest.PageSession(t)
	tables, err := report.Tables(rows, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svg, ok, err := barChart(tables[0], report.NewPalette(tables))
	if err != nil || !ok {
		t.Fatalf("barChart(%s) = %v, %v", tables[0].Family, ok, err)
	}
	golden.Check(t, filepath.Join("testdata", "golden", "chart-bar.txt"), reporttest.SVGStructure(t, svg))
}

// TestPageOpening: the fixture session's page, as the reference
// session's (TestReferencePageOpening), opens with its summary, the
// contents linking every family's heading and Setup after the tables.
func TestPageOpening(t *testing.T) {
	rows, data := reporttest.PageSession(t)
	var b bytes.Buffer
	files := []results.SessionFile{{Path: "s.csv", Meta: detailMeta()}}
	if err := Render(&b, rows, report.Options{Format: report.FormatHTML, Runs: data, Files: files}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	session := rows[0].Session
	summary := strings.Index(page, `id="`+summaryID(session)+`"`)
	contents := strings.Index(page, `<nav class="contents">`)
	setup := strings.Index(page, `<h2 id="`+report.Anchor(session, "setup")+`">Setup</h2>`)
	firstTable := strings.Index(page, `<table class="throughput">`)
	if summary < 0 || contents < summary || firstTable < contents || setup < firstTable {
		t.Errorf("the page's summary at %d, contents at %d, first table at %d, Setup at %d; want them in that order", summary, contents, firstTable, setup)
	}
	tables, err := report.Tables(rows, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range report.ByFamily(tables) {
		id := report.Anchor(session, f.Family)
		if !strings.Contains(page, `<a href="#`+id+`">`) || !strings.Contains(page, `<h2 id="`+id+`">`) {
			t.Errorf("no contents' link to the heading #%s", id)
		}
	}
	if strings.Contains(page, "<details open") {
		t.Errorf("a <details> of the page is open")
	}
	chromium.CheckOpening(t, b.Bytes(), "session-page", summaryID(session), chromium.PageHeight)
}

// render writes rows in opt.Format as bench report does: the page, or a
// text format or JSON.
func render(w io.Writer, rows []results.Row, opt report.Options) error {
	if opt.Format == report.FormatHTML {
		return Render(w, rows, opt)
	}
	return report.Render(w, rows, opt)
}

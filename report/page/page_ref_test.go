package page_test

import (
	"bytes"
	"fmt"
	"html"
	"path/filepath"
	"testing"

	"bench/harness"
	"bench/internal/chromium"
	"bench/report"
	"bench/report/page"
	"bench/results"
)

// TestReferencePageLayout renders the reference session's page from
// data/*.csv, its metadata and its runs' kept output, as bench report
// does, and checks how its charts are drawn in Chromium as wide as a
// desktop's window and as a phone's (chromium.CheckLayout), and how its
// tables fit (chromium.CheckTables: none cut at 1400 px, a column of
// figures beside the labels at 420 px, the labels staying as a table
// scrolls): its labels
// are those that were cut or drawn over each other, its HTTPS and mix
// tables those with two units. It lives apart from page_test.go, in
// package page_test, because the runs' kept output is read by harness,
// which imports report.
func TestReferencePageLayout(t *testing.T) {
	page, rows := referencePage(t)
	tables, err := report.Tables(rows, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	bars := 0 // a bar per throughput cell with an ok run
	for _, tb := range tables {
		if tb.Kind != "throughput" && tb.Kind != "handshake" {
			continue
		}
		for _, r := range tb.Rows {
			for _, c := range r.Cells {
				if c.Median != nil {
					bars++
				}
			}
		}
	}
	for _, width := range []int{1400, 420} {
		chromium.CheckLayout(t, page, fmt.Sprintf("reference-page-%d", width), width, bars)
		chromium.CheckTables(t, page, fmt.Sprintf("reference-page-tables-%d", width), width)
	}
}

// TestPublishedSweepPageTables renders the page of the sweep session
// published under data/sweeps (a real search of mix-http's sustainable
// rate through no proxy, nginx, haproxy and squid) from its file, its
// metadata and its runs' kept output, as bench run writes it at the
// session's end, and checks how its tables fit in Chromium as wide as a
// desktop's window (1400 px) and as a phone's (420 px)
// (chromium.CheckTables): at 1400 px none cut, at both widths every
// table with figures showing a column of them whole beside its labels,
// and the labels staying in place as the table scrolls to its right end.
func TestPublishedSweepPageTables(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "data", "sweeps", "*.csv"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no session file in ../../data/sweeps: %v", err)
	}
	rows, err := results.ReadFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	page := renderPage(t, files, rows)
	for _, width := range []int{1400, 420} {
		chromium.CheckTables(t, page, fmt.Sprintf("published-sweep-page-tables-%d", width), width)
	}
}

// TestReferencePageOpening: the reference session's page opens with its
// summary within the first screen of a desktop (1400 x 900), its
// details closed, and is less than chromium.PageHeight (13,000 px) tall at
// 1400 px.
func TestReferencePageOpening(t *testing.T) {
	page, rows := referencePage(t)
	chromium.CheckOpening(t, page, "reference-page", "summary-"+rows[0].Session, chromium.PageHeight)
}

// referencePage is the reference session's page as bench report renders
// it from ../../data/*.csv, its metadata and its runs' kept output, and the
// session's runs.
func referencePage(t *testing.T) ([]byte, []results.Row) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "data", "*.csv"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no session file in ../../data: %v", err)
	}
	rows, err := results.ReadFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	return renderPage(t, files, rows), rows
}

// renderPage renders the page of the session files as bench report
// --format html does.
func renderPage(t *testing.T, files []string, rows []results.Row) []byte {
	t.Helper()
	opt := report.Options{Format: report.FormatHTML}
	var err error
	if opt.Files, err = results.ReadMetas(files); err != nil {
		t.Fatal(err)
	}
	if opt.Runs, err = harness.ReadRunData(files, rows); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := page.Render(&b, rows, opt); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestReferencePageNoisy: the reference session's page says what the
// session's closing summary says of it, the cells whose runs spread more
// than report.SpreadWarn, each of them by name.
func TestReferencePageNoisy(t *testing.T) {
	page, rows := referencePage(t)
	tables, err := report.Tables(rows, report.Options{Latency: true})
	if err != nil {
		t.Fatal(err)
	}
	noisy := report.Noisy(tables)
	if len(noisy) == 0 {
		t.Fatal("the reference session has no cell spread more than 10%; the test needs one")
	}
	if head := html.EscapeString(report.NoisyHead(len(noisy))); !bytes.Contains(page, []byte(head)) {
		t.Errorf("the page does not say %q", head)
	}
	for _, n := range noisy {
		if !bytes.Contains(page, []byte("<li>"+html.EscapeString(n.String())+"</li>")) {
			t.Errorf("the page does not name the noisy cell %q", n)
		}
	}
}

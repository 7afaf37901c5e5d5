package bench_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/report"
	"bench/report/results"
)

// TestDataResults: data/RESULTS.md is what `bench report data/*.csv`
// renders from the session files beside it, under a few lines that say
// what the session was; so that the README's promise holds on a fresh
// clone and the page is never older than its files.
func TestDataResults(t *testing.T) {
	files, rows := dataSession(t)
	opt := report.Options{Format: report.FormatMarkdown}
	var err error
	if opt.Files, err = results.ReadMetas(files); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := report.Render(&b, rows, opt); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join("data", "RESULTS.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(page), b.String()) {
		t.Errorf("data/RESULTS.md does not end with what bench report data/*.csv renders; render it again:\n  bench report data/*.csv")
	}
	for _, f := range files {
		runs := strings.TrimSuffix(f, ".csv") + ".runs"
		if st, err := os.Stat(runs); err != nil || !st.IsDir() {
			t.Errorf("%s: no kept tool output beside it (%s)", f, runs)
		}
	}
}

// TestDataLatency: `bench report --latency data/*.csv` gives p50 / p99
// under the HTTP, tunnel, relay, HTTPS and mix tables of the reference
// session, every family whose load tool measures it.
func TestDataLatency(t *testing.T) {
	_, rows := dataSession(t)
	tables, err := report.Tables(rows, report.Options{Latency: true})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, tb := range tables {
		if tb.Kind != "latency" {
			continue
		}
		for _, r := range tb.Rows {
			for _, c := range r.Cells {
				if c.P50 != nil && c.P99 != nil && *c.P50 > 0 && *c.P99 >= *c.P50 && strings.Contains(c.Text, " / ") {
					got[tb.Family] = true
				}
			}
		}
	}
	for _, fam := range []string{"HTTP proxy", "CONNECT tunnel", "SOCKSv5 tunnel", "TCP relay", "HTTPS", "mix scenarios"} {
		if !got[fam] {
			t.Errorf("no latency table with p50 / p99 for %s", fam)
		}
	}
}

// dataSession returns the session files of data/ and their runs.
func dataSession(t *testing.T) ([]string, []results.Row) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("data", "*.csv"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no session file in data/: %v", err)
	}
	rows, err := results.ReadFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	return files, rows
}

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
	files, err := filepath.Glob(filepath.Join("data", "*.csv"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no session file in data/: %v", err)
	}
	rows, err := results.ReadFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	opt := report.Options{Format: report.FormatMarkdown}
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

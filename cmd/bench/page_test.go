package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/golden"
	"bench/report"
	"bench/report/results"
)

// TestPublishedPages: the pages published beside the sessions under
// data (data/*.html, data/sweeps/*.html) are what a session's end writes
// of their files today (writePage; -update writes them again).
func TestPublishedPages(t *testing.T) {
	var pages []string
	for _, dir := range []string{"data", filepath.Join("data", "sweeps")} {
		found, err := filepath.Glob(filepath.Join("..", "..", dir, "*.html"))
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, found...)
	}
	if len(pages) < 2 {
		t.Fatalf("published pages %q; want the reference session's and the sweep session's", pages)
	}
	for _, page := range pages {
		csv := strings.TrimSuffix(page, ".html") + ".csv"
		rows, err := results.ReadFiles([]string{csv})
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "page.html")
		if err := writePage(out, []string{csv}, rows, report.Options{}); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		golden.Check(t, page, got)
	}
}

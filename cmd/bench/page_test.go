package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"bench/internal/golden"
	"bench/report"
	"bench/results"
)

// TestPublishedPages: the pages published beside the sessions under
// data (data/*.html, data/sweeps/*.html), and the profiles' pages in
// their runs' folders, are what a session's end writes of their files
// today (writePage, into a folder of the test's own; -update writes
// them again), and no profile's page is published that the page does not
// link.
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
		out := t.TempDir()
		if err := writePage(filepath.Join(out, "page.html"), []string{csv}, rows, report.Options{}); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, page, []byte(readFile(t, filepath.Join(out, "page.html"))))
		runs := filepath.Base(results.RunsDir(csv))
		written, _ := filepath.Glob(filepath.Join(out, runs, "*"+results.FlameSuffix))
		published, _ := filepath.Glob(filepath.Join(filepath.Dir(page), runs, "*"+results.FlameSuffix))
		var names []string
		for _, w := range written {
			names = append(names, filepath.Base(w))
			golden.Check(t, filepath.Join(filepath.Dir(page), runs, filepath.Base(w)), []byte(readFile(t, w)))
		}
		for _, p := range published {
			if !slices.Contains(names, filepath.Base(p)) {
				if golden.Updating() {
					if err := os.Remove(p); err != nil {
						t.Fatal(err)
					}
					continue
				}
				t.Errorf("%s: a profile's page the session's page does not link (go test -update removes it)", p)
			}
		}
	}
}

// The page is never written through a link planted at its name or at the
// name of the file written first beside it: the file linked to is
// untouched and the page is in a file of its own.
func TestPageFollowsNoLink(t *testing.T) {
	csv := filepath.Join(reportDir, "m4.csv")
	rows, err := results.ReadFiles([]string{csv})
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []string{"", ".tmp"} {
		out := t.TempDir()
		victim := filepath.Join(t.TempDir(), "victim")
		if err := os.WriteFile(victim, []byte("not yours\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		page := filepath.Join(out, "m4.html")
		if err := os.Symlink(victim, page+at); err != nil {
			t.Fatal(err)
		}
		if err := writePage(page, []string{csv}, rows, report.Options{}); err != nil {
			t.Errorf("a link at the page's name%s: %v", at, err)
		}
		if b, err := os.ReadFile(victim); err != nil || string(b) != "not yours\n" {
			t.Errorf("a link at the page's name%s: the file it points at holds %.40q, %v; want it untouched", at, b, err)
		}
		if fi, err := os.Lstat(page); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("a link at the page's name%s: %v; want the page a regular file, not a link", at, err)
		}
	}
}

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"bench/harness"
	"bench/report"
	"bench/report/page"
	"bench/results"
)

// renderPage renders to w the page of the session files at csvPaths:
// their rows, metadata and kept run data; opt says which session and how.
func renderPage(w io.Writer, csvPaths []string, rows []results.Row, opt report.Options) error {
	var err error
	if opt.Files, err = results.ReadMetas(csvPaths); err != nil {
		return err
	}
	if opt.Runs, err = harness.ReadRunData(csvPaths, rows); err != nil {
		return err
	}
	return page.Render(w, rows, opt)
}

// writePage writes the page of the session files at csvPaths
// (renderPage) into path, and beside it the page of each profile it links
// past what it holds itself, in its runs' folder.
func writePage(path string, csvPaths []string, rows []results.Row, opt report.Options) error {
	dir := filepath.Dir(path)
	opt.ProfilePage = func(rel string, page []byte) error {
		own := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(own), 0o755); err != nil {
			return fmt.Errorf("write a profile's page: %w", err)
		}
		if err := results.WriteFile(own, page); err != nil {
			return fmt.Errorf("write a profile's page: %w", err)
		}
		return nil
	}
	var b bytes.Buffer
	if err := renderPage(&b, csvPaths, rows, opt); err != nil {
		return err
	}
	if err := results.WriteFile(path, b.Bytes()); err != nil {
		return fmt.Errorf("write the page %s: %w", path, err)
	}
	return nil
}

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"bench/harness"
	"bench/report"
	"bench/report/results"
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
	opt.Format = report.FormatHTML
	return report.Render(w, rows, opt)
}

// writePage writes the page of the session files at csvPaths
// (renderPage) into path.
func writePage(path string, csvPaths []string, rows []results.Row, opt report.Options) error {
	var b bytes.Buffer
	if err := renderPage(&b, csvPaths, rows, opt); err != nil {
		return err
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write the page %s: %w", path, err)
	}
	return nil
}

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

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
// (renderPage) into path, and each profiled run's flame graph its page
// of its own (writeFlamePages), which it links past its inline budget.
func writePage(path string, csvPaths []string, rows []results.Row, opt report.Options) error {
	for _, p := range csvPaths {
		if err := writeFlamePages(results.RunsDir(p)); err != nil {
			return err
		}
	}
	var b bytes.Buffer
	if err := renderPage(&b, csvPaths, rows, opt); err != nil {
		return err
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write the page %s: %w", path, err)
	}
	return nil
}

// writeFlamePages writes beside each profile's folded stacks in the runs
// directory dir (<run>.cpu.folded) its flame graph's page
// (<run>.cpu.html).
func writeFlamePages(dir string) error {
	folded, err := filepath.Glob(filepath.Join(dir, "*"+results.FoldedSuffix))
	if err != nil {
		return err
	}
	for _, f := range folded {
		b, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("read profile: %w", err)
		}
		base := strings.TrimSuffix(f, results.FoldedSuffix)
		var page bytes.Buffer
		if err := report.WriteFlamePage(&page, b, "CPU profile of run "+filepath.Base(base)); err != nil {
			return fmt.Errorf("draw profile %q: %w", f, err)
		}
		if err := os.WriteFile(base+results.FlameSuffix, page.Bytes(), 0o644); err != nil {
			return fmt.Errorf("write profile: %w", err)
		}
	}
	return nil
}

package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"bench/report"
	"bench/report/compare"
	"bench/results"
)

const compareSynopsis = `[--format md|tsv|json|html] [--metric throughput|p50|p99|p99.9] [--fail-over PCT%] [--across-machines] OLD.csv NEW.csv
       bench compare [flags] OLD.csv... -- NEW.csv...

Compares the runs of the old files with those of the new, cell by cell.
The text begins with a line counting the real regressions and
improvements, each with its largest, and the cells within noise; then the
real changes, largest first; the columns (proxies), each with the geomean
of its changes and its real changes; then a table per family and machine: per cell the old and new medians, the change
with its ± (half the range of new over old from the runs' extremes) where
it is real and ~ where it is not, the test that decided (p, the U test's
p-value; or the ranges of the runs, apart or overlapping) with the runs of
each side, and a geomean row of the changes. --format html is one
self-contained page, a chart of the changes with their intervals under
each table.

--metric throughput compares the tables' figure, higher being better (a
sweep's: the sustainable rate each of its searches found); p50, p99 and
p99.9 a latency percentile, lower being better, the cells without latency
and the sweeps left out. --fail-over fails on a real change for the worse
past it (slower, or with --metric a longer latency) and on a cell whose
new runs all failed.`

func cmdCompare(stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("compare", stderr, compareSynopsis)
	format := fs.String("format", report.FormatMarkdown, "output `format`: md (GitHub markdown), tsv, json or html (a page with charts)")
	var gate percent
	fs.Var(&gate, "fail-over", "fail (exit 1) when a real change for the worse passes this `percent`, e.g. 10% (default: never)")
	var opt compare.Options
	fs.StringVar(&opt.Metric, "metric", report.MetricThroughput, "what to compare: `throughput` (higher is better) or a latency, p50, p99 or p99.9 (lower is better)")
	fs.BoolVar(&opt.AcrossMachines, "across-machines", false, "compare the runs of one machine with those of another")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	oldFiles, newFiles, err := compareSides(fs.Args())
	if err != nil {
		fs.Usage()
		return usageError{err}
	}
	if gate.set {
		opt.FailOver = &gate.value
	}
	old, err := results.ReadFiles(oldFiles)
	if err != nil {
		return err
	}
	new, err := results.ReadFiles(newFiles)
	if err != nil {
		return err
	}
	cmp, err := compare.Compare(old, new, opt)
	if errors.Is(err, compare.ErrAcrossMachines) {
		return fmt.Errorf("%w; comparing across machines needs --across-machines", err)
	}
	if err != nil {
		return err
	}
	cmp.SetFiles(oldFiles, newFiles)
	if err := addProfileShifts(cmp, oldFiles, newFiles, old, new); err != nil {
		return err
	}
	if err := compare.Write(stdout, cmp, *format); err != nil {
		return err
	}
	if reg := cmp.Regressions(); len(reg) > 0 {
		lines := make([]string, len(reg))
		for i, ch := range reg {
			lines[i] = "  " + ch.Describe()
		}
		cells := "cells"
		if len(reg) == 1 {
			cells = "cell"
		}
		return fmt.Errorf("compare: %d %s regressed beyond %s:\n%s", len(reg), cells, gate.String(), strings.Join(lines, "\n"))
	}
	return nil
}

// addProfileShifts adds to cmp where its real changes' CPU went, from
// the profiles the runs of both sides kept beside their files.
func addProfileShifts(cmp *compare.Comparison, oldFiles, newFiles []string, old, new []results.Row) error {
	oldData, err := results.ReadRunData(oldFiles)
	if err != nil {
		return err
	}
	newData, err := results.ReadRunData(newFiles)
	if err != nil {
		return err
	}
	return compare.AddProfileShifts(cmp, old, new, oldData, newData)
}

// compareSides splits the files of the command line into old and new: at
// "--", or the first and the second of two.
func compareSides(files []string) (old, new []string, err error) {
	i := slices.Index(files, "--")
	switch {
	case i < 0 && len(files) == 2:
		return files[:1], files[1:], nil
	case i < 0:
		return nil, nil, fmt.Errorf("compare: %d files and no --: give OLD.csv NEW.csv, or OLD.csv... -- NEW.csv...", len(files))
	case slices.Contains(files[i+1:], "--"):
		return nil, nil, errors.New("compare: more than one -- among the files")
	case i == 0 || i == len(files)-1:
		return nil, nil, errors.New("compare: no old files before -- or no new files after it")
	}
	return files[:i], files[i+1:], nil
}

// percent is a flag's value in percent: "10%" or "10".
type percent struct {
	value float64
	set   bool
}

func (p *percent) String() string {
	if p == nil || !p.set {
		return ""
	}
	return strconv.FormatFloat(p.value, 'f', -1, 64) + "%"
}

func (p *percent) Set(s string) error {
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return fmt.Errorf("want a percentage of 0 or more, e.g. 10%%; got %q", s)
	}
	p.value, p.set = v, true
	return nil
}

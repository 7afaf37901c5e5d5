package main

import (
	"errors"
	"fmt"
	"io"

	"bench/inputerr"
	"bench/report"
	"bench/results"
)

const reportSynopsis = `[--format md|tsv|json|html] [--latency] [--detail] [--layout machine|combined] [--session id] file.csv...

Renders the median tables of the sessions in the files: markdown as the
reference results print it, tsv as their text, json for other tools, or
html, one self-contained page with the tables and their charts.
--latency adds under each family's tables the p50 and p99 of each cell
(p99.9 for the mixes), where the load tool gives them. --detail adds what
the page has beyond the reference results' tables: a headline per row (the
fastest, its ratio to the runner-up and to no proxy, real or within
noise), each median's spread and runs (±3% n=3), and bench's build and the
command line in the Setup table.`

func cmdReport(stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("report", stderr, reportSynopsis)
	var opt report.Options
	fs.StringVar(&opt.Format, "format", report.FormatMarkdown, "output `format`: md (GitHub markdown), tsv, json or html (a page with charts)")
	fs.StringVar(&opt.Layout, "layout", report.LayoutMachine, "`layout`: machine (a table per machine) or combined (\"M4 / Intel / average\" cells)")
	fs.BoolVar(&opt.Latency, "latency", false, "add a latency table under each family's tables")
	fs.BoolVar(&opt.Detail, "detail", false, "add the page's detail: a headline per row, each median's spread and runs, the build")
	fs.StringVar(&opt.Session, "session", "", "render only the session with this `id` (default: every session, newest first)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return usageError{errors.New("report: no session files given: bench report data/*.csv")}
	}
	rows, err := results.ReadFiles(fs.Args())
	if err != nil {
		return err
	}
	switch opt.Format {
	case report.FormatHTML:
		return renderPage(stdout, fs.Args(), rows, opt)
	case "", report.FormatMarkdown, report.FormatTSV, report.FormatJSON:
	default:
		return inputerr.Bad(fmt.Errorf("unknown format %q (want %s, %s, %s or %s)",
			opt.Format, report.FormatMarkdown, report.FormatTSV, report.FormatJSON, report.FormatHTML))
	}
	if opt.Files, err = results.ReadMetas(fs.Args()); err != nil {
		return err
	}
	return report.Render(stdout, rows, opt)
}

package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"bench/report"
	"bench/report/changepoint"
	"bench/report/trend"
)

const trendSynopsis = `[--format md|html] [--since YYYY-MM-DD] [--machine GLOBS] [--scenario GLOBS] [--proxy NAMES] [--min-step PCT%] [--fail-new PCT%] DIR

DIR is a history (bench history add): DIR/<machine>/<date>-<session>/<csv>.
A DIR that is not a folder, holds no session at that depth (a machine's or a
session's folder), holds one session twice (its folder copied) or more
sessions than a history may hold is refused (exit 2), --fail-new or not; a
link or a FIFO where a session's file or folder is expected is skipped,
never opened, with a warning on stderr.
Each cell of each machine, by its throughput and by its p99 where the runs
have one, is a series of its sessions' medians; its change points are
found by E-Divisive means (two sessions a side at the least, p ≤ 0.001 over
1000 permutations of fixed draws) and kept where the step's whole 95%
interval, from the sessions and runs on either side, lies beyond
--min-step (the default is the spread of the reference session's quietest
cells); a session that stands out alone is listed as an outlier, never a
change. The text lists them newest first by the session where the new
level begins, a column's changes from one night (a session either side) as
one event with its series, the event of most series first: each step with
its interval, the levels before and after, the noise, whether it is still
in force, and what versions changed; then the outliers, by night. --format
html is one self-contained page with a chart of each series with a change
point: its runs session by session, its median, its levels before and
after each change point, the change points and the sessions that ran a new
bench or a new version of the column.

--fail-new fails when a change for the worse past it fires on the newest
session of a machine: once a change, on the first night its step is past
the gate, and again only when it has grown by the gate past the most it
showed, followed night to night by its series and place (one session alone
is never a change: a new level shows on its second session at the
soonest); the series whose noise and history cannot show a step that size
are listed on stderr.`

func cmdTrend(stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("trend", stderr, trendSynopsis)
	format := fs.String("format", report.FormatMarkdown, "output `format`: md (GitHub markdown) or html (a page with a chart of each series)")
	since := fs.String("since", "", "only the sessions started on or after this `date` (YYYY-MM-DD, UTC)")
	machine := fs.String("machine", "", "only the machines whose label or folder matches one of these comma-separated `globs`")
	scenario := fs.String("scenario", "", "only the scenarios matching one of these comma-separated `globs`, e.g. 'http-*,relay-stream1'")
	proxy := fs.String("proxy", "", "only these columns, comma-separated `names`")
	minStep := percent{value: changepoint.DefaultMinStep, set: true}
	fs.Var(&minStep, "min-step", "keep a change point only where its step's whole 95% interval lies beyond this `percent`")
	var gate percent
	fs.Var(&gate, "fail-new", "fail (exit 1) when the newest session shows a change for the worse past this `percent`, e.g. 5%")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return usageError{fmt.Errorf("trend: want one history directory, got %d arguments", fs.NArg())}
	}
	var opt trend.Options
	opt.Detect.MinStep = minStep.value
	if minStep.value == 0 {
		opt.Detect.MinStep = -1 // none: the zero of Options is its default
	}
	var err error
	if *since != "" {
		if opt.Since, err = time.Parse(time.DateOnly, *since); err != nil {
			return usageError{fmt.Errorf("trend: --since %q: want a date, YYYY-MM-DD", *since)}
		}
	}
	if opt.Machine, err = trend.ParseGlobs(*machine); err != nil {
		return usageError{fmt.Errorf("trend: --machine: %w", err)}
	}
	if opt.Scenario, err = trend.ParseGlobs(*scenario); err != nil {
		return usageError{fmt.Errorf("trend: --scenario: %w", err)}
	}
	if *proxy != "" {
		for _, p := range strings.Split(*proxy, ",") {
			opt.Proxy = append(opt.Proxy, strings.TrimSpace(p))
		}
	}
	if *format != report.FormatMarkdown && *format != report.FormatHTML {
		return usageError{fmt.Errorf("trend: --format %q: want md or html", *format)}
	}
	sessions, warnings, err := trend.ReadHistory(fs.Arg(0))
	for _, w := range warnings {
		fmt.Fprintf(stderr, "bench: warning: %s\n", w)
	}
	if err != nil {
		return err
	}
	tr, err := trend.Of(sessions, opt)
	if err != nil {
		return err
	}
	if err := trend.Write(stdout, tr, *format); err != nil {
		return err
	}
	if !gate.set {
		return nil
	}
	if blind := tr.Undetectable(gate.value); len(blind) > 0 {
		fmt.Fprintf(stderr, "bench trend: %d series cannot show a step of %s yet (their noise and history; the smallest step each can show):\n", len(blind), gate.String())
		for _, s := range blind {
			fmt.Fprintf(stderr, "  %s\n", terminal(s.DescribeDetectable()))
		}
	}
	reg := tr.NewRegressions(gate.value)
	if len(reg) == 0 {
		return nil
	}
	lines := make([]string, len(reg))
	for i, c := range reg {
		lines[i] = "  " + c.Describe(tr)
	}
	return fmt.Errorf("trend: the newest session revealed %d change(s) for the worse beyond %s:\n%s", len(reg), gate.String(), strings.Join(lines, "\n"))
}

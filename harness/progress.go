package harness

import (
	"bench/internal/text"
	"fmt"
	"io"
	"strings"
	"time"

	"bench/harness/pace"
	"bench/harness/sweep"
	"bench/results"
	"bench/scenarios"
)

// progress prints a session's course: a line per run with its result, and
// on a terminal a status line rewritten in place with the ETA. A column's
// name and a run's note are printed as results.Visible writes them: no
// escape of theirs reaches the terminal.
type progress struct {
	w        io.Writer
	live     bool
	total    int // runs still to do when the session started
	done     int
	start    time.Time
	perRun   time.Duration // expected wall time of a run
	spent    time.Duration // wall time of the runs done
	lastLine int
}

func newProgress(cfg SessionConfig, runs []RunSpec, done map[RunKey]bool) *progress {
	todo := 0
	var left time.Duration
	for _, r := range runs {
		if !done[r.Key()] {
			todo++
			left += cfg.runTime(r.Scenario)
		}
	}
	w := cfg.Progress
	if w == nil {
		w = io.Discard
	}
	p := &progress{w: w, live: cfg.Live, total: todo, start: time.Now(), perRun: cfg.runTime(scenarios.Scenario{})}
	if todo > 0 {
		p.perRun = left / time.Duration(todo)
	}
	return p
}

// add counts the runs of a repetition added to the plan, less those a
// resumed session has done.
func (p *progress) add(runs []RunSpec, done map[RunKey]bool) {
	for _, r := range runs {
		if !done[r.Key()] {
			p.total++
		}
	}
	fmt.Fprintf(p.w, "repetition %d: %s whose median is not settled yet\n", runs[0].Rep, text.Plural(len(runs), "cell"))
}

// eta is the expected time left: the average of the runs done so far,
// or the first guess before any.
func (p *progress) eta() time.Duration {
	per := p.perRun
	if p.done > 0 {
		per = p.spent / time.Duration(p.done)
	}
	return per * time.Duration(p.total-p.done)
}

func (p *progress) begin(r RunSpec) {
	if !p.live {
		return
	}
	line := fmt.Sprintf("run %d/%d  %s  %s  rep %d  elapsed %s  ETA %s",
		p.done+1, p.total, r.Scenario.Name, results.Visible(r.Column.Name), r.Rep,
		formatDuration(time.Since(p.start)), formatDuration(p.eta()))
	p.rewrite(line)
}

func (p *progress) rewrite(line string) {
	pad := ""
	if n := p.lastLine - len(line); n > 0 {
		pad = strings.Repeat(" ", n)
	}
	fmt.Fprintf(p.w, "\r%s%s", line, pad)
	p.lastLine = len(line)
}

func (p *progress) end(r RunSpec, row results.Row, took time.Duration) {
	p.endLine(r, runSummary(row), took)
}

// endLine prints the line of a run that ended, summary its result.
func (p *progress) endLine(r RunSpec, summary string, took time.Duration) {
	p.done++
	p.spent += took
	p.clear()
	fmt.Fprintf(p.w, "[%d/%d] %-22s %-20s rep %d  %s  (%s, ETA %s)\n",
		p.done, p.total, r.Scenario.Name, results.Visible(r.Column.Name), r.Rep, results.Visible(summary),
		formatDuration(took), formatDuration(p.eta()))
}

// clear takes the live line away before a line is printed.
func (p *progress) clear() {
	if p.live {
		p.rewrite("")
		fmt.Fprint(p.w, "\r")
		p.lastLine = 0
	}
}

// step prints the line of a sweep's step, with its row's result and its
// p99: "    step 3 at 4000/s: pass  4.0k req/s  bound none ...".
func (p *progress) step(w sweep.Window, row results.Row, took time.Duration) {
	p.clear()
	st, _, _ := results.ParseStep(row.Note)
	what, verdict, _ := strings.Cut(strings.TrimPrefix(st.String(), "sweep "), ": ")
	fmt.Fprintf(p.w, "    %-9s at %6.0f/s: %s  %s  p99 %.1f ms  (%s)\n", what, w.Rate, verdict, results.Visible(runSummary(row)), row.P99Ms, formatDuration(took))
}

// endSweep prints the line of a sweep that ended: the rate its search
// found, or that it found none, or that it FAILED where failure (the
// step error that ended it) is not nil, and in how many windows.
func (p *progress) endSweep(r RunSpec, s *sweep.Search, failure error, took time.Duration) {
	summary := fmt.Sprintf("no sustainable rate in %s", text.Plural(s.Windows(), "window"))
	if rate, found := s.Result(); found {
		summary = fmt.Sprintf("sustainable rate %.0f/s, confirmed, in %s", rate, text.Plural(s.Windows(), "window"))
	} else if rate, found := s.Unconfirmed(); found {
		summary = fmt.Sprintf("sustainable rate %.0f/s, not confirmed, in %s", rate, text.Plural(s.Windows(), "window"))
	} else if s.Flat() {
		summary = fmt.Sprintf("no sustainable rate: fails at every rate, in %s", text.Plural(s.Windows(), "window"))
	} else if failure != nil {
		summary = fmt.Sprintf("FAILED after %s", text.Plural(s.Windows(), "window"))
	}
	p.endLine(r, summary, took)
}

func (p *progress) finish() {
	if p.live && p.lastLine > 0 {
		p.rewrite("")
		fmt.Fprint(p.w, "\r")
	}
}

// runSummary is a run's one-line result: its rate, the pace-setter, the
// proxy's CPU and memory, how much of the window it was held at its CPU
// quota, the pipes it spliced through, and its errors; or why it failed.
// The rate is in the unit of the run's cell, as the tables give it
// (results.UnitOf).
func runSummary(r results.Row) string {
	if r.Status != results.OK {
		return "FAILED: " + r.Note
	}
	unit := r.Cell().Unit()
	rate := unit.Format(unit.Of(&r))
	s := fmt.Sprintf("%s  bound %s  proxy busy %.0f%%  mem %.0f MB", rate, r.Bound, r.BusyProxy*100, float64(r.PeakMemBytes)/1e6)
	if r.Throttling {
		s += fmt.Sprintf("  throttled %.0f%%", pace.ThrottledShare(r.ThrottledPeriods, r.Seconds)*100)
	}
	if r.SplicePipes > 0 {
		s += fmt.Sprintf("  pipes %d", r.SplicePipes)
	}
	if r.Errors > 0 || r.Timeouts > 0 {
		s += fmt.Sprintf("  errors %d timeouts %d", r.Errors, r.Timeouts)
	}
	return s
}

package harness

import (
	"fmt"
	"io"
	"strings"
	"time"

	"bench/report/pace"
	"bench/report/results"
)

// progress prints a session's course: a line per run with its result, and
// on a terminal a status line rewritten in place with the ETA.
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
			left += cfg.runTime(r.Scenario.Mode)
		}
	}
	w := cfg.Progress
	if w == nil {
		w = io.Discard
	}
	p := &progress{w: w, live: cfg.Live, total: todo, start: time.Now(), perRun: cfg.runTime("")}
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
	fmt.Fprintf(p.w, "repetition %d: %s whose median is not settled yet\n", runs[0].Rep, plural(len(runs), "cell"))
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
		p.done+1, p.total, r.Scenario.Name, r.Column.Name, r.Rep,
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
	p.done++
	p.spent += took
	if p.live {
		p.rewrite("")
		fmt.Fprint(p.w, "\r")
		p.lastLine = 0
	}
	fmt.Fprintf(p.w, "[%d/%d] %-22s %-20s rep %d  %s  (%s, ETA %s)\n",
		p.done, p.total, r.Scenario.Name, r.Column.Name, r.Rep, runSummary(row),
		formatDuration(took), formatDuration(p.eta()))
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

package harness

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"bench/harness/host"
	"bench/harness/sweep"
	"bench/results"
	"bench/scenarios"
)

// A sweep (a scenario of load sweep) is one run of the schedule that
// writes a row a step of its search for the column's sustainable rate
// (harness/sweep). The column starts once, and bench mix once in the
// client's namespace, where it opens its connections and steps
// (--steps): the session asks for each step on its input and samples
// that step's window alone, so that each row has the CPU figures and the
// pace-setter of its own window, and the bound of the step that failed
// says which role gave out.

// runSweep runs the search of run r, or what is left of it when the
// session's file has some of its steps (a resumed session replays them
// and goes on), writing a row a step as each ends. A step that cannot be
// measured (the proxy exits, bench mix fails) is written failed and ends
// the search; the session goes on. The error is the session's own: its
// file cannot be written, or it was interrupted.
func (s *Session) runSweep(ctx context.Context, r RunSpec, p *progress) error {
	search, _, err := replaySweep(s.cfg.SweepSettings(), s.sched.Steps[r.Key()])
	if err != nil {
		return err
	}
	name := runName(r)
	dir := filepath.Join(s.host.RunDir(), "runs", name)
	defer os.RemoveAll(dir)
	began := time.Now()
	var failure error // the step error that ended the search, nil for none
	err = s.sweepIn(ctx, r, search, dir, p)
	var stepErr stepError
	switch {
	case ctx.Err() != nil:
		return ctx.Err() // the step in flight is not recorded
	case errors.As(err, &stepErr):
		// A failed row: of the step in flight, or of the search when it
		// could not start.
		failure = stepErr
		row := s.rowOf(r)
		// stamped, so that it reads as its search's last step
		row.Started = time.Now().UTC()
		why := oneLine(stepErr.Error())
		rate, _, _ := search.Next()
		if !stepErr.measuring {
			search.Stop()
		} else if st, ok := search.Abort(why); ok {
			row.OfferedRate, row.HasOffered = rate, true
			why = st.String()
		}
		row.Note = joinNotes(why, r.Scaled())
		if err := s.csv.Write(row); err != nil {
			return err
		}
	case err != nil:
		return err
	}
	s.keep(dir, name, failure)
	p.endSweep(r, search, failure, time.Since(began))
	return nil
}

// stepError is what kept a sweep from starting or from measuring a step
// (measuring): the run's failure, not the session's.
type stepError struct {
	error
	measuring bool
}

// sweepIn starts run r's column in dir and bench mix stepping through it,
// and runs the search's windows, writing each step's row, its load's
// output and its data. A failure to start or to measure a step is a
// stepError.
func (s *Session) sweepIn(ctx context.Context, r RunSpec, search *sweep.Search, dir string, p *progress) error {
	st, err := s.start(ctx, r, dir)
	defer st.stop()
	if err != nil {
		return stepError{err, false}
	}
	target := s.target(r, st)
	method := s.cfg.MethodOf(r.Scenario.Mode)
	steps, err := s.startSteps(ctx, r, target, time.Duration(method.Window), filepath.Join(dir, "load"))
	if err != nil {
		return stepError{err, false}
	}
	defer steps.close()
	var (
		x     measured
		line  string
		began time.Time
	)
	n := search.Windows()
	return search.Run(time.Duration(method.Window), time.Duration(method.Warmup), func(w sweep.Window) (f sweep.Figures, err error) {
		began = time.Now()
		x, line, f, err = s.measureStep(ctx, r, st, steps, w, stepName(r, n+1), dir)
		if err != nil {
			return f, stepError{err, true}
		}
		return f, nil
	}, func(w sweep.Window, step results.Step) error {
		n++
		row := s.rowOf(r)
		x.fill(&row, r)
		row.Status, row.OfferedRate, row.HasOffered = results.OK, w.Rate, true
		row.Note = joinNotes(step.String(), row.Note)
		if err := s.csv.Write(row); err != nil {
			return err
		}
		name := stepName(r, n)
		_ = results.WriteFile(filepath.Join(s.OutputDir, name+".load."+scenarios.ToolBench+".out"), []byte(line))
		s.keepData(name, &row, x.m, x.sample, x.profile)
		p.step(w, row, time.Since(began))
		return nil
	})
}

// stepName is the name of the files of the nth window of run r's search
// (from 1): the run's, and the window's.
func stepName(r RunSpec, n int) string {
	return fmt.Sprintf("%s-w%02d", runName(r), n)
}

// measureStep runs window w of a search on the stepping bench mix, with
// the sampler on over that window alone, and where the session profiles,
// perf over the same window (its files named name, its recording in
// dir); it returns what it measured, the line bench mix printed and the
// figures the search judges.
func (s *runner) measureStep(ctx context.Context, r RunSpec, st *started, steps *stepper, w sweep.Window, name, dir string) (x measured, line string, f sweep.Figures, err error) {
	// Before its warm-up a step may wait for the connections closed at
	// the last one's end to open again (the opening's grace), then says
	// when its warm-up begins: the sampler plans the window from then.
	prof := s.startProfile(st, filepath.Join(dir, "perf-"+strings.TrimPrefix(name, runName(r)+"-")))
	defer prof.close()
	sampler, err := s.host.StartSampling(host.Plan{Warmup: w.Warmup, Length: w.Length, Deferred: true})
	if err != nil {
		return x, "", f, err
	}
	line, err = steps.step(ctx, scenarios.MixWindow{Rate: w.Rate, Warmup: w.Warmup, Duration: w.Length}, steps.opening)
	if err == nil {
		if o, ok := scenarios.ParseMixOpened([]byte(line)); ok {
			sampler.Begin(o.Start)
			prof.begin(o.Start.Add(w.Warmup))
			line, err = steps.next(ctx, time.Until(o.Start)+w.Warmup+w.Length+scenarios.StepGrace(r.Scenario.Load))
		} else {
			err = fmt.Errorf("bench mix's step began with %q, not with when its warm-up begins", strings.TrimSpace(line))
		}
	}
	ended := time.Now()
	prof.end(s.host)
	if err != nil {
		sampler.Stop()
		return x, line, f, err
	}
	var res scenarios.MixResult
	if err := json.Unmarshal([]byte(line), &res); err != nil {
		sampler.Stop()
		return x, line, f, fmt.Errorf("bench mix's step: %w", err)
	}
	m, err := scenarios.Mix{}.Parse([]byte(line))
	if err != nil {
		sampler.Stop()
		return x, line, f, err
	}
	x, err = s.closeWindow(r, st, sampler, m, ended)
	x.profile = s.keepProfile(ctx, prof, name)
	return x, line, sweep.FiguresOf(res), err
}

// stepper is a bench mix stepping in the client's namespace (--steps):
// the session writes a step a line on its input and reads, a line each
// on its output, when the step's warm-up begins and its result.
type stepper struct {
	proc    *host.Proc
	in      *os.File    // the writing end of its standard input
	lines   chan string // its output, a line each; closed when it has exited
	log     string
	opening time.Duration // how long opening its connections may take
}

// stepperLines is how many lines of a stepping bench mix's output are
// kept unread at most: two a window and its ready, so that its output
// never waits for the session.
const stepperLines = 2*sweep.MaxWindows + 1

// startSteps starts bench mix stepping for run r against target, its
// confirming window window, with its files in dir, and waits for it to
// have opened its connections (its opening's grace).
func (s *runner) startSteps(ctx context.Context, r RunSpec, target scenarios.Target, window time.Duration, dir string) (*stepper, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	inv, _, err := scenarios.Build(r.Scenario, target, window, dir)
	if err != nil {
		return nil, err
	}
	if inv.Argv, err = selfArgv(inv.Argv); err != nil {
		return nil, err
	}
	stdin, in, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("bench mix's input: %w", err)
	}
	pr, pw := io.Pipe()
	log := filepath.Join(dir, scenarios.ToolBench+".log")
	proc, err := s.host.Start(host.RoleClient, host.ProcSpec{Argv: inv.Argv, Dir: dir, Log: log, Stdin: stdin, Stdout: pw})
	stdin.Close()
	if err != nil {
		in.Close()
		pw.Close()
		return nil, err
	}
	st := &stepper{proc: proc, in: in, lines: make(chan string, stepperLines), log: log, opening: inv.Grace}
	go st.read(pr)
	go func() {
		<-proc.Done() // its output is copied whole by then
		pw.Close()
	}()
	line, err := st.next(ctx, inv.Grace)
	if err == nil && strings.TrimSpace(line) != "ready" {
		err = fmt.Errorf("bench mix did not say it was ready: %q", strings.TrimSpace(line))
	}
	if err != nil {
		st.close()
		return nil, fmt.Errorf("bench mix opening %d connections: %w", r.Scenario.Load.Conns, err)
	}
	return st, nil
}

// read passes on bench mix's output a line at a time.
func (st *stepper) read(r io.Reader) {
	defer close(st.lines)
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			st.lines <- line
		}
		if err != nil {
			return
		}
	}
}

// next is bench mix's next line, waited for at most wait.
func (st *stepper) next(ctx context.Context, wait time.Duration) (string, error) {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case line, ok := <-st.lines:
		if !ok {
			<-st.proc.Done()
			return "", st.exited()
		}
		return line, nil
	case <-t.C:
		return "", fmt.Errorf("bench mix said nothing for %s; log: %s", formatDuration(wait), st.tail())
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// exited says why bench mix ended before it was done.
func (st *stepper) exited() error {
	if err := st.proc.Err(); err != nil {
		return fmt.Errorf("bench mix exited: %w; log: %s", err, st.tail())
	}
	return fmt.Errorf("bench mix exited; log: %s", st.tail())
}

// tail is the end of bench mix's log, on one line.
func (st *stepper) tail() string {
	return strings.Join(host.TailLines(st.log, 3), " | ")
}

// step asks for window w and waits at most wait for its first line,
// when its warm-up begins (scenarios.MixOpened); its result follows.
func (st *stepper) step(ctx context.Context, w scenarios.MixWindow, wait time.Duration) (string, error) {
	if _, err := fmt.Fprintln(st.in, scenarios.FormatMixStep(w, time.Time{})); err != nil {
		return "", fmt.Errorf("ask bench mix for a step: %w; log: %s", err, st.tail())
	}
	return st.next(ctx, wait)
}

// stepperGrace is how long a stepping bench mix has to close its
// connections and exit once its input has ended.
const stepperGrace = 10 * time.Second

// close ends bench mix's input, so that it closes its connections and
// exits, and stops it if it does not in time. It may be called more than
// once.
func (st *stepper) close() {
	st.in.Close()
	t := time.NewTimer(stepperGrace)
	defer t.Stop()
	select {
	case <-st.proc.Done():
	case <-t.C:
		st.proc.Stop(stepperGrace)
	}
}

// replaySweep is the search of a sweep's run as rows, its steps in the
// session's file in their order, left it: its steps replayed, so that a
// resumed session goes on from the window that was in flight. done says
// whether the search had ended: it found a rate or none, or a step that
// could not be measured (a failed row) ended it.
func replaySweep(cfg results.Sweep, rows []results.Row) (s *sweep.Search, done bool, err error) {
	s = sweep.New(cfg)
	for _, row := range rows {
		if !row.HasOffered {
			return s, true, nil // failed before its first step
		}
		st, ok, err := results.ParseStep(row.Note)
		if err == nil && !ok {
			err = fmt.Errorf("note %q: not a sweep's step", row.Note)
		}
		if err == nil {
			err = s.Replay(row.OfferedRate, st, sweep.FiguresOfRow(&row))
		}
		if err != nil {
			return s, false, fmt.Errorf("%s:%d: the search of %s in %s, rep %d: %w", row.Source, row.Line, row.Proxy, row.Cell().Scenario(), row.Rep, err)
		}
		if row.Status != results.OK {
			s.Stop()
			return s, true, nil
		}
	}
	_, _, done = s.Next()
	return s, done, nil
}

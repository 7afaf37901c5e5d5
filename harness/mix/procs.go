package mix

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"bench/scenarios"

	"bench/internal/child"
)

// DefaultProcs is how many processes the mix c runs in by default: one
// per CPU this process may run on (its affinity, which a cpuset also
// sets), but in a closed loop no more than its exchanges at a time, since
// each process runs one at least; more when a share of the connections
// would not fit in perProc, the connections a process holds under its
// descriptor limit (0: no limit); and no more than one per connection.
// Only the descriptor limit makes it more than CheckSplit allows.
func DefaultProcs(c Config, perProc int) int {
	n := runtime.NumCPU()
	if c.Active > 0 {
		n = min(n, c.Active)
	}
	if perProc > 0 {
		n = max(n, (c.Conns+perProc-1)/perProc)
	}
	return max(1, min(n, c.Conns))
}

// Share is process i's part of c split over n processes: its
// connections, exchanges at a time, rate and opening pace, the number of
// its first connection, and at a fixed rate its schedule's offset, i/rate,
// so that the processes' exchanges, started together, take turns.
func Share(c Config, i, n int) Config {
	s := c
	s.Conns = scenarios.Part(c.Conns, i, n)
	for j := range i {
		s.FirstConn += scenarios.Part(c.Conns, j, n)
	}
	if c.Active > 0 {
		s.Active = max(1, scenarios.Part(c.Active, i, n))
	}
	if c.Rate > 0 {
		var off time.Duration
		s.Rate, off = shareRate(c.Rate, i, n)
		s.Offset = c.Offset + off
	}
	s.OpenRate = c.OpenRate / float64(n)
	s.OpenParallel = max(1, scenarios.Part(c.OpenParallel, i, n))
	return s
}

// shareRate is process i's part of a rate split over n processes, and
// the offset of its schedule: i/rate, so that the processes' exchanges,
// started together, take turns.
func shareRate(rate float64, i, n int) (float64, time.Duration) {
	return rate / float64(n), time.Duration(float64(i) / rate * float64(time.Second))
}

// CheckSplit reports what keeps c from being split over n processes.
func CheckSplit(c Config, n int) error {
	switch {
	case n < 1:
		return fmt.Errorf("%d processes: want at least 1", n)
	case n > c.Conns:
		return fmt.Errorf("%d processes for %d connections: want at least one each", n, c.Conns)
	case c.Active > 0 && c.Active < n:
		return fmt.Errorf("%d exchanges at a time over %d processes: want at least one each", c.Active, n)
	}
	return nil
}

// Run runs the mix c in this process: opens its connections, tells
// opened (when not nil) when the warm-up begins, then runs the warm-up
// and the window.
func Run(ctx context.Context, c Config, opened func(scenarios.MixOpened)) (scenarios.MixResult, error) {
	m, err := New(c)
	if err != nil {
		return scenarios.MixResult{}, err
	}
	m.Open(ctx)
	start, err := c.Start.at(ctx, time.Now())
	if err != nil {
		m.Close()
		return scenarios.MixResult{}, err
	}
	if opened != nil {
		opened(scenarios.MixOpened{Start: start})
	}
	return m.RunFrom(ctx, start), nil
}

// WriteOpened writes o as one line of JSON, before the report.
func WriteOpened(w io.Writer, o scenarios.MixOpened) error { return writeLine(w, o) }

// The split protocol: a worker prints workerReady on its standard output
// once its connections are open, then reads lines on its standard input:
// workerGo and a start the workers share, in Unix nanoseconds, runs the
// warm-up and the window from it, prints its result as a line of JSON
// and ends; workerRefill, which opens again the connections closed since
// the last step and answers workerReady as a JSON string, so that the
// start of the next step is chosen once every worker's connections are
// open; or a step (scenarios.FormatMixStep, with the shared start and its offset),
// which it runs on the connections it keeps open, printing its result,
// and reads the next line, until its input ends.
const (
	workerReady  = "ready"
	workerGo     = "go"
	workerRefill = "refill"
)

// startDelay is how far ahead of the go the shared start is set, so that
// every worker has read it before it comes.
const startDelay = 100 * time.Millisecond

// WorkerFlag is the flag that makes bench mix a worker, "i/n".
const WorkerFlag = "worker"

// Stepper runs the windows of a sweep, one after the other, over the
// connections it keeps open.
type Stepper interface {
	// Ready opens again the connections closed at the last step's end
	// (by it or by the proxy since), and returns once they are open: a
	// step from a start chosen after it begins with every connection
	// open.
	Ready(ctx context.Context) error
	// Step runs window w from start (zero: as soon as it can, once
	// Ready) and returns the window's figures.
	Step(ctx context.Context, start time.Time, w scenarios.MixWindow) (scenarios.MixResult, error)
	// Close closes the connections, and ends the processes it ran.
	Close() error
}

var (
	_ Stepper = (*Mix)(nil)
	_ Stepper = (*Procs)(nil)
)

// WriteResult writes r on w as one line of JSON, as bench mix prints it.
func WriteResult(w io.Writer, r scenarios.MixResult) error { return writeLine(w, r) }

// writeLine writes v as one line of JSON.
func writeLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// Steps says on out that st is ready, then runs the steps asked for on
// in, a line each (scenarios.FormatMixStep), writing on out for each the time its
// warm-up begins (WriteOpened), once its connections are open again,
// and its result (WriteResult), until in ends.
func Steps(ctx context.Context, st Stepper, in io.Reader, out io.Writer) error {
	return serveSteps(ctx, st, in, out, nil)
}

// serveSteps is Steps, with other taking the lines that do not ask for a
// step (nil: none may come; else a worker's, whose steps come with their
// start, chosen by the parent); done ends the loop.
func serveSteps(ctx context.Context, st Stepper, in io.Reader, out io.Writer, other func(line string) (done bool, err error)) error {
	if _, err := fmt.Fprintln(out, workerReady); err != nil {
		return err
	}
	r := bufio.NewReader(in)
	for {
		line, err := r.ReadString('\n')
		if strings.TrimSpace(line) == "" && errors.Is(err, io.EOF) {
			return nil // the steps are over
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("waiting for a step: %w", err)
		}
		w, start, ok, perr := scenarios.ParseMixStep(line)
		switch {
		case perr != nil:
			return perr
		case !ok && other == nil:
			return fmt.Errorf("%q: want a step, %q", strings.TrimSpace(line), "step RATE WARMUP DURATION")
		case !ok:
			if done, err := other(line); err != nil || done {
				return err
			}
			continue
		}
		if start.IsZero() {
			// chosen here, once the connections are open, and said
			// first: the session plans the step's sampling from it
			if start, err = readyStart(ctx, st); err != nil {
				return err
			}
			if err := WriteOpened(out, scenarios.MixOpened{Start: start}); err != nil {
				return err
			}
		}
		res, err := st.Step(ctx, start, w)
		if err != nil {
			return err
		}
		if err := WriteResult(out, res); err != nil {
			return err
		}
	}
}

// Worker runs c as one process of a split mix: it opens, says so on
// out, then runs from the go or the steps it reads on in (see the split
// protocol), printing each result on out.
func Worker(ctx context.Context, c Config, in io.Reader, out io.Writer) error {
	m, err := New(c)
	if err != nil {
		return err
	}
	m.Open(ctx)
	defer m.Close()
	return serveSteps(ctx, m, in, out, func(line string) (bool, error) {
		if strings.TrimSpace(line) == workerRefill {
			if err := m.Ready(ctx); err != nil {
				return true, err
			}
			return false, writeLine(out, workerReady)
		}
		var ns int64
		if _, err := fmt.Sscanf(line, workerGo+" %d", &ns); err != nil {
			return true, fmt.Errorf("the start %q: want %q and a time in Unix nanoseconds", strings.TrimSpace(line), workerGo)
		}
		return true, WriteResult(out, m.RunFrom(ctx, time.Unix(0, ns)))
	})
}

// ParseWorker reads the worker flag's "i/n".
func ParseWorker(s string) (i, n int, err error) {
	if _, err := fmt.Sscanf(s, "%d/%d", &i, &n); err != nil || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("--%s %q: want i/n with 0 <= i < n", WorkerFlag, s)
	}
	return i, n, nil
}

// Procs is a mix split over processes of bench mix, their connections
// open: they run one window from one start (RunProcs), or the steps of a
// sweep, each from a start they share.
type Procs struct {
	cancel  context.CancelFunc
	workers []worker
	closed  bool
}

// worker is one process of a split mix: its standard input, and its
// standard output, where its results come as JSON.
type worker struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *json.Decoder
}

// StartProcs starts the mix over n processes of exe, each started with
// argv (which must give the mix's whole configuration) and "--worker
// i/n", so that each takes its Share, and returns once all have opened
// their connections.
func StartProcs(ctx context.Context, exe string, argv []string, n int, stderr io.Writer) (_ *Procs, err error) {
	ctx, cancel := context.WithCancel(ctx)
	p := &Procs{cancel: cancel}
	defer func() {
		if err != nil {
			p.stop()
		}
	}()
	errOut := lockedWriter{w: stderr, mu: &sync.Mutex{}}
	outs := make([]*bufio.Reader, n)
	for i := range n {
		cmd := exec.CommandContext(ctx, exe, append(argv[:len(argv):len(argv)], "--"+WorkerFlag, fmt.Sprintf("%d/%d", i, n))...)
		cmd.Stderr = errOut
		in, err := cmd.StdinPipe()
		if err != nil {
			return nil, err
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if err := child.Start(cmd); err != nil {
			return nil, fmt.Errorf("start process %d of the mix: %w", i+1, err)
		}
		outs[i] = bufio.NewReader(out)
		p.workers = append(p.workers, worker{cmd: cmd, in: in, out: json.NewDecoder(outs[i])})
	}
	for i, out := range outs {
		line, err := out.ReadString('\n')
		if strings.TrimSpace(line) != workerReady {
			return nil, fmt.Errorf("process %d of the mix did not open its connections: %q %v", i+1, line, err)
		}
	}
	return p, nil
}

// RunProcs runs the mix over n processes of exe (StartProcs): they open
// their connections, start together from one time once all are open, and
// their results are merged.
func RunProcs(ctx context.Context, exe string, argv []string, n int, stderr io.Writer, from StartFrom, opened func(scenarios.MixOpened)) (scenarios.MixResult, error) {
	p, err := StartProcs(ctx, exe, argv, n, stderr)
	if err != nil {
		return scenarios.MixResult{}, err
	}
	start, err := from.at(ctx, time.Now().Add(startDelay))
	if err != nil {
		return scenarios.MixResult{}, p.failed(err)
	}
	if opened != nil {
		opened(scenarios.MixOpened{Start: start})
	}
	r, err := p.send(func(int) string { return fmt.Sprintf("%s %d", workerGo, start.UnixNano()) })
	if err != nil {
		return r, p.failed(err)
	}
	return r, p.Close()
}

// Ready has every process open again the connections closed since the
// last step, and returns once all have.
func (p *Procs) Ready(ctx context.Context) error {
	if p.closed {
		return errors.New("the mix's processes have ended")
	}
	for i, w := range p.workers {
		if _, err := fmt.Fprintln(w.in, workerRefill); err != nil {
			return p.failed(fmt.Errorf("ask process %d of the mix to open its connections: %w", i+1, err))
		}
	}
	for i, w := range p.workers {
		var said string
		if err := w.out.Decode(&said); err != nil || said != workerReady {
			return p.failed(fmt.Errorf("process %d of the mix did not open its connections again: %q %v", i+1, said, err))
		}
	}
	return nil
}

// Step runs window w over every process from one start (zero: startDelay
// from when every process has its connections open again, Ready), each
// its share of the rate offset by its turn (Share).
func (p *Procs) Step(ctx context.Context, start time.Time, w scenarios.MixWindow) (scenarios.MixResult, error) {
	if err := w.Check(); err != nil {
		return scenarios.MixResult{}, err
	}
	if start.IsZero() {
		var err error
		if start, err = readyStart(ctx, p); err != nil {
			return scenarios.MixResult{}, err
		}
	}
	n := len(p.workers)
	r, err := p.send(func(i int) string {
		share := w
		var off time.Duration
		share.Rate, off = shareRate(w.Rate, i, n)
		share.Offset += off
		return scenarios.FormatMixStep(share, start)
	})
	if err != nil {
		return r, p.failed(err)
	}
	return r, nil
}

// readyStart has st open its closed connections again (Ready) and gives
// the start of the step that follows, startDelay ahead, so that every
// process has read it before it comes.
func readyStart(ctx context.Context, st Stepper) (time.Time, error) {
	if err := st.Ready(ctx); err != nil {
		return time.Time{}, err
	}
	return time.Now().Add(startDelay), nil
}

// failed ends the processes at once after err, and returns it with why
// they ended (their exit statuses), which says more than a pipe's EOF.
func (p *Procs) failed(err error) error {
	return errors.Join(err, p.stop())
}

// send gives each process its line and merges their results.
func (p *Procs) send(line func(i int) string) (scenarios.MixResult, error) {
	if p.closed {
		return scenarios.MixResult{}, errors.New("the mix's processes have ended")
	}
	for i, w := range p.workers {
		if _, err := fmt.Fprintln(w.in, line(i)); err != nil {
			return scenarios.MixResult{}, fmt.Errorf("give process %d of the mix its window: %w", i+1, err)
		}
	}
	parts := make([]scenarios.MixResult, len(p.workers))
	for i, w := range p.workers {
		if err := w.out.Decode(&parts[i]); err != nil {
			return scenarios.MixResult{}, fmt.Errorf("result of process %d of the mix: %w", i+1, err)
		}
	}
	return Merge(parts)
}

// Close ends the processes once they have run their last window: their
// input ends, and each must exit cleanly. It may be called more than
// once.
func (p *Procs) Close() error {
	if p.closed {
		return nil
	}
	p.closed = true
	defer p.cancel()
	var errs []error
	for _, w := range p.workers {
		w.in.Close()
	}
	for i, w := range p.workers {
		if err := w.cmd.Wait(); err != nil {
			errs = append(errs, fmt.Errorf("process %d of the mix: %w", i+1, err))
		}
	}
	return errors.Join(errs...)
}

// stop ends the processes at once, after a failure, and returns how they
// ended.
func (p *Procs) stop() error {
	if p.closed {
		return nil
	}
	p.cancel()
	return p.Close()
}

// lockedWriter lets the workers share a writer.
type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// StartFrom says when a mix's warm-up begins, once its connections are
// open.
type StartFrom func(ctx context.Context) (time.Time, error)

// at is when the warm-up begins: now where f is nil.
func (f StartFrom) at(ctx context.Context, now time.Time) (time.Time, error) {
	if f == nil {
		return now, nil
	}
	return f(ctx)
}

// startWait is how long a mix waits for its start once it said it is
// ready: the other client hosts' opening of their connections.
const startWait = 2 * time.Minute

// FileStart is the start of a load split over several client hosts:
// the mix says it is ready (ready, once its connections are open), then
// waits for path to hold the start the hosts share, in Unix nanoseconds,
// which the session writes once every host is ready.
func FileStart(path string, ready func()) StartFrom {
	return func(ctx context.Context) (time.Time, error) {
		ready()
		ctx, cancel := context.WithTimeout(ctx, startWait)
		defer cancel()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			if b, err := os.ReadFile(path); err == nil && bytes.HasSuffix(b, []byte("\n")) {
				ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
				if err != nil {
					return time.Time{}, fmt.Errorf("the start in %s: %q is not a time in Unix nanoseconds", path, b)
				}
				return time.Unix(0, ns), nil
			}
			select {
			case <-ctx.Done():
				return time.Time{}, fmt.Errorf("no start in %s after %v: %w", path, startWait, context.Cause(ctx))
			case <-tick.C:
			}
		}
	}
}

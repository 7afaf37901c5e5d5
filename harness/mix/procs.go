package mix

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"bench/harness/host"
	"bench/scenarios"
)

// fdReserve is what a process keeps beside its connections' descriptors.
const fdReserve = host.FDReserve

// DefaultProcs is how many processes the mix c runs in by default: one
// per CPU this process may run on (its affinity, which a cpuset also
// sets), but in a closed loop no more than its exchanges at a time, since
// each process runs one at least; more when a share of the connections
// would not fit under the per-process descriptor limit; and no more than
// one per connection. Only the descriptor limit makes it more than
// CheckSplit allows.
func DefaultProcs(c Config) int {
	n := runtime.NumCPU()
	if c.Active > 0 {
		n = min(n, c.Active)
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil && lim.Max > fdReserve {
		// The Go runtime raises the soft limit to the hard one.
		per := int(min(lim.Max-fdReserve, 1<<30))
		n = max(n, (c.Conns+per-1)/per)
	}
	return max(1, min(n, c.Conns))
}

// part is the i-th of n nearly equal parts of total.
func part(total, i, n int) int {
	p := total / n
	if i < total%n {
		p++
	}
	return p
}

// Share is process i's part of c split over n processes: its
// connections, exchanges at a time, rate and opening pace, the number of
// its first connection, and at a fixed rate its schedule's offset, i/rate,
// so that the processes' exchanges, started together, take turns.
func Share(c Config, i, n int) Config {
	s := c
	s.Conns = part(c.Conns, i, n)
	for j := range i {
		s.FirstConn += part(c.Conns, j, n)
	}
	if c.Active > 0 {
		s.Active = max(1, part(c.Active, i, n))
	}
	s.Rate = c.Rate / float64(n)
	if c.Rate > 0 {
		s.Offset = c.Offset + time.Duration(float64(i)/c.Rate*float64(time.Second))
	}
	s.OpenRate = c.OpenRate / float64(n)
	s.OpenParallel = max(1, part(c.OpenParallel, i, n))
	return s
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

// Run runs the mix c in this process: opens its connections, then the
// warmup and the window.
func Run(ctx context.Context, c Config) (scenarios.MixResult, error) {
	m, err := New(c)
	if err != nil {
		return scenarios.MixResult{}, err
	}
	m.Open(ctx)
	return m.Run(ctx), nil
}

// The split protocol: a worker prints workerReady on its standard output
// once its connections are open, waits for a line on its standard input
// giving the start the workers share (workerGo and the time in Unix
// nanoseconds), then runs from it and prints its result as JSON.
const (
	workerReady = "ready"
	workerGo    = "go"
)

// startDelay is how far ahead of the go the shared start is set, so that
// every worker has read it before it comes.
const startDelay = 100 * time.Millisecond

// WorkerFlag is the flag that makes bench mix a worker, "i/n".
const WorkerFlag = "worker"

// Worker runs c as one process of a split mix: it opens, says so on
// out, waits for the go on in, runs, and returns the result for the
// caller to print on out.
func Worker(ctx context.Context, c Config, in io.Reader, out io.Writer) (scenarios.MixResult, error) {
	m, err := New(c)
	if err != nil {
		return scenarios.MixResult{}, err
	}
	m.Open(ctx)
	if _, err := fmt.Fprintln(out, workerReady); err != nil {
		return scenarios.MixResult{}, err
	}
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil {
		return scenarios.MixResult{}, fmt.Errorf("waiting for the start: %w", err)
	}
	var ns int64
	if _, err := fmt.Sscanf(line, workerGo+" %d", &ns); err != nil {
		return scenarios.MixResult{}, fmt.Errorf("the start %q: want %q and a time in Unix nanoseconds", strings.TrimSpace(line), workerGo)
	}
	return m.RunFrom(ctx, time.Unix(0, ns)), nil
}

// ParseWorker reads the worker flag's "i/n".
func ParseWorker(s string) (i, n int, err error) {
	if _, err := fmt.Sscanf(s, "%d/%d", &i, &n); err != nil || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("--%s %q: want i/n with 0 <= i < n", WorkerFlag, s)
	}
	return i, n, nil
}

// RunProcs runs the mix over n processes of exe, each started with argv
// (which must give the mix's whole configuration) and "--worker i/n",
// so that each takes its Share. They open their connections, start
// together from one time once all are open, and their results are
// merged.
func RunProcs(ctx context.Context, exe string, argv []string, n int, stderr io.Writer) (scenarios.MixResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the workers still running on a failure
	type worker struct {
		cmd *exec.Cmd
		in  io.WriteCloser
		out *bufio.Reader
	}
	var (
		workers []worker
		mu      sync.Mutex
		errOut  = lockedWriter{w: stderr, mu: &mu}
	)
	wait := func() {
		for _, w := range workers {
			w.in.Close()
			w.cmd.Wait()
		}
	}
	for i := range n {
		cmd := exec.CommandContext(ctx, exe, append(argv[:len(argv):len(argv)], "--"+WorkerFlag, fmt.Sprintf("%d/%d", i, n))...)
		cmd.Stderr = errOut
		in, err := cmd.StdinPipe()
		if err != nil {
			cancel()
			wait()
			return scenarios.MixResult{}, err
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			cancel()
			wait()
			return scenarios.MixResult{}, err
		}
		if err := cmd.Start(); err != nil {
			cancel()
			wait()
			return scenarios.MixResult{}, fmt.Errorf("start process %d of the mix: %w", i+1, err)
		}
		workers = append(workers, worker{cmd, in, bufio.NewReader(out)})
	}
	fail := func(err error) (scenarios.MixResult, error) {
		cancel()
		wait()
		return scenarios.MixResult{}, err
	}
	for i, w := range workers {
		line, err := w.out.ReadString('\n')
		if strings.TrimSpace(line) != workerReady {
			return fail(fmt.Errorf("process %d of the mix did not open its connections: %q %v", i+1, line, err))
		}
	}
	start := time.Now().Add(startDelay)
	for i, w := range workers {
		if _, err := fmt.Fprintf(w.in, "%s %d\n", workerGo, start.UnixNano()); err != nil {
			return fail(fmt.Errorf("start process %d of the mix: %w", i+1, err))
		}
	}
	parts := make([]scenarios.MixResult, n)
	for i, w := range workers {
		if err := json.NewDecoder(w.out).Decode(&parts[i]); err != nil {
			return fail(fmt.Errorf("result of process %d of the mix: %w", i+1, err))
		}
	}
	for i, w := range workers {
		w.in.Close()
		if err := w.cmd.Wait(); err != nil {
			return fail(fmt.Errorf("process %d of the mix: %w", i+1, err))
		}
	}
	return Merge(parts)
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

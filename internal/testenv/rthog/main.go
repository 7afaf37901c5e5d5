// Command rthog handicaps the machine as a benchmark's load does: on each
// CPU it is given, a real-time (SCHED_FIFO) busy loop runs busy of every
// period, so that ordinary threads there are held off that long. With a
// command after --, it holds the CPUs while the command runs and exits
// with its status; make test runs its handicapped lane so (the
// Makefile's HANDICAPPED_PKGS).
//
//	rthog -hold 0:175ms/700ms -hold 1:275ms/1100ms -- go test ./...
//	rthog -hold 0:300ms/1s -for 10m
//
// A handicap that was not applied fails rather than passing unloaded: a
// loop that could not be made real-time stops rthog before the command
// starts, and a loop whose thread ran less than 90% of the time it was
// to hold its CPU (real-time throttling, a cgroup's rt quota) makes rthog
// exit 1 after the command, saying so.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"bench/internal/child"
)

// held is how much of its planned hold a loop must have run for the
// handicap to count as applied.
const held = 0.9

func main() {
	var holds holdFlags
	flag.Var(&holds, "hold", "CPU:BUSY/PERIOD, a real-time loop holding CPU busy of every period (repeatable)")
	total := flag.Duration("for", time.Hour, "the longest the CPUs are held (with a command: until it ends, at most this)")
	priority := flag.Int("priority", 10, "the loops' SCHED_FIFO priority (1 to 99)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: rthog -hold CPU:BUSY/PERIOD [-hold ...] [-for D] [-- command [args]]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if len(holds) == 0 || *total <= 0 || *priority < 1 || *priority > 99 {
		flag.Usage()
		os.Exit(2)
	}
	os.Exit(run(holds, *priority, *total, flag.Args()))
}

// run holds the CPUs, runs argv if given, and returns the exit status.
func run(holds []hold, priority int, total time.Duration, argv []string) int {
	stop := make(chan struct{})
	loops := make([]*loop, len(holds))
	for i, h := range holds {
		loops[i] = &loop{hold: h, ready: make(chan error, 1), done: make(chan struct{})}
		go loops[i].run(priority, stop)
	}
	for _, l := range loops {
		if err := <-l.ready; err != nil {
			fmt.Fprintf(os.Stderr, "rthog: the handicap cannot be applied: %v\n", err)
			close(stop)
			return 1
		}
	}
	start := time.Now()
	status := 0
	if len(argv) > 0 {
		status = runCommand(argv, total)
	} else {
		time.Sleep(total)
	}
	close(stop)
	wall := time.Since(start)
	failed := false
	for _, l := range loops {
		<-l.done
		ok, line := l.hold.verdict(l.ran, l.planned)
		fmt.Fprintf(os.Stderr, "rthog: %s over %s\n", line, wall.Round(time.Second))
		failed = failed || !ok
	}
	if status == 0 && failed {
		fmt.Fprintln(os.Stderr, "rthog: the handicap was not applied as asked (see /proc/sys/kernel/sched_rt_runtime_us)")
		return 1
	}
	return status
}

// runCommand runs argv with this process's standard streams, passes on
// the signals that end it, and returns its exit status; past total it is
// sent SIGTERM.
func runCommand(argv []string, total time.Duration) int {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := child.Start(cmd); err != nil {
		fmt.Fprintf(os.Stderr, "rthog: start %s: %v\n", argv[0], err)
		return 1
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	timeout := time.AfterFunc(total, func() {
		fmt.Fprintf(os.Stderr, "rthog: %s still running after %s: stopping it\n", argv[0], total)
		_ = cmd.Process.Signal(syscall.SIGTERM)
	})
	defer timeout.Stop()
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	err := cmd.Wait()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit) && exit.ExitCode() > 0:
		return exit.ExitCode()
	default:
		fmt.Fprintf(os.Stderr, "rthog: %s: %v\n", argv[0], err)
		return 1
	}
}

// hold is one CPU's handicap.
type hold struct {
	cpu          int
	busy, period time.Duration
}

// parseHold reads CPU:BUSY/PERIOD, as 0:175ms/700ms.
func parseHold(s string) (hold, error) {
	cpu, rest, ok := strings.Cut(s, ":")
	busy, period, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 {
		return hold{}, fmt.Errorf("hold %q: want CPU:BUSY/PERIOD, as 0:175ms/700ms", s)
	}
	var h hold
	var err error
	if h.cpu, err = strconv.Atoi(cpu); err != nil || h.cpu < 0 {
		return hold{}, fmt.Errorf("hold %q: CPU %q is not a CPU number", s, cpu)
	}
	if h.busy, err = time.ParseDuration(busy); err != nil {
		return hold{}, fmt.Errorf("hold %q: busy: %w", s, err)
	}
	if h.period, err = time.ParseDuration(period); err != nil {
		return hold{}, fmt.Errorf("hold %q: period: %w", s, err)
	}
	if h.busy <= 0 || h.period <= h.busy {
		return hold{}, fmt.Errorf("hold %q: want 0 < busy < period", s)
	}
	return h, nil
}

func (h hold) String() string { return fmt.Sprintf("%d:%s/%s", h.cpu, h.busy, h.period) }

// verdict says whether a loop that ran for ran of the planned busy time
// held its CPU as asked, and the line that tells it.
func (h hold) verdict(ran, planned time.Duration) (bool, string) {
	share := 1.0
	if planned > 0 {
		share = ran.Seconds() / planned.Seconds()
	}
	line := fmt.Sprintf("CPU %d held %s of every %s: ran %.1f s of its %.1f s planned (%.0f%%)",
		h.cpu, h.busy, h.period, ran.Seconds(), planned.Seconds(), 100*share)
	return share >= held, line
}

type holdFlags []hold

func (f *holdFlags) String() string { return fmt.Sprint(*f) }

func (f *holdFlags) Set(s string) error {
	h, err := parseHold(s)
	if err == nil {
		*f = append(*f, h)
	}
	return err
}

// loop is one hold's real-time thread and what it ran.
type loop struct {
	hold
	ready chan error
	done  chan struct{}
	// ran is the thread's CPU time, planned the busy time it was to run;
	// both are set before done is closed.
	ran, planned time.Duration
}

// run makes this goroutine's thread real-time and pinned, says so on
// ready, and busies it each period until stop closes. The thread is not
// given back to the runtime: it ends with the goroutine.
func (l *loop) run(priority int, stop <-chan struct{}) {
	defer close(l.done)
	runtime.LockOSThread()
	var set unix.CPUSet
	set.Set(l.cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		l.ready <- fmt.Errorf("pin a thread to CPU %d: %w", l.cpu, err)
		return
	}
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: uint32(priority)}
	if err := unix.SchedSetAttr(0, &attr, 0); err != nil {
		l.ready <- fmt.Errorf("make the thread on CPU %d SCHED_FIFO (needs root or RLIMIT_RTPRIO): %w", l.cpu, err)
		return
	}
	cpu0 := threadCPU()
	l.ready <- nil
	for {
		for t := time.Now().Add(l.busy); time.Now().Before(t); {
		}
		l.planned += l.busy
		select {
		case <-stop:
			l.ran = threadCPU() - cpu0
			return
		case <-time.After(l.period - l.busy):
		}
	}
}

// threadCPU is the calling thread's CPU time.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

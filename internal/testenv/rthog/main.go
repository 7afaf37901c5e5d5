// Command rthog holds one CPU as a loaded machine does: a real-time
// (SCHED_FIFO) busy loop that runs busy of every period on it, so that
// ordinary threads there wait that long for it, until it has run for
// the time given. make test-loaded runs the sampler's tests beside it.
//
//	rthog -cpu 0 -busy 300ms -period 1s -for 10m
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	cpu := flag.Int("cpu", 0, "the CPU to hold")
	busy := flag.Duration("busy", 300*time.Millisecond, "how long to hold it each period")
	period := flag.Duration("period", time.Second, "the period")
	total := flag.Duration("for", 10*time.Minute, "when to stop")
	flag.Parse()
	if *busy <= 0 || *period <= *busy || *total <= 0 {
		fmt.Fprintln(os.Stderr, "rthog: want 0 < -busy < -period and a positive -for")
		os.Exit(2)
	}
	if err := hold(*cpu, *busy, *period, *total); err != nil {
		fmt.Fprintln(os.Stderr, "rthog:", err)
		os.Exit(1)
	}
}

// hold runs the busy loop on this goroutine's thread, made real-time and
// pinned to cpu.
func hold(cpu int, busy, period, total time.Duration) error {
	runtime.LockOSThread()
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("pin to CPU %d: %w", cpu, err)
	}
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: 10}
	if err := unix.SchedSetAttr(0, &attr, 0); err != nil {
		return fmt.Errorf("make the thread SCHED_FIFO (needs root): %w", err)
	}
	for end := time.Now().Add(total); time.Now().Before(end); {
		for t := time.Now().Add(busy); time.Now().Before(t); {
		}
		time.Sleep(period - busy)
	}
	return nil
}

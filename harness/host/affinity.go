package host

import (
	"fmt"
	"slices"
	"strconv"

	"golang.org/x/sys/unix"
)

// The harness pins itself off the proxy's CPUs while a Host is open. Left
// anywhere, its own work (the garbage collector, the sampler's polls,
// readiness dials, the threads it switches into namespaces) would run on
// the proxy's CPU too, and /proc/stat would charge it to the proxy. It
// takes the client's CPUs, whose tools it waits on anyway.

// harnessCPUs returns the CPUs the harness runs on beside a layout: the
// client's, or every online CPU but the proxy's when the client has none.
// On a host of its own (own), where the harness is the agent, the CPUs
// its roles leave free, or where they leave none, the client's and the
// origin's, or where the proxy holds them all, all of them.
func harnessCPUs(l Layout, online []int, own bool) []int {
	if own {
		var free []int
		for _, c := range online {
			if !slices.Contains(l.Client, c) && !slices.Contains(l.Proxy, c) && !slices.Contains(l.Origin, c) {
				free = append(free, c)
			}
		}
		if len(free) == 0 {
			free = append(slices.Clone(l.Client), l.Origin...)
		}
		if len(free) == 0 {
			return online
		}
		slices.Sort(free)
		return slices.Compact(free)
	}
	if len(l.Client) > 0 {
		return l.Client
	}
	var cpus []int
	for _, c := range online {
		if !slices.Contains(l.Proxy, c) {
			cpus = append(cpus, c)
		}
	}
	return cpus
}

// pinSelf sets the affinity of every thread of this process to cpus and
// returns the affinity the process had.
func pinSelf(cpus []int) (unix.CPUSet, error) {
	var orig, set unix.CPUSet
	if err := unix.SchedGetaffinity(unix.Getpid(), &orig); err != nil {
		return orig, fmt.Errorf("read own CPU affinity: %w", err)
	}
	for _, c := range cpus {
		set.Set(c)
	}
	if err := setAffinity(set); err != nil {
		return orig, fmt.Errorf("pin the harness to CPUs %s: %w", CPUList(cpus), err)
	}
	return orig, nil
}

// setAffinity sets the affinity of every thread of this process. A new
// thread takes the affinity of the thread that makes it, so once all are
// set the later ones follow; one made while the list was read, by a
// thread not yet set, is caught by the next pass.
func setAffinity(set unix.CPUSet) error {
	for range 10 {
		tids, err := readDirNames("/proc/self/task")
		if err != nil {
			return err
		}
		changed := false
		for _, name := range tids {
			tid, err := strconv.Atoi(name)
			if err != nil {
				continue
			}
			var cur unix.CPUSet
			if unix.SchedGetaffinity(tid, &cur) == nil && cur == set {
				continue
			}
			if err := unix.SchedSetaffinity(tid, &set); err != nil && err != unix.ESRCH {
				return fmt.Errorf("thread %d: %w", tid, err)
			}
			changed = true
		}
		if !changed {
			return nil
		}
	}
	return fmt.Errorf("threads kept appearing with another affinity")
}

package host

import (
	"bytes"
	"fmt"
	"time"
)

// /proc/stat: the busy ticks of each CPU. The kernel makes the whole file
// for each read (about 20 us here with 2 CPUs; see BenchmarkProcStat);
// the sampler reads it through a descriptor kept open and parses only the
// cpuN lines.

// userHZ is the unit of /proc/stat's times and of a thread's start time
// in /proc/PID/task/TID/stat (USER_HZ, 100 on every Linux architecture).
const userHZ = 100

// readStat reads the busy ticks of the roles' CPUs from /proc/stat, and
// the proxy's throttling with them when it has a quota, stamped with when
// it was read (see maxReadSpan).
func (s *Sampler) readStat() (cpuSnap, error) {
	var n int
	var err error
	t0 := time.Now()
	for {
		n, err = s.stat.ReadAt(s.statBuf, 0)
		if n < len(s.statBuf) || len(s.statBuf) >= 1<<22 {
			break
		}
		s.statBuf = make([]byte, 2*len(s.statBuf))
	}
	t1 := time.Now()
	snap := cpuSnap{t: t0.Add(t1.Sub(t0) / 2), sure: t1.Sub(t0) <= maxReadSpan, busy: make([]uint64, len(s.cpus))}
	if n == 0 && err != nil {
		return snap, fmt.Errorf("read /proc/stat: %w", err)
	}
	if err := parseStatBusy(s.statBuf[:n], s.cpuIndex, snap.busy); err != nil {
		return snap, err
	}
	if s.cpuStat != nil {
		if snap.thr, err = s.readThrottle(); err != nil {
			return snap, err
		}
	}
	return snap, nil
}

// readStatSure is readStat for the sampling's first and last readings,
// which bound every window that reaches its start or its end: a reading
// held off the CPU in the middle (its thread, the caller's, waits for a
// CPU like any other) is stamped up to that hold from its ticks, and the
// busy fraction of the window read from it is off by the hold over the
// window (0.955 for a CPU never idle, both roles alike, beside the
// real-time loops of issue 33). It reads again, up to statTries times,
// until a reading is sure, and returns the last one else.
func (s *Sampler) readStatSure() (cpuSnap, error) {
	for try := 1; ; try++ {
		snap, err := s.readStat()
		if err != nil || snap.sure || try == statTries {
			return snap, err
		}
	}
}

// statTries is how many times readStatSure reads /proc/stat at the most.
const statTries = 5

// parseStatBusy adds, for each "cpuN" line of /proc/stat whose N is in
// index, the CPU's busy ticks (user+nice+system+irq+softirq+steal; guest
// time is already in user) into busy[index[N]]. Every CPU of index must
// be there. It allocates nothing.
func parseStatBusy(b []byte, index map[int]int, busy []uint64) error {
	found := 0
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if len(line) < 4 || string(line[:3]) != "cpu" || line[3] < '0' || line[3] > '9' {
			if found > 0 {
				break // the cpuN lines come together
			}
			continue
		}
		cpu, n := parseUint(line[3:])
		if n == 0 || n < len(line)-3 && line[3+n] != ' ' {
			return fmt.Errorf("/proc/stat: %q: bad CPU number", line)
		}
		i, ok := index[int(cpu)]
		if !ok {
			continue
		}
		var v [8]uint64
		rest := line[3+n:]
		for k := range v {
			rest = bytes.TrimLeft(rest, " ")
			if len(rest) == 0 {
				return fmt.Errorf("/proc/stat: %q: want 8 times at least", line)
			}
			if v[k], n = parseUint(rest); n == 0 || n < len(rest) && rest[n] != ' ' {
				return fmt.Errorf("/proc/stat: %q: time %d is not a number", line, k+1)
			}
			rest = rest[n:]
		}
		// user nice system idle iowait irq softirq steal
		busy[i] = v[0] + v[1] + v[2] + v[5] + v[6] + v[7]
		found++
	}
	if found < len(index) {
		return fmt.Errorf("/proc/stat: %d of the %d CPUs sampled are listed", found, len(index))
	}
	return nil
}

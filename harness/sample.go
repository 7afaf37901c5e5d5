package harness

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/procfs"
)

// The sampler reads /proc through github.com/prometheus/procfs: /proc/stat
// per CPU at the window's ends, and every thread of every process in the
// roles' cgroups (/proc/PID/task/TID/stat) as the window goes, so that
// threads that end before it does are still counted.

// samplePeriod is how often the sampler reads the roles' threads. A
// thread alive for the whole window is measured exactly at its ends; the
// polls in between only catch threads that end early, which at 4 Hz loses
// at most the last 250 ms of a short-lived one.
const samplePeriod = 250 * time.Millisecond

// boundThreshold is the seeds' 90% rule: a role whose CPUs, or one of
// whose threads, were busy at least this share of the window set the pace.
const boundThreshold = 0.9

// userHZ is the unit of the thread times in /proc/PID/task/TID/stat
// (USER_HZ, 100 on every Linux architecture).
const userHZ = 100

// Sample is what a measured window cost each role (DESIGN.md, "Roles,
// CPU time and the pace-setter").
type Sample struct {
	// Seconds is the window's wall-clock length.
	Seconds float64
	// CPU is the busy time of the role's CPUs from /proc/stat, in seconds
	// (user+nice+system+irq+softirq+steal: the kernel's network work on
	// those CPUs is the role's).
	CPU map[Role]float64
	// Busy is CPU / (Seconds x the role's number of CPUs), 0..1.
	Busy map[Role]float64
	// Thread is the CPU time of the role's busiest thread / Seconds, 0..1.
	Thread map[Role]float64
	// Bound names the role that set the pace: BoundOf(Busy, Thread).
	Bound string
}

// threadRec follows one thread through the window.
type threadRec struct {
	role       Role
	base, last uint64 // utime+stime in ticks: at the window's start (or 0 if born in it), and last read
}

// Sampler measures one window; make it with Host.StartSampling.
type Sampler struct {
	h        *Host
	fs       procfs.FS
	start    time.Time
	startCPU map[int64]procfs.CPUStat
	// startTicks is the window's start in ticks since boot, to tell the
	// threads born in it from those seen late.
	startTicks uint64
	mu         sync.Mutex
	threads    map[int]*threadRec
	stop       chan struct{}
	stopped    chan struct{}
	once       sync.Once
}

// StartSampling starts a measured window: it reads /proc/stat now and
// follows the threads of each role's processes until Stop.
func (h *Host) StartSampling() (*Sampler, error) {
	fs, err := procfs.NewFS(procfs.DefaultMountPoint)
	if err != nil {
		return nil, fmt.Errorf("open /proc: %w", err)
	}
	s := &Sampler{h: h, fs: fs, threads: map[int]*threadRec{}, stop: make(chan struct{}), stopped: make(chan struct{})}
	up, err := uptimeTicks()
	if err != nil {
		return nil, err
	}
	s.startTicks = up
	s.poll(true)
	st, err := fs.Stat()
	if err != nil {
		return nil, fmt.Errorf("read /proc/stat: %w", err)
	}
	s.start, s.startCPU = time.Now(), st.CPU
	go s.loop()
	return s, nil
}

// uptimeTicks returns the time since boot in USER_HZ ticks.
func uptimeTicks() (uint64, error) {
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return 0, fmt.Errorf("read /proc/uptime: %w", err)
	}
	f, err := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
	if err != nil {
		return 0, fmt.Errorf("/proc/uptime: %w", err)
	}
	return uint64(f * userHZ), nil
}

func (s *Sampler) loop() {
	defer close(s.stopped)
	t := time.NewTicker(samplePeriod)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.poll(false)
		}
	}
}

// poll reads the CPU time of every thread of every role's processes.
func (s *Sampler) poll(first bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range Roles {
		for _, pid := range s.h.PIDs(r) {
			tasks, err := s.fs.AllThreads(pid)
			if err != nil {
				continue // gone meanwhile
			}
			for _, t := range tasks {
				st, err := t.Stat()
				if err != nil {
					continue
				}
				ticks := uint64(st.UTime + st.STime)
				rec, ok := s.threads[t.PID]
				if !ok {
					rec = &threadRec{role: r, base: ticks}
					// A thread first seen later was born in the window
					// unless it started before it.
					if !first && st.Starttime >= s.startTicks {
						rec.base = 0
					}
					s.threads[t.PID] = rec
				}
				rec.last = ticks
			}
		}
	}
}

// Stop ends the window and returns what it cost each role. Calling it
// again returns an error.
func (s *Sampler) Stop() (Sample, error) {
	first := false
	s.once.Do(func() { first = true })
	if !first {
		return Sample{}, fmt.Errorf("sampler already stopped")
	}
	st, err := s.fs.Stat()
	end := time.Now()
	close(s.stop)
	<-s.stopped
	if err != nil {
		return Sample{}, fmt.Errorf("read /proc/stat: %w", err)
	}
	s.poll(false)
	smp := Sample{
		Seconds: end.Sub(s.start).Seconds(),
		CPU:     map[Role]float64{},
		Busy:    map[Role]float64{},
		Thread:  map[Role]float64{},
	}
	for _, r := range Roles {
		cpus := s.h.layout.CPUs(r)
		for _, c := range cpus {
			a, okA := s.startCPU[int64(c)]
			b, okB := st.CPU[int64(c)]
			if okA && okB {
				smp.CPU[r] += max(busySeconds(b)-busySeconds(a), 0)
			}
		}
		if len(cpus) > 0 && smp.Seconds > 0 {
			smp.Busy[r] = min(smp.CPU[r]/(smp.Seconds*float64(len(cpus))), 1)
		}
		smp.Thread[r] = 0
	}
	for _, t := range s.threads {
		if smp.Seconds > 0 && t.last >= t.base {
			f := min(float64(t.last-t.base)/userHZ/smp.Seconds, 1)
			smp.Thread[t.role] = max(smp.Thread[t.role], f)
		}
	}
	smp.Bound = BoundOf(smp.Busy, smp.Thread)
	return smp, nil
}

// busySeconds is a CPU's busy time: everything but idle and iowait (guest
// time is already in user).
func busySeconds(c procfs.CPUStat) float64 {
	return c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ + c.Steal
}

// BoundOf names the role that set the pace of a run, by the seeds' 90%
// rule: "proxy" if the proxy's CPUs or one proxy thread were busy at least
// 90% of the window; otherwise "client" or "origin" if theirs were (the
// busier one, by the larger of its two figures); otherwise "none".
func BoundOf(busy, thread map[Role]float64) string {
	load := func(r Role) float64 { return max(busy[r], thread[r]) }
	if load(RoleProxy) >= boundThreshold {
		return string(RoleProxy)
	}
	c, o := load(RoleClient), load(RoleOrigin)
	switch {
	case c >= boundThreshold && c >= o:
		return string(RoleClient)
	case o >= boundThreshold:
		return string(RoleOrigin)
	}
	return "none"
}

package harness

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/procfs"
)

// The sampler reads /proc/stat per CPU at the window's ends through
// github.com/prometheus/procfs, and follows every thread of every process
// in the roles' cgroups as the window goes, so that threads that end
// before it does are still counted. For the threads it reads
// /proc/PID/task/TID/schedstat itself, through a descriptor kept open per
// thread: procfs parses the whole stat file, which the kernel is slow to
// make (about 30 us a thread here, 0.8 ms a poll for 25 threads), while
// schedstat is three numbers, in nanoseconds rather than 10 ms ticks.

// samplePeriod is how often the sampler reads the roles' threads. A
// thread alive for the whole window is measured exactly at its ends; the
// polls in between only catch threads that end early, losing at most
// their last second: a thread that lives less than the window is never
// near the 90% that decides the bound. A poll costs about 0.35 ms here
// (reading cgroup.procs alone is 40 us a role on cgroup v1).
const samplePeriod = time.Second

// maxThreadFiles caps the descriptors the sampler keeps open; threads
// beyond it are read by opening their file each time.
const maxThreadFiles = 4096

// boundThreshold is the seeds' 90% rule: a role whose CPUs, or one of
// whose threads, were busy at least this share of the window set the pace.
const boundThreshold = 0.9

// userHZ is the unit of a thread's start time in /proc/PID/task/TID/stat
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
	path       string   // its schedstat file
	f          *os.File // kept open while alive, nil once gone
	base, last uint64   // time on a CPU in ns: at the window's start (or 0 if born in it), and last read
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
	open       int    // descriptors kept open
	buf        []byte // for reading schedstat
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
	s := &Sampler{h: h, fs: fs, threads: map[int]*threadRec{}, buf: make([]byte, 128),
		stop: make(chan struct{}), stopped: make(chan struct{})}
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
	// Known threads first: one pread each.
	for _, t := range s.threads {
		if t.f != nil {
			if v, ok := s.readRuntime(t.f); ok {
				t.last = v
			} else {
				t.f.Close()
				t.f = nil
				s.open--
			}
		}
	}
	for _, r := range Roles {
		for _, pid := range s.h.PIDs(r) {
			dir := "/proc/" + strconv.Itoa(pid) + "/task"
			tids, err := readDirNames(dir)
			if err != nil {
				continue // gone meanwhile
			}
			for _, name := range tids {
				tid, err := strconv.Atoi(name)
				if err != nil {
					continue
				}
				if t, ok := s.threads[tid]; ok {
					if t.f == nil && t.path != "" {
						s.reread(t)
					}
					continue
				}
				s.addThread(r, tid, dir+"/"+name, first)
			}
		}
	}
}

// addThread starts following a thread.
func (s *Sampler) addThread(r Role, tid int, dir string, first bool) {
	f, err := os.Open(dir + "/schedstat")
	if err != nil {
		return
	}
	v, ok := s.readRuntime(f)
	if !ok {
		f.Close()
		return
	}
	t := &threadRec{role: r, base: v, last: v}
	// A thread first seen after the window started was born in it unless
	// its start time says otherwise.
	if !first {
		if st, err := s.threadStart(dir); err == nil && st >= s.startTicks {
			t.base = 0
		}
	}
	if s.open < maxThreadFiles {
		t.f = f
		s.open++
	} else {
		t.path = f.Name()
		f.Close()
	}
	s.threads[tid] = t
}

// reread reads a thread whose file is not kept open.
func (s *Sampler) reread(t *threadRec) {
	f, err := os.Open(t.path)
	if err != nil {
		t.path = ""
		return
	}
	defer f.Close()
	if v, ok := s.readRuntime(f); ok {
		t.last = v
	}
}

// readRuntime reads the first field of a schedstat file: the thread's
// time on a CPU in nanoseconds.
func (s *Sampler) readRuntime(f *os.File) (uint64, bool) {
	n, err := f.ReadAt(s.buf, 0)
	if n == 0 && err != nil {
		return 0, false
	}
	b := s.buf[:n]
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	v, err := strconv.ParseUint(string(b), 10, 64)
	return v, err == nil
}

// threadStart returns a thread's start time in ticks since boot.
func (s *Sampler) threadStart(dir string) (uint64, error) {
	b, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("%s/stat: no command name", dir)
	}
	// Fields after the name start at the state, field 3; the start time
	// is field 22.
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return 0, fmt.Errorf("%s/stat: %d fields", dir, len(f)+2)
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// readDirNames lists a directory.
func readDirNames(dir string) ([]string, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
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
			f := min(float64(t.last-t.base)/1e9/smp.Seconds, 1)
			smp.Thread[t.role] = max(smp.Thread[t.role], f)
		}
		if t.f != nil {
			t.f.Close()
			t.f = nil
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

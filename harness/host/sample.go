package host

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// The sampler follows two things through a window.
//
// The roles' CPUs: it reads the per-CPU lines of /proc/stat every
// statPeriod into a ring, through a descriptor kept open, so that a window
// that ends before Stop (the load tool's own, see StopWindow) is measured
// between the snapshots nearest inside its bounds. The kernel makes the
// whole file for each read (about 20 us here with 2 CPUs; see
// BenchmarkProcStat), and the sampler parses only the cpuN lines.
//
// The proxy's throttling, when it has a CPU quota: the cpu.stat file of
// its cgroup, read with each /proc/stat snapshot, so that the periods in
// which the kernel held the proxy at its quota are counted over the same
// window.
//
// The proxy's pipes: splice() moves data between two sockets through a
// pipe, so a proxy that splices holds pipes (haproxy keeps a pool of
// them, 3proxy one per spliced connection) that a copying one has no use
// for. At each poll of the threads the sampler lists the descriptors of
// the proxy's processes (/proc/PID/fd) and counts the distinct pipes
// among them, other than those the proxy held when it became ready (its
// own wake-ups; see Host.ProxyReady). The kernel counts no other trace
// of splice() per process: /proc/PID/io leaves it out, as it does the
// send() and recv() a copying proxy uses.
//
// The roles' threads: every thread of every process in the roles' cgroups,
// polled every threadPeriod, so that threads that start or end inside the
// window are counted too. It reads /proc/PID/task/TID/schedstat through a
// descriptor kept open per thread: the stat file is slow for the kernel
// to make (about 30 us a thread here), while schedstat is three numbers,
// in nanoseconds rather than 10 ms ticks. The task and fd directories are
// listed, and their entries opened and read, relative to a descriptor of
// the directory and into the sampler's own buffers (procfs.go): a poll
// of a proxy of 2000 threads and 4000 sockets allocates next to nothing.

// statPeriod is how often the sampler reads /proc/stat: the bounds of a
// window given to StopWindow are met within this.
const statPeriod = 100 * time.Millisecond

// threadPeriod is how often the sampler reads the roles' threads. A
// thread's busy fraction is its CPU time over the span it was observed,
// from its birth (or the window's start) to its last poll, so a thread
// that ends inside the window loses no share, only up to this much of its
// observed span. A poll costs about 0.35 ms here (reading cgroup.procs
// alone is 40 us a role on cgroup v1).
const threadPeriod = time.Second

// pollBudget is the share of a CPU the polls of the threads may take: a
// poll of many threads and descriptors (3proxy, a thread a connection,
// holds 2000 threads and 4000 sockets under the 2000-connection loads;
// a poll of them takes 8 to 12 ms of a CPU here, the pipes' 4000
// readlinks half of it) puts the next one off until its cost
// is that share of the time since, rather than threadPeriod. The window's
// first and last polls are made all the same, so a thread that lives
// through the window is measured whole; one that ends inside it loses at
// most the time since its last poll. See BenchmarkSampler.
const pollBudget = 0.003

// statRing is how many /proc/stat snapshots the sampler keeps: ten minutes
// at statPeriod. The snapshot at the start of the window is kept apart, so
// a longer window is still measured whole by Stop.
const statRing = 6000

// minThreadSpan is the shortest span over which a thread's busy fraction
// is its CPU time over that span; a thread observed for less (and less
// than half the window) is charged its CPU time over the whole window,
// since a share of a short span says little.
const minThreadSpan = time.Second

// maxThreadFiles caps the descriptors the sampler keeps open; threads
// beyond it are read by opening their file each time.
const maxThreadFiles = 4096

// boundThreshold is the reference results' 90% rule: a role whose CPUs, or one of
// whose threads, were busy at least this share of what it was allowed in
// the window set the pace (see boundOf).
const boundThreshold = 0.9

// userHZ is the unit of /proc/stat's times and of a thread's start time in
// /proc/PID/task/TID/stat (USER_HZ, 100 on every Linux architecture).
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
	// Thread is the busy fraction of the role's busiest thread, 0..1: its
	// CPU time over the part of the window it was observed in (see
	// minThreadSpan), so that a thread that kept a CPU busy reads 1
	// whether it lived through the window or only part of it.
	Thread map[Role]float64
	// Quota is the proxy's CPU quota in CPUs, 0 for none. With one,
	// ThrottledPeriods counts the CFS periods (cfsPeriod each) of the
	// window in which the kernel held the proxy's cgroup at its quota,
	// and Throttled is how long it held it, in seconds (cpu.stat's
	// nr_throttled and throttled_time on v1, throttled_usec on v2).
	Quota            float64
	ThrottledPeriods int64
	Throttled        float64
	// Bound names the role that set the pace: see boundOf.
	Bound string
	// Pipes is the most pipes the proxy's processes held at once at a
	// poll inside the window (threadPeriod apart), beyond those they held
	// when it became ready: 0 for a proxy that never spliced.
	Pipes int
	// PerSecond is each role's busy fraction second by second through
	// the window, from the /proc/stat readings nearest inside each
	// second (statPeriod apart); a last part shorter than a second is
	// a point too.
	PerSecond map[Role][]float64
}

// ThrottledShare is the share of the window's CFS periods in which the
// proxy was held at its quota, 0..1.
func (s Sample) ThrottledShare() float64 {
	return ThrottledShare(s.ThrottledPeriods, s.Seconds)
}

// ThrottledShare is the share of a window of seconds whose CFS periods
// the proxy spent held at its quota, from the count of those periods,
// 0..1.
func ThrottledShare(periods int64, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return min(float64(periods)*cfsPeriod/1e6/seconds, 1)
}

// throttle is one reading of the proxy's cpu.stat.
type throttle struct {
	periods   uint64 // CFS periods counted (those the cgroup had work in)
	throttled uint64 // periods in which it was held at its quota
	ns        uint64 // how long it was held, in nanoseconds
}

// cpuSnap is one reading of /proc/stat: the busy ticks of each CPU the
// roles use, in the order of Sampler.cpus.
type cpuSnap struct {
	t    time.Time
	busy []uint64
	thr  throttle // the proxy's, when it has a quota
}

// threadObs is one reading of a thread's time on a CPU.
type threadObs struct {
	t  time.Time
	ns uint64
}

// pipeObs is one count of the proxy's pipes.
type pipeObs struct {
	t time.Time
	n int
}

// threadRec follows one thread through the window.
type threadRec struct {
	role Role
	fd   int  // its schedstat file, kept open while it lives; -1 when not kept open (see maxThreadFiles) or once gone
	gone bool // its file could not be read: it ended
	obs  []threadObs
}

// Sampler measures one window; make it with Host.StartSampling.
type Sampler struct {
	h        *Host
	cpus     []int       // the CPUs of the roles, ascending
	cpuIndex map[int]int // CPU -> index in cpus
	stat     *os.File    // /proc/stat, kept open
	statBuf  []byte
	cpuStat  *os.File // the proxy's cpu.stat, kept open; nil without a quota
	thrBuf   []byte
	start    time.Time // the window's start: the first snapshot's time
	polled   time.Time // the first poll of the threads, just before
	first    cpuSnap   // at the window's start
	ring     []cpuSnap // the latest snapshots, oldest at ringNext once full
	ringNext int
	// bootWall is the wall-clock time of boot, to place a thread's start
	// time; startTicks is the window's start in ticks since boot, to tell
	// the threads born in it from those seen late.
	bootWall   time.Time
	startTicks uint64
	// mu guards what follows and the readings: the loop takes it for
	// each round, and stops once finished is set.
	mu       sync.Mutex
	finished bool
	threads  map[int]*threadRec
	pipes    []pipeObs
	open     int // descriptors kept open
	// The polls' buffers: a directory's listing, a path relative to
	// it, a schedstat file, a thread's stat.
	dents, path, buf, line []byte
	once                   sync.Once
}

// StartSampling starts a measured window: it reads /proc/stat now and
// follows the roles' CPUs and the threads of their processes until Stop
// or StopWindow.
func (h *Host) StartSampling() (*Sampler, error) {
	s := &Sampler{h: h, cpuIndex: map[int]int{}, threads: map[int]*threadRec{},
		statBuf: make([]byte, 4096), thrBuf: make([]byte, 1024),
		dents: make([]byte, dirBufSize), path: make([]byte, 0, 64), buf: make([]byte, 128), line: make([]byte, 1024)}
	for _, r := range roles {
		s.cpus = append(s.cpus, h.layout.cpus(r)...)
	}
	slices.Sort(s.cpus)
	s.cpus = slices.Compact(s.cpus)
	for i, c := range s.cpus {
		s.cpuIndex[c] = i
	}
	var err error
	if s.stat, err = os.Open("/proc/stat"); err != nil {
		return nil, fmt.Errorf("open /proc/stat: %w", err)
	}
	if h.cgroups != nil && h.cgroups.cpuStat != "" {
		if s.cpuStat, err = os.Open(h.cgroups.cpuStat); err != nil {
			s.stat.Close()
			return nil, fmt.Errorf("open the proxy's cpu.stat: %w", err)
		}
	}
	up, now, err := uptime()
	if err != nil {
		s.closeFiles()
		return nil, err
	}
	s.bootWall = now.Add(-up)
	s.startTicks = uint64(up.Seconds() * userHZ)
	s.polled = time.Now()
	s.poll(true, true)
	if s.first, err = s.readStat(); err != nil {
		s.closeFiles()
		return nil, err
	}
	s.start = s.first.t
	go s.loop()
	return s, nil
}

// uptime returns the time since boot and when it was read.
func uptime() (time.Duration, time.Time, error) {
	b, err := os.ReadFile("/proc/uptime")
	now := time.Now()
	if err != nil {
		return 0, now, fmt.Errorf("read /proc/uptime: %w", err)
	}
	f, err := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
	if err != nil {
		return 0, now, fmt.Errorf("/proc/uptime: %w", err)
	}
	return time.Duration(f * float64(time.Second)), now, nil
}

// readStat reads the busy ticks of the roles' CPUs from /proc/stat.
func (s *Sampler) readStat() (cpuSnap, error) {
	var n int
	var err error
	for {
		n, err = s.stat.ReadAt(s.statBuf, 0)
		if n < len(s.statBuf) || len(s.statBuf) >= 1<<22 {
			break
		}
		s.statBuf = make([]byte, 2*len(s.statBuf))
	}
	snap := cpuSnap{t: time.Now(), busy: make([]uint64, len(s.cpus))}
	if n == 0 && err != nil {
		return snap, fmt.Errorf("read /proc/stat: %w", err)
	}
	if err := parseStatBusy(s.statBuf[:n], s.cpuIndex, snap.busy); err != nil {
		return snap, err
	}
	if s.cpuStat != nil {
		n, err := s.cpuStat.ReadAt(s.thrBuf, 0)
		if n == 0 && err != nil {
			return snap, fmt.Errorf("read %s: %w", s.cpuStat.Name(), err)
		}
		if snap.thr, err = parseThrottle(s.thrBuf[:n]); err != nil {
			return snap, fmt.Errorf("%s: %w", s.cpuStat.Name(), err)
		}
	}
	return snap, nil
}

// parseThrottle reads the throttling of a cgroup from its cpu.stat: v1's
// nr_periods, nr_throttled and throttled_time (ns), or v2's with
// throttled_usec.
func parseThrottle(b []byte) (throttle, error) {
	var t throttle
	found := 0
	for line := range bytes.SplitSeq(b, []byte{'\n'}) {
		key, val, ok := bytes.Cut(line, []byte{' '})
		if !ok {
			continue
		}
		var dst *uint64
		scale := uint64(1)
		switch string(key) {
		case "nr_periods":
			dst = &t.periods
		case "nr_throttled":
			dst = &t.throttled
		case "throttled_time":
			dst = &t.ns
		case "throttled_usec":
			dst, scale = &t.ns, 1000
		default:
			continue
		}
		v, err := strconv.ParseUint(string(bytes.TrimSpace(val)), 10, 64)
		if err != nil {
			return t, fmt.Errorf("%q: %w", line, err)
		}
		*dst = v * scale
		found++
	}
	if found < 3 {
		return t, fmt.Errorf("want nr_periods, nr_throttled and throttled_time or throttled_usec; got %q", b)
	}
	return t, nil
}

// parseStatBusy adds, for each "cpuN" line of /proc/stat whose N is in
// index, the CPU's busy ticks (user+nice+system+irq+softirq+steal; guest
// time is already in user) into busy[index[N]]. Every CPU of index must
// be there.
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
		fields := bytes.Fields(line[3:])
		cpu, err := strconv.Atoi(string(fields[0]))
		if err != nil {
			return fmt.Errorf("/proc/stat: %q: bad CPU number", line)
		}
		i, ok := index[cpu]
		if !ok {
			continue
		}
		if len(fields) < 9 {
			return fmt.Errorf("/proc/stat: %q: want 8 times at least", line)
		}
		var v [8]uint64
		for k := range v {
			if v[k], err = strconv.ParseUint(string(fields[k+1]), 10, 64); err != nil {
				return fmt.Errorf("/proc/stat: %q: %w", line, err)
			}
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

// loop reads /proc/stat every statPeriod and the threads every
// threadPeriod until the sampling is finished. It sleeps in nanosleep on
// a thread of its own: woken by a Go timer instead, the runtime's
// scheduler costs about twice the CPU a round here (about 330 us rather
// than 180 us, most of it the wake-up itself; see BenchmarkSampler).
func (s *Sampler) loop() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ts := unix.NsecToTimespec(int64(statPeriod))
	next := time.Now().Add(threadPeriod)
	for {
		unix.Nanosleep(&ts, nil)
		s.mu.Lock()
		if s.finished {
			s.mu.Unlock()
			return
		}
		if snap, err := s.readStat(); err == nil {
			s.keep(snap)
		}
		if now := time.Now(); !now.Before(next) {
			s.poll(false, true)
			cost := time.Since(now)
			next = now.Add(max(threadPeriod, time.Duration(float64(cost)/pollBudget)))
		}
		s.mu.Unlock()
	}
}

// keep adds a snapshot to the ring, over the oldest once it is full.
func (s *Sampler) keep(snap cpuSnap) {
	if len(s.ring) < statRing {
		s.ring = append(s.ring, snap)
		return
	}
	s.ring[s.ringNext] = snap
	s.ringNext = (s.ringNext + 1) % statRing
}

// snapshots returns every snapshot in time order: the window's first, the
// ring, and last.
func (s *Sampler) snapshots(last cpuSnap) []cpuSnap {
	out := make([]cpuSnap, 0, len(s.ring)+2)
	out = append(out, s.first)
	out = append(out, s.ring[s.ringNext:]...)
	out = append(out, s.ring[:s.ringNext]...)
	return append(out, last)
}

// poll reads the CPU time of every thread of every role's processes, and
// counts the proxy's pipes when pipes is set. The caller holds mu, or has
// the sampler to itself.
func (s *Sampler) poll(first, pipes bool) {
	now := time.Now()
	// Known threads first: one pread each.
	for _, t := range s.threads {
		if t.fd >= 0 {
			if v, ok := s.readRuntime(t.fd); ok {
				t.obs = append(t.obs, threadObs{now, v})
			} else {
				unix.Close(t.fd)
				t.fd, t.gone = -1, true
				s.open--
			}
		}
	}
	for _, r := range roles {
		pids := s.h.PIDs(r)
		if r == RoleProxy && pipes {
			s.pipes = append(s.pipes, pipeObs{now, len(s.h.proxyPipes(pids, true, s.dents))})
		}
		for _, pid := range pids {
			s.pollTasks(r, pid, first, now)
		}
	}
}

// pollTasks lists the threads of process pid and reads those the poll
// has not read: the new ones, and the known ones whose file is not kept
// open.
func (s *Sampler) pollTasks(r Role, pid int, first bool, now time.Time) {
	dir, err := openProcDir(pid, "task")
	if err != nil {
		return // gone meanwhile
	}
	defer unix.Close(dir)
	_ = eachEntry(dir, s.dents, func(name []byte) {
		v, n := parseUint(name)
		if n == 0 || n < len(name) || v > 1<<31 {
			return
		}
		tid := int(v)
		if t, ok := s.threads[tid]; ok {
			if t.fd < 0 && !t.gone {
				s.reread(t, dir, name, now)
			}
			return
		}
		s.addThread(r, tid, dir, name, first, now)
	})
}

// addThread starts following thread name of the task directory dir.
func (s *Sampler) addThread(r Role, tid int, dir int, name []byte, first bool, now time.Time) {
	s.path = cpath(s.path, name, "/schedstat")
	fd, err := openAt(dir, s.path)
	if err != nil {
		return
	}
	v, ok := s.readRuntime(fd)
	if !ok {
		unix.Close(fd)
		return
	}
	t := &threadRec{role: r, fd: -1, obs: make([]threadObs, 0, 4)}
	// A thread first seen after the window started was born in it unless
	// its start time says otherwise: it is observed from its birth, with
	// no time on a CPU then.
	if !first {
		if st, err := s.threadStart(dir, name); err == nil && st >= s.startTicks {
			born := s.bootWall.Add(time.Duration(st) * time.Second / userHZ)
			t.obs = append(t.obs, threadObs{maxTime(born, s.start), 0})
		}
	}
	t.obs = append(t.obs, threadObs{now, v})
	if s.open < maxThreadFiles {
		t.fd = fd
		s.open++
	} else {
		unix.Close(fd)
	}
	s.threads[tid] = t
}

// maxTime returns the later of two times.
func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// reread reads thread name of the task directory dir, whose file is not
// kept open.
func (s *Sampler) reread(t *threadRec, dir int, name []byte, now time.Time) {
	s.path = cpath(s.path, name, "/schedstat")
	fd, err := openAt(dir, s.path)
	if err != nil {
		t.gone = true
		return
	}
	defer unix.Close(fd)
	if v, ok := s.readRuntime(fd); ok {
		t.obs = append(t.obs, threadObs{now, v})
	}
}

// readRuntime reads the first field of the schedstat file open as fd:
// the thread's time on a CPU in nanoseconds.
func (s *Sampler) readRuntime(fd int) (uint64, bool) {
	n, err := unix.Pread(fd, s.buf, 0)
	if n <= 0 || err != nil {
		return 0, false
	}
	b := s.buf[:n]
	v, k := parseUint(b)
	return v, k > 0 && (k == len(b) || b[k] == ' ')
}

// threadStart returns the start time, in ticks since boot, of thread
// name of the task directory dir: its stat file read in one read.
func (s *Sampler) threadStart(dir int, name []byte) (uint64, error) {
	s.path = cpath(s.path, name, "/stat")
	fd, err := openAt(dir, s.path)
	if err != nil {
		return 0, err
	}
	n, err := unix.Read(fd, s.line)
	unix.Close(fd)
	if err != nil {
		return 0, err
	}
	return parseStartTime(s.line[:max(n, 0)])
}

// parseStartTime reads a thread's start time from its stat line: field
// 22, counting from the pid; the fields after the name (in parentheses,
// and which may hold anything) start at the state, field 3.
func parseStartTime(b []byte) (uint64, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("stat: no command name")
	}
	b = b[i+1:]
	for field := 3; ; field++ {
		b = bytes.TrimLeft(b, " ")
		if len(b) == 0 {
			return 0, fmt.Errorf("stat: %d fields", field-1)
		}
		if field == 22 {
			v, n := parseUint(b)
			if n == 0 {
				return 0, fmt.Errorf("stat: start time %.20q", b)
			}
			return v, nil
		}
		j := bytes.IndexByte(b, ' ')
		if j < 0 {
			return 0, fmt.Errorf("stat: %d fields", field)
		}
		b = b[j:]
	}
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

// Stop ends the window and returns what it cost each role, from
// StartSampling to now. Calling it (or StopWindow) again returns an error.
func (s *Sampler) Stop() (Sample, error) {
	return s.finish(true, func(last cpuSnap, snaps []cpuSnap) (Sample, error) {
		// The threads' last poll follows the last snapshot.
		smp := s.sample(s.first, last, s.start, time.Now(), last.t.Sub(s.start))
		smp.PerSecond = s.perSecond(snaps, s.start, last.t)
		return smp, nil
	})
}

// StopWindow ends the sampling and returns what the window [end-window,
// end] cost each role: the load tool's own window, which starts after
// StartSampling (the tool's start, its connections) and ends before the
// sampling does (its report). CPU and Busy come from the /proc/stat
// snapshots nearest to the bounds at or inside them, at most statPeriod
// from each, CPU scaled from their span to window; Seconds is window. The
// threads' figures are over their observations inside the window. A
// window reaching before StartSampling starts there instead.
func (s *Sampler) StopWindow(end time.Time, window time.Duration) (Sample, error) {
	if window <= 0 {
		return Sample{}, fmt.Errorf("sampler window %v: want a positive length", window)
	}
	// The last poll's count of the pipes comes after a window that has
	// ended: it would not count.
	pipes := !time.Now().After(end)
	return s.finish(pipes, func(last cpuSnap, snaps []cpuSnap) (Sample, error) {
		lo := end.Add(-window)
		a, b := -1, -1
		for i, sn := range snaps {
			if a < 0 && !sn.t.Before(lo) {
				a = i
			}
			if !sn.t.After(end) {
				b = i
			}
		}
		if a < 0 || b <= a {
			return Sample{}, fmt.Errorf("sampler: no two /proc/stat readings inside the window %s to %s (sampling %s to %s)",
				lo.Format("15:04:05.000"), end.Format("15:04:05.000"), s.start.Format("15:04:05.000"), last.t.Format("15:04:05.000"))
		}
		smp := s.sample(snaps[a], snaps[b], maxTime(lo, s.start), end, min(window, end.Sub(s.start)))
		smp.PerSecond = s.perSecond(snaps[a:b+1], snaps[a].t, snaps[b].t)
		return smp, nil
	})
}

// finish stops the sampling once, reads the last snapshot and threads
// (and the proxy's pipes, when pipes is set), and computes the sample
// with calc.
func (s *Sampler) finish(pipes bool, calc func(last cpuSnap, snaps []cpuSnap) (Sample, error)) (Sample, error) {
	first := false
	s.once.Do(func() { first = true })
	if !first {
		return Sample{}, errors.New("sampler already stopped")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.finished = true
	last, err := s.readStat()
	defer s.closeFiles()
	if err != nil {
		return Sample{}, err
	}
	s.poll(false, pipes)
	return calc(last, s.snapshots(last))
}

// closeFiles closes the descriptors the sampler kept open.
func (s *Sampler) closeFiles() {
	s.stat.Close()
	if s.cpuStat != nil {
		s.cpuStat.Close()
	}
	for _, t := range s.threads {
		if t.fd >= 0 {
			unix.Close(t.fd)
			t.fd = -1
		}
	}
	s.open = 0
}

// perSecond is each role's busy fraction in each second from lo to hi,
// from snaps (in time order, within [lo, hi]): for each second, the
// snapshots nearest to its bounds inside it. A second with fewer than two
// readings ends the series.
func (s *Sampler) perSecond(snaps []cpuSnap, lo, hi time.Time) map[Role][]float64 {
	out := map[Role][]float64{}
	i := 0
	for from := lo; from.Before(hi); from = from.Add(time.Second) {
		to := minTime(from.Add(time.Second), hi)
		for i < len(snaps) && snaps[i].t.Before(from) {
			i++
		}
		j := i
		for j+1 < len(snaps) && !snaps[j+1].t.After(to) {
			j++
		}
		if j >= len(snaps) || j <= i {
			break
		}
		for _, r := range roles {
			if frac, ok := s.busyOf(r, snaps[i], snaps[j]); ok {
				out[r] = append(out[r], frac)
			}
		}
		i = j
	}
	return out
}

// busyOf is role r's busy fraction between the snapshots a and b, 0..1;
// false for a role without CPUs or snapshots with no time between them.
func (s *Sampler) busyOf(r Role, a, b cpuSnap) (float64, bool) {
	cpus := s.h.layout.cpus(r)
	span := b.t.Sub(a.t).Seconds()
	if len(cpus) == 0 || span <= 0 {
		return 0, false
	}
	var ticks uint64
	for _, c := range cpus {
		i := s.cpuIndex[c]
		if b.busy[i] > a.busy[i] {
			ticks += b.busy[i] - a.busy[i]
		}
	}
	return min(float64(ticks)/userHZ/(span*float64(len(cpus))), 1), true
}

// minTime returns the earlier of two times.
func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// sample computes the figures of each role from the snapshots a and b,
// scaled to window, and from the threads' observations in [lo, hi].
func (s *Sampler) sample(a, b cpuSnap, lo, hi time.Time, window time.Duration) Sample {
	smp := Sample{
		Seconds: window.Seconds(),
		CPU:     map[Role]float64{},
		Busy:    map[Role]float64{},
		Thread:  map[Role]float64{},
	}
	for _, r := range roles {
		if frac, ok := s.busyOf(r, a, b); ok {
			smp.Busy[r] = frac
			smp.CPU[r] = frac * smp.Seconds * float64(len(s.h.layout.cpus(r)))
		}
		smp.Thread[r] = 0
	}
	if !lo.After(s.start) {
		lo = s.polled // the threads' first reading precedes the first snapshot
	}
	for _, t := range s.threads {
		smp.Thread[t.role] = max(smp.Thread[t.role], threadBusy(t.obs, lo, hi, window))
	}
	for _, p := range s.pipes {
		if !p.t.Before(lo) && !p.t.After(hi) {
			smp.Pipes = max(smp.Pipes, p.n)
		}
	}
	if s.cpuStat != nil {
		smp.Quota = s.h.cgroups.quota
		if b.thr.throttled > a.thr.throttled {
			smp.ThrottledPeriods = int64(b.thr.throttled - a.thr.throttled)
		}
		if b.thr.ns > a.thr.ns {
			smp.Throttled = float64(b.thr.ns-a.thr.ns) / 1e9
		}
	}
	smp.Bound = boundOf(smp.Busy, smp.Thread, len(s.h.layout.cpus(RoleProxy)), smp.Quota, smp.ThrottledShare())
	return smp
}

// threadBusy is a thread's busy fraction in [lo, hi] from its
// observations (in time order): its CPU time between the first and the
// last inside, over their span when that is at least minThreadSpan or
// half the window, and over the window otherwise.
func threadBusy(obs []threadObs, lo, hi time.Time, window time.Duration) float64 {
	i, j := -1, -1
	for k, o := range obs {
		if o.t.Before(lo) || o.t.After(hi) {
			continue
		}
		if i < 0 {
			i = k
		}
		j = k
	}

	if i < 0 || window <= 0 || obs[j].ns < obs[i].ns {
		return 0
	}
	cpu := time.Duration(obs[j].ns - obs[i].ns)
	over := window
	if span := obs[j].t.Sub(obs[i].t); span >= min(minThreadSpan, window/2) {
		over = span
	}
	return min(cpu.Seconds()/over.Seconds(), 1)
}

// boundOf names the role that set the pace of a run, by the reference results' 90%
// rule, measured against what each role was allowed: "proxy" if the
// proxy was busy at least 90% of what it was allowed in the window;
// otherwise "client" or "origin" if theirs were (the busier one, by the
// larger of its two figures); otherwise "none".
//
// A role is allowed its CPUs: its CPUs busy at least 90% of the window,
// or one of its threads (a thread has one CPU at most). A quota of q CPUs
// on the proxy (of its cpus) allows it less: it also set the pace if one
// of its threads ran at least 90% of min(q, 1) CPU, or if the kernel
// held it at its quota in at least 90% of the window's CFS periods
// (throttled, 0..1). Its CPUs' busy time is not divided by q: they run
// other work while the kernel holds the proxy, and the kernel's network
// work there is not charged to the quota.
func boundOf(busy, thread map[Role]float64, cpus int, quota, throttled float64) string {
	load := func(r Role) float64 { return max(busy[r], thread[r]) }
	proxy := load(RoleProxy)
	if quota > 0 && quota < float64(cpus) {
		proxy = max(proxy, thread[RoleProxy]/min(quota, 1), throttled)
	}
	if proxy >= boundThreshold {
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

// ProxyReady notes the pipes the proxy's processes hold now, once it is
// ready and before any load: they are its own (wake-ups, logs), and the
// sampler counts only the others as the splicing's (Sample.Pipes). Call
// it for each run's proxy.
func (h *Host) ProxyReady() {
	own := h.proxyPipes(h.PIDs(RoleProxy), false, make([]byte, dirBufSize))
	h.pipesMu.Lock()
	h.ownPipes = own
	h.pipesMu.Unlock()
}

// proxyPipes returns the distinct pipes (by inode) that pids hold, less
// those noted by ProxyReady when notNoted is set; dents is the buffer of
// the descriptors' listing (dirBufSize).
func (h *Host) proxyPipes(pids []int, notNoted bool, dents []byte) map[uint64]bool {
	h.pipesMu.Lock()
	own := h.ownPipes
	h.pipesMu.Unlock()
	found := map[uint64]bool{}
	var buf [64]byte
	for _, pid := range pids {
		dir, err := openProcDir(pid, "fd")
		if err != nil {
			continue // gone meanwhile
		}
		_ = eachEntry(dir, dents, func(fd []byte) {
			n, err := readlinkAt(dir, fd[:len(fd)+1], buf[:])
			if err != nil {
				return
			}
			ino, ok := pipeInode(buf[:n])
			if ok && !(notNoted && own[ino]) {
				found[ino] = true
			}
		})
		unix.Close(dir)
	}
	return found
}

// pipeInode returns the inode of a descriptor's link when it is a pipe:
// "pipe:[123456]".
func pipeInode(link []byte) (uint64, bool) {
	rest, ok := bytes.CutPrefix(link, []byte("pipe:["))
	if !ok || len(rest) < 2 || rest[len(rest)-1] != ']' {
		return 0, false
	}
	v, err := strconv.ParseUint(string(rest[:len(rest)-1]), 10, 64)
	return v, err == nil
}

package host

import (
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

// The sampler observes a measured window: it reads the roles' CPUs in
// /proc/stat every statPeriod (procstat.go), the proxy's cpu.stat with
// them when it has a quota (cpustat.go), and polls the roles' threads and
// the proxy's pipes (threads.go). It interprets nothing: Window is what
// it saw, and harness/pace reads it as a run's figures.
//
// The polls of the threads follow one schedule, in loop: the window's
// first poll at its start and its last just before its end, as the caller
// planned them (Plan), whatever they cost; between them a poll every
// threadPeriod, put off where a poll costs more than pollBudget of a CPU
// (a poll is charged the CPU time its thread used, not the time it waited
// for a CPU, which a benchmark's load makes long), but never by more than
// a third of the window.

// statPeriod is how often the sampler reads /proc/stat: the bounds of a
// window given to StopWindow are met within this.
const statPeriod = 100 * time.Millisecond

// threadPeriod is how often the sampler polls the roles' threads at the
// most. A thread's share is its CPU time over the span it was observed,
// from its birth (or the window's first poll) to its last poll, so a
// thread that ends inside the window loses no share, only up to the time
// between two polls of its observed span.
const threadPeriod = time.Second

// pollBudget is the share of a CPU the polls between the window's first
// and last may take: a poll of many threads (3proxy, a thread a
// connection, holds 2000 threads under the 2000-connection loads; a poll
// of them takes 5 to 8 ms of a CPU here) puts the next one off until
// its cost is that share of the time since, rather than threadPeriod,
// and at most a third of the window: in a 10 s window, two polls between
// its first and last rather than three at 0.2%, which took the sampler
// from 0.43% of a CPU to 0.35 to 0.40% with that proxy. See
// BenchmarkSampler.
const pollBudget = 0.001

// statRing is how many /proc/stat snapshots the sampler keeps: ten minutes
// at statPeriod. The snapshot at the start of the sampling is kept apart,
// so a longer window is still measured whole by Stop.
const statRing = 6000

// Plan is the load tool's window as the caller expects it: the tool
// starts as StartSampling returns, and its window begins Warmup later
// (bench mix warms up on its connections first) and lasts Length. The
// sampler makes the window's first poll of the threads an edge after its
// start and its last an edge before its end (see edge), where the tool
// runs whatever its start-up and its report take. The zero Plan is the
// sampling itself: the first poll at StartSampling, the last at Stop.
//
// A Deferred plan's tool says when it starts (Sampler.Begin): bench mix
// opens its connections before its warm-up, which takes as long as the
// proxy makes it (6.6 s for 9950 connections through a saturated squid,
// longer than a 5 s window), so its window is planned from then. Until
// Begin the threads are not polled; a window never begun has no poll of
// them (its thread figures unknown, not 0).
type Plan struct {
	Warmup   time.Duration
	Length   time.Duration
	Deferred bool
}

// planned says whether p plans a window.
func (p Plan) planned() bool { return p.Length > 0 }

// edge is how far inside a planned window its first and last polls are:
// a tenth of it, from statPeriod up to 5 statPeriods, so that a tool's
// start-up and report (wrk's connections, iperf3's exchange of results,
// which the session's window leaves out) do not put them outside.
func (p Plan) edge() time.Duration {
	return min(max(p.Length/10, statPeriod), 5*statPeriod)
}

// Thread is one thread's time on a CPU, as the polls read it: NS[i]
// nanoseconds at T[i], in time order. A thread born after the window's
// first poll has its birth as its first observation, with 0.
type Thread struct {
	Role Role
	T    []time.Time
	NS   []uint64
}

// cpuSnap is one reading of /proc/stat: the busy ticks of each CPU the
// roles use, in the order of Sampler.cpus.
type cpuSnap struct {
	t    time.Time
	sure bool // read within maxReadSpan
	busy []uint64
	thr  throttle // the proxy's, when it has a quota
}

// Sampler measures one window; make it with Host.StartSampling.
type Sampler struct {
	h        *Host
	hooks    samplerHooks // the Host's, as the sampler started
	began    time.Time    // when StartSampling was called
	plan     Plan
	planned  time.Time   // the planned window's start; zero without a plan
	cpus     []int       // the CPUs of the roles, ascending
	cpuIndex map[int]int // CPU -> index in cpus
	stat     *os.File    // /proc/stat, kept open
	statBuf  []byte
	cpuStat  *os.File // the proxy's cpu.stat, kept open; nil without a quota
	thrBuf   []byte
	first    cpuSnap   // at the start of the sampling
	ring     []cpuSnap // the latest snapshots, oldest at ringNext once full
	ringNext int
	// bootWall is the wall-clock time of boot, to place a thread's start
	// time.
	bootWall time.Time
	// parts are the samplers of the hosts of their own, where the roles
	// are on them (spreadrun.go).
	parts []remoteSampling
	// mu guards what follows and the readings: the loop takes it for
	// each round, and stops once finished is set.
	mu       sync.Mutex
	finished bool
	polls    []time.Time        // when each poll of the threads began
	sched    []pollRecord       // how the loop scheduled its polls
	threads  map[int]*threadRec // by TID
	order    []*threadRec       // in the order first seen
	recs     []threadRec        // where the next threads' records go (see newThread)
	obsChunk []threadObs
	procs    map[int]*procRec
	pipes    []pipeObs
	open     int           // descriptors kept open
	late     map[int]int   // by TID, its readings left out as they took too long (see leftOut)
	cost     time.Duration // the CPU time of the sampler's own threads
	// The polls' buffers: a directory's listing, a path relative to
	// it, a schedstat file, a thread's stat.
	dents, path, buf, line []byte
	// ts reads the threads through taskstats, nil where the kernel
	// does not (see openTaskstats): then their schedstat files are.
	// Its polls' buffers: the threads first seen (fresh), a batch of
	// known threads, their TIDs and the answers.
	ts    *taskstatsConn
	fresh []freshThread
	batch []*threadRec
	tids  []int
	// breath holds each poll to slices of its CPU time (see pollSlice).
	breath  breather
	answers []taskReading
	once    sync.Once
}

// StartSampling starts observing a window: it reads /proc/stat now and
// follows the roles' CPUs and the threads of their processes until Stop
// or StopWindow, with the polls plan places (the zero Plan: from now
// to Stop).
func (h *Host) StartSampling(plan Plan) (*Sampler, error) {
	if h.Spread() {
		return h.startSpread(plan)
	}
	s := &Sampler{h: h, hooks: h.sampling, began: time.Now(), plan: plan, cpuIndex: map[int]int{}, threads: map[int]*threadRec{}, procs: map[int]*procRec{},
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
	if !s.hooks.schedstatOnly {
		if s.ts, err = openTaskstats(); err == nil {
			s.answers = make([]taskReading, taskstatsBatch)
		}
	}
	up, now, err := uptime()
	if err != nil {
		s.closeFiles()
		return nil, err
	}
	s.bootWall = now.Add(-up)
	if !plan.planned() {
		s.charged(func() { s.poll(firstPoll) })
	}
	if s.first, err = s.readStatSure(); err != nil {
		s.closeFiles()
		return nil, err
	}
	// The loop's goroutine is scheduled by the Go runtime on a thread of
	// the harness's, which waits for a CPU beside the load like any other
	// (over a second, seen here): the window is planned from when the
	// loop runs, on its own thread and priority, not from when it was
	// asked for.
	ready := make(chan struct{})
	spares.add()
	go s.loop(ready)
	<-ready
	return s, nil
}

// Begin tells a Deferred plan's sampler that the tool starts now, at:
// its window begins the plan's Warmup later. A second call, or one
// without a Deferred plan, changes nothing.
func (s *Sampler) Begin(at time.Time) {
	if s.h.Spread() {
		s.mu.Lock()
		if s.plan.Deferred && s.planned.IsZero() {
			s.planned = at.Add(s.plan.Warmup)
		}
		s.mu.Unlock()
		s.beginSpread(at)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.plan.Deferred && s.planned.IsZero() && !s.finished {
		s.planned = at.Add(s.plan.Warmup)
	}
}

// charged runs f on this goroutine's thread and charges its CPU time to
// the sampler.
func (s *Sampler) charged(f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c := threadCPU()
	f()
	s.cost += threadCPU() - c
}

// threadCPU is the CPU time the calling OS thread has used.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return time.Duration(ts.Nano())
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

// loop reads /proc/stat every statPeriod and polls the threads on the
// schedule of the plan until the sampling is finished. It holds an OS
// thread of its own, so that a poll's cost is that thread's CPU time
// (CLOCK_THREAD_CPUTIME_ID), and sleeps in nanosleep: woken by a Go timer
// instead, the runtime's scheduler costs about twice the CPU a round here
// (about 330 us rather than 180 us, most of it the wake-up itself; see
// BenchmarkSampler).
func (s *Sampler) loop(ready chan<- struct{}) {
	// Locked and never unlocked, the loop's thread ends with the loop
	// rather than going back to the runtime's pool: it runs ahead of the
	// load it measures (see prioritize).
	runtime.LockOSThread()
	prioritize()
	planned := s.plan.planned()
	if planned && !s.plan.Deferred {
		s.planned = time.Now().Add(s.plan.Warmup)
	}
	close(ready)
	// The window's edges, where it was planned: its first poll is due at
	// firstAt, its last at lastAt; zero until the window is begun.
	var firstAt, lastAt time.Time
	madeFirst, madeLast := !planned, !planned
	// maxGap is the longest one poll may put off the next.
	maxGap := 3 * threadPeriod
	if planned {
		maxGap = max(s.plan.Length/3, statPeriod)
	}
	edges := func() {
		if planned && firstAt.IsZero() && !s.planned.IsZero() {
			firstAt = s.planned.Add(s.plan.edge())
			lastAt = s.planned.Add(s.plan.Length - s.plan.edge())
		}
	}
	s.mu.Lock()
	edges()
	s.mu.Unlock()
	next := time.Now().Add(threadPeriod)
	c0 := threadCPU()
	for {
		wait := statPeriod
		switch {
		case planned && firstAt.IsZero(): // not begun
		case !madeFirst:
			wait = min(wait, max(time.Until(firstAt), 0))
		case !madeLast:
			wait = min(wait, max(time.Until(lastAt), 0))
		}
		ts := unix.NsecToTimespec(int64(wait))
		unix.Nanosleep(&ts, nil)
		s.mu.Lock()
		if s.finished {
			s.mu.Unlock()
			return
		}
		edges()
		if snap, err := s.readStat(); err == nil && snap.sure {
			s.keep(snap)
		}
		now := time.Now()
		kind, due := midPoll, madeFirst && !(planned && madeLast) && !now.Before(next) && !s.lastNear(now, lastAt, maxGap)
		switch {
		case planned && firstAt.IsZero():
			due = false
		case !madeFirst && !now.Before(firstAt):
			kind, due, madeFirst = firstPoll, true, true
		case madeFirst && !madeLast && !now.Before(lastAt):
			kind, due, madeLast = lastPoll, true, true
		}
		if due {
			at := next
			switch kind {
			case firstPoll:
				at = firstAt
			case lastPoll:
				at = lastAt
			}
			next = s.pollAt(kind, at, now, maxGap)
		}
		c1 := threadCPU()
		s.cost += c1 - c0
		c0 = c1
		s.mu.Unlock()
	}
}

// pollAt polls the threads now, as kind, due at due, records how it was
// scheduled and returns when the next poll between the edges is due: a
// threadPeriod on, put off where the poll cost more than pollBudget, but
// never by more than maxGap. The caller holds mu.
func (s *Sampler) pollAt(kind pollKind, due, now time.Time, maxGap time.Duration) time.Time {
	r := pollRecord{kind: kind, due: due, at: now}
	c := threadCPU()
	s.poll(kind)
	r.cost = threadCPU() - c
	r.next = now.Add(min(max(threadPeriod, time.Duration(float64(r.cost)/pollBudget)), maxGap))
	s.sched = append(s.sched, r)
	return r.next
}

// pollRecord is how the loop scheduled one of its polls, for the tests:
// of which kind it was, when it was due, when the loop's round that made
// it began (at), the CPU time it used, and when the next poll between the
// edges was due from then.
type pollRecord struct {
	kind          pollKind
	due, at, next time.Time
	cost          time.Duration
}

// spareProcs is how many Ps (GOMAXPROCS) a running sampler adds, so that
// its loop's thread finds one free when it wakes. A goroutine's thread
// back from a system call needs a P to go on, and takes an idle one; when
// none is idle it waits until a thread that holds one hands it over, and
// those are the harness's ordinary threads, which wait for a CPU beside
// the load: the loop, woken on time at its real-time priority, then
// waited 1.2 to 2.3 s for a P (its /proc/stat readings stopped after its
// first) in 2 of 6 runs beside two busy loops here, and in none with
// spare Ps.
const spareProcs = 2

// spareLender counts the samplers running and what GOMAXPROCS was
// before them, and sets GOMAXPROCS to that plus their spare Ps.
type spareLender struct {
	mu            sync.Mutex
	running, base int
}

// spares is the process's one lender. It is process-wide because
// GOMAXPROCS is: samplers of two Hosts run at once (a test's second
// Host), and a count of each Host's own would take the other's spares
// for its base, and leave them behind when both end.
var spares spareLender

// add adds the spare Ps of a sampler that starts.
func (l *spareLender) add() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.running == 0 {
		l.base = runtime.GOMAXPROCS(0)
	}
	l.running++
	runtime.GOMAXPROCS(l.base + spareProcs*l.running)
}

// drop takes back the spare Ps of a sampler that ended.
func (l *spareLender) drop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.running--
	runtime.GOMAXPROCS(l.base + spareProcs*l.running)
}

// prioritize puts the calling thread ahead of the ordinary ones: a
// round of the loop that waits for a CPU behind the load it measures
// (the harness shares the client's CPUs, and under cgroups a nice value
// counts only within its group, so a thread of the harness at -20 still
// waited over a second for a CPU beside a loaded client and an emulator
// here) is a reading or a poll late, and the loop uses less than 1% of a
// CPU. It takes the lowest real-time priority (SCHED_FIFO 1; as root),
// below any other real-time thread, else the highest nice priority.
func prioritize() {
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: 1}
	if unix.SchedSetAttr(0, &attr, 0) != nil {
		_ = unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), -20)
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

// snapshots returns every snapshot in time order: the sampling's first,
// the ring, and last.
func (s *Sampler) snapshots(last cpuSnap) []cpuSnap {
	out := make([]cpuSnap, 0, len(s.ring)+2)
	out = append(out, s.first)
	out = append(out, s.ring[s.ringNext:]...)
	out = append(out, s.ring[:s.ringNext]...)
	return append(out, last)
}

// lastNear says whether a poll between the edges, due at now, is not
// made because the window's last poll, at lastAt (zero when the window
// has no plan), is due within half a threadPeriod and within maxGap of
// the poll before: it would add a reading of little worth and hold the
// last one off its edge by its own time, which a loaded machine makes
// long enough (a poll held 300 ms, then the loop's thread, put the last
// poll past the window's end). The caller holds mu.
func (s *Sampler) lastNear(now, lastAt time.Time, maxGap time.Duration) bool {
	return !lastAt.IsZero() && len(s.polls) > 0 && lastAt.Sub(now) < threadPeriod/2 && lastAt.Sub(s.polls[len(s.polls)-1]) <= maxGap
}

// Stop ends the sampling and returns what it observed from its start
// (StartSampling's first poll) to now. Calling it (or StopWindow) again
// returns an error.
func (s *Sampler) Stop() (Window, error) {
	if s.h.Spread() {
		return s.stopSpread(time.Now(), 0)
	}
	return s.finish(func(last cpuSnap, snaps []cpuSnap) (Window, error) {
		from := s.first.t
		if len(s.polls) > 0 {
			from = minTime(from, s.polls[0])
		}
		return s.window(snaps, from, time.Now()), nil
	})
}

// StopWindow ends the sampling and returns what it observed of the
// window [end-window, end]: the load tool's own, which starts after
// StartSampling (the tool's start, its connections) and ends before the
// sampling does (its report). Its /proc/stat readings are those nearest
// to the bounds at or inside them, at most statPeriod from each. A window
// reaching before StartSampling starts there instead.
func (s *Sampler) StopWindow(end time.Time, window time.Duration) (Window, error) {
	if window <= 0 {
		return Window{}, fmt.Errorf("sampler window %v: want a positive length", window)
	}
	if s.h.Spread() {
		return s.stopSpread(end, window)
	}
	return s.finish(func(last cpuSnap, snaps []cpuSnap) (Window, error) {
		lo := maxTime(end.Add(-window), s.first.t)
		w := s.window(snaps, lo, end)
		if len(w.Times) < 2 {
			return Window{}, fmt.Errorf("sampler: no two /proc/stat readings inside the window %s to %s (sampling %s to %s)",
				lo.Format("15:04:05.000"), end.Format("15:04:05.000"), s.first.t.Format("15:04:05.000"), last.t.Format("15:04:05.000"))
		}
		return w, nil
	})
}

// finish stops the sampling once, reads the last snapshot (and, with no
// plan, makes the window's last poll), and computes the window with calc.
func (s *Sampler) finish(calc func(last cpuSnap, snaps []cpuSnap) (Window, error)) (Window, error) {
	first := false
	s.once.Do(func() { first = true })
	if !first {
		return Window{}, errors.New("sampler already stopped")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.finished = true
	defer spares.drop()
	defer s.closeFiles()
	last, err := s.readStatSure()
	if err != nil {
		return Window{}, err
	}
	if !s.plan.planned() {
		s.charged(func() { s.poll(lastPoll) })
	}
	return calc(last, s.snapshots(last))
}

// closeFiles closes the descriptors the sampler kept open.
func (s *Sampler) closeFiles() {
	s.stat.Close()
	if s.cpuStat != nil {
		s.cpuStat.Close()
	}
	s.ts.close()
	for _, t := range s.order {
		if t.fd >= 0 {
			unix.Close(t.fd)
			t.fd = -1
		}
	}
	s.open = 0
}

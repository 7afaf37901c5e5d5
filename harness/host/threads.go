package host

import (
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// The polls of the roles' threads and of the proxy's pipes.
//
// Every thread of every process in the roles' cgroups is read at each
// poll, so that threads that start or end inside the window are counted
// too: through taskstats where the kernel answers it (taskstats.go),
// taskstatsBatch threads a sendmsg, each batch's readings stamped with
// the middle of the call that read them; else its schedstat file through
// a descriptor kept open per thread, one pread, stamped with the time it
// was read (a poll that waits for a CPU halfway does not misplace the
// rest). Both read the kernel's count of the thread's time on a CPU
// (sum_exec_runtime). A process's task directory is listed only when its
// thread count (the directory's link count, one fstat) changed or one of
// its known threads ended: a pool of threads that lives through the
// window costs one reading a thread a poll, and no file opened a thread
// through taskstats.
//
// Splicing: splice() moves data between two sockets through a pipe, so a
// proxy that splices holds pipes (haproxy keeps a pool of them, 3proxy one
// per spliced connection) that a copying one has no use for. The sampler
// counts the distinct pipes among the descriptors of the proxy's
// processes (/proc/PID/fd), other than those it held when it became
// ready (its own wake-ups; see Host.ProxyReady), once a window, at its
// last poll: a readlink a descriptor, 4000 of them with 3proxy under the
// 2000-connection loads (see eachLink). The kernel counts no other trace
// of splice() per process: /proc/PID/io leaves it out, as it does the
// send() and recv() a copying proxy uses.

// maxReadSpan is the longest a reading may take and still be stamped
// with its time: a read of schedstat or /proc/stat takes microseconds,
// and a batch of taskstats a few hundred, so one that took longer had
// its thread held off the CPU in the middle (by the scheduler, or by the
// Go runtime stopping the world for its collector while the harness's
// other threads wait for a CPU), and the stamp, taken beside the read,
// may be off by that much. Such a reading is left out: a poll that
// stamped a thread's reading 0.17 s late read a saturated thread as
// 0.885.
const maxReadSpan = time.Millisecond

// maxThreadFiles caps the descriptors the sampler keeps open; threads
// beyond it are read by opening their file each time.
const maxThreadFiles = 4096

// threadObs is one reading of a thread's time on a CPU.
type threadObs struct {
	t  time.Time
	ns uint64
}

// threadRec follows one thread through the window.
type threadRec struct {
	role Role
	pid  int
	tid  int
	fd   int  // its schedstat file, kept open while it lives; -1 when not kept open (see maxThreadFiles), read through taskstats, or once gone
	gone bool // it could not be read: it ended
	obs  []threadObs
	// start is when it started, from its age in its first reading
	// through taskstats; zero through schedstat.
	start time.Time
}

// procRec is what the polls know of one process of the roles.
type procRec struct {
	nlink uint64 // its task directory's link count when last listed: its threads + 2
	stale bool   // one of its threads ended, or is not kept open: list it again
}

// pollKind says which poll of the window a poll is.
type pollKind int

const (
	midPoll   pollKind = iota // a poll of the threads between the edges
	firstPoll                 // the window's first: the threads seen are observed from it
	lastPoll                  // the window's last: the proxy's pipes are counted too
)

// pollPoint is where a poll is, for samplerHooks.pollWatch.
type pollPoint int

const (
	pollBegins pollPoint = iota // before its first reading
	pollEnds                    // after its last
)

// samplerHooks are what the tests change in the samplers a Host starts;
// the zero value is the real sampler.
type samplerHooks struct {
	// pollHold, when set, is called in the middle of every poll: it
	// holds the poll's thread off the CPU, as a loaded machine does.
	pollHold func()
	// pollWatch, when set, is called on the poll's thread as each poll
	// begins, before its first reading (pollBegins), and as it ends,
	// after its last (pollEnds): what the tests read there of the
	// scheduler's own count of a thread brackets each of the poll's
	// readings of it, in time and in value, so that a thread's share is
	// checked against the scheduler's over the same span.
	pollWatch func(at pollPoint)
	// schedstatOnly makes the sampler read the threads' schedstat files
	// where taskstats would answer.
	schedstatOnly bool
}

// pollSlice is the most CPU time a poll takes in one stretch; it then
// sleeps pollRest before it goes on. The poll's thread is real-time (see
// prioritize) and runs on the client's CPUs, and a proxy of a thread a
// connection (stunnel, 3proxy) under the 20000-connection loads has 9950
// threads and twice the descriptors: in one stretch, the poll that read
// them held the client and the origin off their CPU for tens of
// milliseconds a time, and every exchange due meanwhile began that much
// late. stunnel's p99 read 30 to 60 ms at every rate of mix-tls's search,
// down to 125 a second, where the same proxy, client and origin without
// the sampler read 3 ms at 250 a second, and 12 ms beside a loop of
// real-time priority holding their CPU 40 ms every 3 s. In slices, a
// poll costs the CPU time it did and holds no exchange more than about
// pollSlice, and its readings stay exact: each batch of them is stamped
// with its own time.
const (
	pollSlice = 2 * time.Millisecond
	pollRest  = time.Millisecond
)

// breather cuts a poll's work into slices of pollSlice of its thread's
// CPU time, with a sleep of pollRest between them. The poll's thread is
// locked to it (the loop's, or charged's).
type breather struct {
	from  time.Duration // the thread's CPU time when the slice began
	last  time.Duration // and when the clock was last read
	calls int           // step calls since the clock was last read
	// For the tests, of the window's polls: the longest slice, the
	// longest a slice ran before its last look at the clock, and the
	// longest piece of work between two looks; the looks, the rests and
	// the slices.
	longest, before, piece time.Duration
	looks, rests, slices   int
}

// start begins a poll's first slice.
func (b *breather) start() {
	b.from, b.calls = threadCPU(), 0
	b.last = b.from
}

// step comes between two pieces of a poll's work, each of them
// microseconds: every every-th call it reads the thread's CPU clock (a
// system call) and, once the slice is used up, sleeps pollRest.
func (b *breather) step(every int) {
	if b.calls++; b.calls < every {
		return
	}
	b.calls = 0
	now := threadCPU()
	b.looks++
	b.piece = max(b.piece, now-b.last)
	if d := now - b.from; d >= pollSlice {
		b.endSlice(now)
		b.rests++
		ts := unix.NsecToTimespec(int64(pollRest))
		_ = unix.Nanosleep(&ts, nil)
		now = threadCPU()
		b.from = now
	}
	b.last = now
}

// endSlice ends the slice at the thread's CPU time now.
func (b *breather) endSlice(now time.Duration) {
	b.longest = max(b.longest, now-b.from)
	b.before = max(b.before, b.last-b.from)
	b.slices++
}

// end ends the poll's last slice.
func (b *breather) end() {
	now := threadCPU()
	b.piece = max(b.piece, now-b.last)
	b.endSlice(now)
	b.last = now
}

// poll reads the CPU time of every thread of every role's processes, and
// counts the proxy's pipes at the window's last poll. The caller holds
// mu, or has the sampler to itself.
func (s *Sampler) poll(kind pollKind) {
	s.polls = append(s.polls, time.Now())
	if w := s.hooks.pollWatch; w != nil {
		w(pollBegins)
		defer w(pollEnds)
	}
	s.breath.start()
	defer s.breath.end()
	// The roles' processes, read once a poll: cgroup.procs is made by
	// walking every thread of the cgroup (2000 of 3proxy's).
	pids := make(map[Role][]int, len(roles))
	for _, r := range roles {
		pids[r] = s.h.PIDs(r)
		s.breath.step(1)
	}
	if kind == lastPoll {
		// First, at the window's edge, where it was planned.
		at := time.Now()
		pipes := s.h.proxyPipes(pids[RoleProxy], s.h.notedPipes(), s.dents, func() { s.breath.step(breathReads) })
		s.pipes = append(s.pipes, pipeObs{at, len(pipes)})
	}
	// Known threads first, so that a process one of whose threads ended
	// is listed again below.
	if s.ts != nil {
		s.readKnownTaskstats()
	} else {
		s.readKnown()
	}
	if s.hooks.pollHold != nil {
		s.hooks.pollHold()
	}
	s.fresh = s.fresh[:0]
	for _, r := range roles {
		for _, pid := range pids[r] {
			s.pollTasks(r, pid, kind == firstPoll)
		}
	}
	if s.ts != nil {
		s.readFresh()
	}
}

// readKnown reads the known threads whose schedstat file is kept open:
// one pread each.
func (s *Sampler) readKnown() {
	for _, t := range s.order {
		if t.fd < 0 {
			continue
		}
		if o, span, ok := s.readRuntime(t.fd); ok {
			s.observe(t, o, span)
		} else {
			s.end(t)
		}
		s.breath.step(breathReads)
	}
}

// breathReads is the calls to breather.step between two reads of the
// clock where each comes after a pread of schedstat, a readlink of a
// descriptor or a directory entry of a thread: a few microseconds each,
// so that 32 of them are a small part of a slice. A batch of taskstats,
// a few hundred, is followed by a read of the clock each.
const breathReads = 32

// readKnownTaskstats reads the known threads that live through
// taskstats.
func (s *Sampler) readKnownTaskstats() {
	s.batch = s.batch[:0]
	for _, t := range s.order {
		if !t.gone {
			s.batch = append(s.batch, t)
		}
	}
	s.eachBatch(len(s.batch), func(i int) int { return s.batch[i].tid }, func(from int, answers []taskReading, stamp time.Time, span time.Duration) {
		for k, r := range answers {
			switch t := s.batch[from+k]; {
			case r.err == unix.ESRCH:
				s.end(t)
			case r.err != nil:
				s.leftOut(t.tid) // not answered: no reading
			case !sameThread(t, r, stamp, span):
				s.end(t) // its TID is another's now
			case len(t.obs) > 0 && r.ns < t.obs[len(t.obs)-1].ns:
				// Below the last reading: not a time on a CPU (a kernel
				// whose taskstats counts it only with delay accounting
				// on, turned off since): no reading.
				s.leftOut(t.tid)
			default:
				s.observe(t, threadObs{stamp, r.ns}, span)
			}
		}
	})
}

// readFresh reads the threads first seen at this poll (s.fresh) through
// taskstats and follows those read within maxReadSpan; the others but
// those that ended are read again at the next poll.
func (s *Sampler) readFresh() {
	s.eachBatch(len(s.fresh), func(i int) int { return s.fresh[i].tid }, func(from int, answers []taskReading, stamp time.Time, span time.Duration) {
		for k, r := range answers {
			switch f := s.fresh[from+k]; {
			case r.err == nil && span <= maxReadSpan:
				s.newThread(f, threadObs{stamp, r.ns}).start = stamp.Add(-r.age)
			case r.err == unix.ESRCH:
				// ended
			default:
				s.leftOut(f.tid)
				s.procs[f.pid].stale = true // to be read again at the next poll
			}
		}
	})
}

// eachBatch asks taskstats for n threads, tid(i) the TID of the i-th,
// taskstatsBatch a sendmsg, and calls fn with each batch's answers, the
// index of its first thread, the middle of the call that read them, where
// they are stamped, and how long it took. A batch that could not be
// asked for has its error for every answer.
func (s *Sampler) eachBatch(n int, tid func(i int) int, fn func(from int, answers []taskReading, stamp time.Time, span time.Duration)) {
	for from := 0; from < n; from += taskstatsBatch {
		s.tids = s.tids[:0]
		for i := from; i < min(from+taskstatsBatch, n); i++ {
			s.tids = append(s.tids, tid(i))
		}
		answers := s.answers[:len(s.tids)]
		t0, t1, err := s.ts.read(s.tids, answers)
		if err != nil {
			for k := range answers {
				answers[k] = taskReading{err: err}
			}
		}
		fn(from, answers, t0.Add(t1.Sub(t0)/2), t1.Sub(t0))
		s.breath.step(1)
	}
}

// sameThread says whether reading r, stamped at stamp from a call that
// took span, is of thread t rather than of one the kernel gave its TID to
// since t ended (it gives them in turn up to kernel.pid_max, 32768 on a
// small machine, then starts over): the start it puts the reading's age
// back to is t's, within the stamps' errors (half of each call, and the
// age's microsecond).
func sameThread(t *threadRec, r taskReading, stamp time.Time, span time.Duration) bool {
	d := stamp.Add(-r.age).Sub(t.start)
	return max(d, -d) <= maxReadSpan/2+span/2+2*time.Microsecond
}

// observe records reading o of known thread t, which took span to read:
// it is left out when it took longer than maxReadSpan, and t ends when it
// is a zombie.
func (s *Sampler) observe(t *threadRec, o threadObs, span time.Duration) {
	switch {
	case s.zombie(t, o):
		s.end(t)
	case span > maxReadSpan:
		s.leftOut(t.tid)
	default:
		t.obs = append(t.obs, o)
	}
}

// end stops following known thread t: it ended, or could not be read.
func (s *Sampler) end(t *threadRec) {
	if t.fd >= 0 {
		unix.Close(t.fd)
		t.fd = -1
		s.open--
	}
	t.gone = true
	if p := s.procs[t.pid]; p != nil {
		p.stale = true
	}
}

// pipeObs is one count of the proxy's pipes.
type pipeObs struct {
	t time.Time
	n int
}

// pollTasks lists the threads of process pid, when they may have changed
// since the last listing, and reads those the poll has not read: the new
// ones (through taskstats, they are queued in s.fresh and read together
// after), and the known ones whose file is not kept open.
func (s *Sampler) pollTasks(r Role, pid int, first bool) {
	dir, err := openProcDir(pid, "task")
	if err != nil {
		return // gone meanwhile
	}
	defer unix.Close(dir)
	var st unix.Stat_t
	if err := unix.Fstat(dir, &st); err != nil {
		return
	}
	p := s.procs[pid]
	if p == nil {
		p = &procRec{stale: true}
		s.procs[pid] = p
	}
	if !p.stale && p.nlink == uint64(st.Nlink) {
		return
	}
	p.nlink, p.stale = uint64(st.Nlink), false
	_ = eachEntry(dir, s.dents, func(name []byte) {
		s.breath.step(breathReads)
		v, n := parseUint(name)
		if n == 0 || n < len(name) || v > 1<<31 {
			return
		}
		tid := int(v)
		if t, ok := s.threads[tid]; ok {
			if s.ts == nil && t.fd < 0 && !t.gone {
				s.reread(t, dir, name)
				p.stale = true
			}
			return
		}
		f := freshThread{role: r, pid: pid, tid: tid}
		if !first {
			f.born = s.birth(dir, name)
		}
		if s.ts != nil {
			s.fresh = append(s.fresh, f)
			return
		}
		if t := s.addThread(f, dir, name); t == nil || t.fd < 0 {
			p.stale = true // to be read again at the next poll
		}
	})
}

// freshThread is a thread first seen at a poll.
type freshThread struct {
	role     Role
	pid, tid int
	born     time.Time // its birth, when it was born since the sampling began
}

// birth returns when thread name of the task directory dir was born,
// when that was since the sampling began, else the zero time: a thread
// first seen after the window's first poll and born since the sampling
// began (its start time says) is observed from its birth, with no time
// on a CPU then. (Its birth is set against the sampling's start, not the
// first poll's: the start time counts in ticks, and a thread born as
// that poll was made, and not in its listing, may read a tick before it.)
func (s *Sampler) birth(dir int, name []byte) time.Time {
	st, err := s.threadStart(dir, name)
	if err != nil {
		return time.Time{}
	}
	if born := s.bootWall.Add(time.Duration(st) * time.Second / userHZ); !born.Before(s.began) {
		return born
	}
	return time.Time{}
}

// addThread starts following thread f, name of the task directory dir,
// through its schedstat file, read now; nil when it could not be read
// (gone, or to be read again at the next poll).
func (s *Sampler) addThread(f freshThread, dir int, name []byte) *threadRec {
	s.path = cpath(s.path, name, "/schedstat")
	fd, err := openAt(dir, s.path)
	if err != nil {
		return nil
	}
	o, span, ok := s.readRuntime(fd)
	if ok && span > maxReadSpan {
		s.leftOut(f.tid)
	}
	if !ok || span > maxReadSpan {
		unix.Close(fd)
		return nil
	}
	t := s.newThread(f, o)
	if s.open < maxThreadFiles {
		t.fd = fd
		s.open++
	} else {
		unix.Close(fd)
	}
	return t
}

// newThread starts following thread f, first read as o.
func (s *Sampler) newThread(f freshThread, o threadObs) *threadRec {
	if len(s.recs) == cap(s.recs) {
		s.recs = make([]threadRec, 0, recChunk)
		s.obsChunk = make([]threadObs, recChunk*obsInChunk)
	}
	s.recs = append(s.recs, threadRec{role: f.role, pid: f.pid, tid: f.tid, fd: -1})
	t := &s.recs[len(s.recs)-1]
	k := (len(s.recs) - 1) * obsInChunk
	t.obs = s.obsChunk[k : k : k+obsInChunk]
	if !f.born.IsZero() {
		t.obs = append(t.obs, threadObs{f.born, 0})
	}
	t.obs = append(t.obs, o)
	s.threads[f.tid] = t
	s.order = append(s.order, t)
	return t
}

// The records of the threads are made recChunk at a time, each with room
// for obsInChunk observations beside the others' (a 10 s window's: a
// birth, 4 polls): a poll walks them in the order they were made, through
// memory laid out in that order.
const (
	recChunk   = 256
	obsInChunk = 5
)

// reread reads thread name of the task directory dir, whose file is not
// kept open.
func (s *Sampler) reread(t *threadRec, dir int, name []byte) {
	s.path = cpath(s.path, name, "/schedstat")
	fd, err := openAt(dir, s.path)
	if err != nil {
		t.gone = true
		return
	}
	defer unix.Close(fd)
	switch o, span, ok := s.readRuntime(fd); {
	case ok && span <= maxReadSpan:
		t.obs = append(t.obs, o)
	case ok:
		s.leftOut(t.tid)
	}
}

// leftOut counts a reading of thread tid left out: it took longer than
// maxReadSpan, or taskstats did not answer it (or answered less than the
// last reading). The tests tell a thread a poll missed from one whose
// reading it left out. The caller holds mu.
func (s *Sampler) leftOut(tid int) {
	if s.late == nil {
		s.late = map[int]int{}
	}
	s.late[tid]++
}

// readRuntime reads the schedstat file open as fd: the thread's time on
// a CPU in nanoseconds, stamped with when it was read. ok is false when
// the file could not be read (the thread ended); span is how long the
// read took: one over maxReadSpan may have its stamp that far from the
// reading.
func (s *Sampler) readRuntime(fd int) (o threadObs, span time.Duration, ok bool) {
	t0 := time.Now()
	n, err := unix.Pread(fd, s.buf, 0)
	t1 := time.Now()
	if n <= 0 || err != nil {
		return o, 0, false
	}
	o.ns, ok = parseSchedstat(s.buf[:n])
	o.t = t0.Add(t1.Sub(t0) / 2)
	return o, t1.Sub(t0), ok
}

// zombie says whether thread t, read as o, has ended and waits to be
// reaped: a process's main thread stays readable then, its time on a CPU
// final, until its parent waits for it (the harness, for the processes
// it starts, waiting for a CPU beside the load), and a reading of it,
// stamped past its end, would stretch its span. Every reading of a main
// thread is looked at, in its stat file, whether or not its time moved
// since the last: a thread that ran after a poll and then ended moved,
// and its zombie, read at the next poll, stretched its span by the time
// from its end to then (TestSamplerZombieThread). Other threads are gone
// as they end.
func (s *Sampler) zombie(t *threadRec, o threadObs) bool {
	if t.tid != t.pid {
		return false
	}
	fd, err := unix.Open("/proc/"+strconv.Itoa(t.pid)+"/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return true // reaped meanwhile
	}
	n, err := unix.Read(fd, s.line)
	unix.Close(fd)
	if err != nil {
		return false
	}
	state, err := parseState(s.line[:max(n, 0)])
	return err == nil && (state == 'Z' || state == 'X')
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

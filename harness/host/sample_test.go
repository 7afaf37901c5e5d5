package host

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"bench/harness/pace"
	"bench/results"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// schedstat returns a thread's time on a CPU and waiting for one, in
// seconds (/proc/PID/task/TID/schedstat).
func schedstat(t *testing.T, pid, tid int) (run, wait float64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/schedstat", pid, tid))
	if err != nil {
		t.Fatalf("read schedstat: %v", err)
	}
	f := strings.Fields(string(b))
	r, _ := strconv.ParseFloat(f[0], 64)
	w, _ := strconv.ParseFloat(f[1], 64)
	return r / 1e9, w / 1e9
}

// cpuBusy returns the busy seconds of each CPU from /proc/stat, read
// through procfs rather than the sampler's own parser.
func cpuBusy(t *testing.T) map[int]float64 {
	fs, err := procfs.NewFS(procfs.DefaultMountPoint)
	if err != nil {
		t.Fatal(err)
	}
	st, err := fs.Stat()
	if err != nil {
		t.Fatal(err)
	}
	busy := map[int]float64{}
	for c, s := range st.CPU {
		busy[int(c)] = s.User + s.Nice + s.System + s.IRQ + s.SoftIRQ + s.Steal
	}
	return busy
}

// checkBracketed checks the sampler's CPU figures against the kernel's
// count over an interval that contains the window: a role's CPU time can
// be no more than what its CPUs did over the outer interval, and no less
// than that less the outer interval's extra length, with a tick of slack
// per CPU for each of the four readings of /proc/stat's ticks (the
// test's two around the window, the sampler's two at its ends): each
// difference of two is within a tick of what the CPUs did. (It had a
// tick an end, two in all, which a run found 0.4 ms short of, the
// window's own readings' ticks not counted.) This holds whatever else
// the machine runs, so it checks the idle roles too.
func checkBracketed(t *testing.T, h *Host, smp figures, before, after map[int]float64, outer float64) {
	t.Helper()
	for _, r := range roles {
		cpus := h.Layout().cpus(r)
		var did float64
		for _, c := range cpus {
			did += after[c] - before[c]
		}
		n := float64(len(cpus))
		slack := 4 * n / userHZ
		lo := did - (outer-smp.Seconds)*n - slack
		if c := smp.CPU[r]; c > did+slack || c < lo {
			t.Errorf("CPU[%s] = %.3f s; its CPUs were busy %.3f s over %.3f s around the %.3f s window: want %.3f..%.3f",
				r, c, did, outer, smp.Seconds, lo, did+slack)
		}
		if b := smp.Busy[r]; b < 0 || b > 1 || abs(b*smp.Seconds*n-smp.CPU[r]) > 1e-6 {
			t.Errorf("Busy[%s] = %.3f with CPU %.3f s over %.3f s on %d CPUs; want CPU/(Seconds x CPUs) in 0..1",
				r, b, smp.CPU[r], smp.Seconds, len(cpus))
		}
	}
}

func abs(x float64) float64 { return max(x, -x) }

// TestSamplerChargesTheProxy: a spinner in the proxy keeps its CPU busy
// through the window, and its thread is charged what the scheduler gave
// it. The thread's share is checked against the scheduler's own count
// read at the sampler's polls (see watch), over the span of the
// sampler's readings: it was checked against the scheduler's count from
// before StartSampling to after Stop, a span up to a poll longer at each
// end, within 0.05, which a machine that held the spinner off its CPU
// at one end and not the other failed.
func TestSamplerChargesTheProxy(t *testing.T) {
	h := newTestHost(t)
	p := startHelper(t, h, RoleProxy, "spin")
	// It may run only on the proxy's CPUs.
	status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.PID()))
	want := "Cpus_allowed_list:\t" + CPUList(h.Layout().Proxy)
	if !strings.Contains(string(status), want+"\n") {
		t.Errorf("spinner's status lacks %q:\n%s", want, status)
	}
	// The spinner is a shell: one thread, its PID.
	tid := p.PID()
	wa := newWatch(h, RoleProxy)
	t0, before := time.Now(), cpuBusy(t)
	run0, wait0 := schedstat(t, p.PID(), tid)
	s, err := h.StartSampling(Plan{})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // the measured window
	w, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	smp := read(w)
	run1, wait1 := schedstat(t, p.PID(), tid)
	after, outer := cpuBusy(t), time.Since(t0).Seconds()
	t.Logf("sample: %+v; spinner ran %.3f s and waited %.3f s", smp, run1-run0, wait1-wait0)

	// The proxy's CPU was busy the whole window: the spinner, always
	// runnable, or whoever else the machine ran there while it waited.
	if b := smp.Busy[RoleProxy]; b < 0.95 || b > 1 {
		t.Errorf("Busy[proxy] = %.3f; want 0.95..1", b)
	}
	// Every role's CPU time is the kernel's. The idle roles' CPUs are
	// not asserted idle: on a small machine they are shared with
	// everything else the machine runs.
	checkBracketed(t, h, smp, before, after, outer)
	// The spinner was alive at both the window's polls (the first in
	// StartSampling, the last in Stop): its share is known, and it is the
	// proxy's busiest thread.
	share, known := wa.share(t, s, w, tid)
	if !known {
		t.Errorf("the spinner's share unknown, read at the window's first and last polls")
	}
	if th := smp.Thread[RoleProxy]; th != share {
		t.Errorf("Thread[proxy] = %.3f; want the spinner's %.3f", th, share)
	}
	// The idle roles have no busy thread.
	for _, r := range []Role{RoleClient, RoleOrigin} {
		if th := smp.Thread[r]; th > 0.05 {
			t.Errorf("Thread[%s] = %.3f; want at most 0.05 (nothing runs there)", r, th)
		}
	}
	if smp.Bound != "proxy" {
		t.Errorf("Bound = %q; want proxy", smp.Bound)
	}
	if _, err := s.Stop(); err == nil {
		t.Errorf("second Stop = nil error; want one")
	}
}

// TestSamplerBoundUnderQuota: the 90% rule reads what the proxy was
// allowed: a spinner held at a quota of half a CPU set the pace as one
// with its CPU to itself does, and an idle proxy under a quota did not,
// whatever else ran on its CPU. Other work on the proxy's CPU (a loaded
// machine, or a real-time loop there) may keep the spinner below its
// quota, and an idle proxy's CPU busy: what is asserted follows from what
// was measured. The spinner's share is the scheduler's count at the
// sampler's polls (see watch); under the quota it is at most the quota
// and two periods' worth over the window, and it was throttled in every
// period but those the CPU's other work (its busy time less the
// spinner's) could have denied it and the two at the window's ends; it
// set the pace where it ran 0.9 of its quota. These compared the
// spinner's share over a span from before StartSampling to after Stop,
// and wanted it throttled 0.9 of the window where the CPU's other work
// was under 0.1 of it, and Bound proxy under the quota whatever the
// spinner was let run: a real-time loop on its CPU holding it 0.59 of
// the window failed it (Bound none, the spinner at 0.26 under a quota
// of 0.5).
func TestSamplerBoundUnderQuota(t *testing.T) {
	for _, tt := range []struct {
		name   string
		quota  float64
		helper string
		bound  bool
	}{
		{"spinner under a quota of 0.5", 0.5, "spin", true},
		{"spinner on its own CPU", 0, "spin", true},
		{"idle proxy under a quota of 0.5", 0.5, "sleep", false},
	} {
		t.Run(strings.ReplaceAll(tt.name, " ", "_"), func(t *testing.T) {
			h := newTestHostQuota(t, tt.quota)
			p := startHelper(t, h, RoleProxy, tt.helper)
			wa := newWatch(h, RoleProxy)
			s, err := h.StartSampling(Plan{})
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(2 * time.Second)
			w, err := s.Stop()
			if err != nil {
				t.Fatal(err)
			}
			smp := read(w)
			share, known := wa.share(t, s, w, p.PID())
			t.Logf("sample: %+v; throttled %.2f of the window; the helper's share %.3f (known %v)", smp, smp.ThrottledShare(), share, known)
			if smp.Quota != tt.quota {
				t.Errorf("Quota = %g; want %g", smp.Quota, tt.quota)
			}
			if tt.quota == 0 && (smp.ThrottledPeriods != 0 || smp.Throttled != 0) {
				t.Errorf("throttled %d periods, %.3f s without a quota; want none", smp.ThrottledPeriods, smp.Throttled)
			}
			if periods := int64(smp.Seconds/pace.CFSPeriod.Seconds()) + 2; smp.ThrottledPeriods > periods || smp.Throttled > smp.Seconds {
				t.Errorf("throttled %d periods, %.3f s in a window of %.3f s; want at most %d periods and the window", smp.ThrottledPeriods, smp.Throttled, smp.Seconds, periods)
			}
			if !known {
				t.Fatalf("the helper's share unknown, read at the window's first and last polls")
			}
			period := pace.CFSPeriod.Seconds()
			if tt.quota > 0 && tt.helper == "spin" {
				if most := tt.quota * (1 + 2*period/smp.Seconds); share > most {
					t.Errorf("the spinner's share %.3f under a quota of %g; want at most %.3f", share, tt.quota, most)
				}
				// A period it was denied its quota in took the CPU's other
				// work more than the rest of the period.
				others := max(smp.Busy[RoleProxy]-share, 0) + 2/(userHZ*smp.Seconds)
				if least := 1 - others/(1-tt.quota) - 2*period/smp.Seconds; smp.ThrottledShare() < least {
					t.Errorf("throttled %d periods (%.2f of the window), %.3f s, the CPU's other work %.2f of it; want at least %.2f of it",
						smp.ThrottledPeriods, smp.ThrottledShare(), smp.Throttled, others, least)
				}
			}
			allowed := 1.0
			if tt.quota > 0 {
				allowed = tt.quota
			}
			switch proxy := smp.Bound == results.BoundProxy; {
			case tt.bound && share/allowed >= pace.Threshold && !proxy:
				t.Errorf("Bound = %q with the spinner at %.3f of what it was allowed; want proxy", smp.Bound, share/allowed)
			case tt.bound && !proxy:
				t.Logf("the CPU's other work held the spinner to %.3f of what it was allowed: Bound %q", share/allowed, smp.Bound)
			case !tt.bound && proxy && smp.Busy[RoleProxy] < pace.Threshold:
				t.Errorf("Bound = proxy with an idle proxy, its CPU busy %.3f; want another", smp.Busy[RoleProxy])
			case !tt.bound && proxy:
				t.Logf("other work kept the idle proxy's CPU busy %.2f of the window: the CPU set the pace", smp.Busy[RoleProxy])
			}
		})
	}
}

// spin is a spinner's life as spinFor made it.
type spin struct {
	tid      int       // its one thread's, its PID
	from, to time.Time // when it was ready, and when it began to stop
	// ran is the share of [from, to] the scheduler ran it; born is when
	// its start time says it was born, and ranBefore and waited what it
	// ran and waited for a CPU from then to ready.
	ran               float64
	born              time.Time
	ranBefore, waited float64
}

// spinFor starts a spinner in role r, born since the sampling watched by
// wa began, lets it run for d and stops it.
func spinFor(t *testing.T, h *Host, wa *watch, r Role, d time.Duration) spin {
	t.Helper()
	p := startHelper(t, h, r, "spin")
	sp := spin{tid: p.PID(), from: time.Now()}
	run0, wait0 := schedstat(t, p.PID(), p.PID())
	wa.born(t, p.PID())
	b, _ := birthBracket(p.PID())
	sp.born, sp.ranBefore, sp.waited = b.from.Add(time.Millisecond), run0, wait0
	time.Sleep(d)
	run1, _ := schedstat(t, p.PID(), p.PID())
	sp.to = time.Now()
	wa.stop(sp.tid)
	if err := p.Stop(time.Second); err != nil {
		t.Fatal(err)
	}
	sp.ran = (run1 - run0) / sp.to.Sub(sp.from).Seconds()
	return sp
}

// String says what the spinner did, for the logs.
func (sp spin) String() string {
	return fmt.Sprintf("born %s, ready %.3f s later having run %.3f s and waited %.3f s for a CPU; ran %.3f of the %.3f s from ready to its stop",
		sp.born.Format("15:04:05.000"), sp.from.Sub(sp.born).Seconds(), sp.ranBefore, sp.waited, sp.ran, sp.to.Sub(sp.from).Seconds())
}

// spinInside starts sampling on a new host, then a spinner in the proxy
// for d with idle time before and after; it returns the sampler, still
// sampling, its watch, and the spinner.
func spinInside(t *testing.T, d time.Duration) (*Sampler, *watch, spin) {
	h := newTestHost(t)
	wa := newWatch(h, RoleProxy)
	s, err := h.StartSampling(Plan{})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // before the spinner
	sp := spinFor(t, h, wa, RoleProxy, d)
	time.Sleep(500 * time.Millisecond) // after it
	return s, wa, sp
}

// TestSamplerThreadInsideWindow: a thread that starts after the window
// does and ends before it (3proxy's thread a connection) is charged its
// share of its own life as the polls saw it, from its birth to its last
// reading, not of the window. The share is checked against the
// scheduler's count at the sampler's polls and at the thread's birth
// (see watch). It was checked against the scheduler's count from when
// the spinner was ready to when it was stopped, within 0.1: a span that
// leaves out its start-up, where a loaded machine holds it off its CPU
// (up to 0.29 s of its first 0.42 s here, beside other work), and its
// end after its last poll.
func TestSamplerThreadInsideWindow(t *testing.T) {
	s, wa, sp := spinInside(t, 2500*time.Millisecond)
	w, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	smp := read(w)
	t.Logf("sample: %+v; polls at %v; the spinner %v", smp, offsets(w.Polls, w.From), sp)
	if life := sp.to.Sub(sp.born).Seconds(); life > 0.9*smp.Seconds {
		t.Fatalf("the spinner lived %.3f s of a %.3f s window; the test needs it shorter", life, smp.Seconds)
	}
	share, known := wa.share(t, s, w, sp.tid)
	if !known {
		return
	}
	if th := smp.Thread[RoleProxy]; th < share {
		t.Errorf("Thread[proxy] = %.3f; want at least the spinner's %.3f", th, share)
	}
	if share >= pace.Threshold && smp.Bound != results.BoundProxy {
		t.Errorf("Bound = %q with a proxy thread at %.3f; want proxy", smp.Bound, share)
	}
}

// TestSamplerStopWindow: StopWindow measures the load tool's window
// inside the sampling: here the span a spinner ran in, with idle time
// before and after. The spinner's share is checked against the
// scheduler's count at the sampler's polls inside the window (see watch);
// it was checked against the scheduler's count over the whole window,
// a span longer than that of the polls by up to a poll at each end,
// within 0.1.
func TestSamplerStopWindow(t *testing.T) {
	s, wa, sp := spinInside(t, 3*time.Second)
	w, err := s.StopWindow(sp.to, sp.to.Sub(sp.from))
	if err != nil {
		t.Fatal(err)
	}
	smp := read(w)
	t.Logf("sample: %+v; polls at %v; the spinner %v", smp, offsets(w.Polls, w.From), sp)
	if got, want := smp.Seconds, sp.to.Sub(sp.from).Seconds(); abs(got-want) > 1e-9 {
		t.Errorf("Seconds = %.3f; want the window's %.3f", got, want)
	}
	// The proxy's CPU was busy through the window: the spinner, always
	// runnable, or whoever ran there while it waited.
	if b := smp.Busy[RoleProxy]; b < 0.95 {
		t.Errorf("Busy[proxy] = %.3f over the spinner's window; want 0.95..1", b)
	}
	if share, known := wa.share(t, s, w, sp.tid); known && smp.Thread[RoleProxy] < share {
		t.Errorf("Thread[proxy] = %.3f; want at least the spinner's %.3f", smp.Thread[RoleProxy], share)
	}
	if _, err := s.Stop(); err == nil {
		t.Errorf("Stop after StopWindow = nil error; want one")
	}
}

// TestSamplerZombieThread: a process's main thread that has ended stays
// readable, its time on a CPU final, until its parent reaps it (a
// harness waiting for a CPU beside the load, or a proxy's master slow to
// wait for a worker): a reading of it then is no reading of a live
// thread, and its stamp, past the thread's end, would stretch its span
// and lower its share. The spinner here is a child its parent never
// reaps, killed after a poll has read it and left a zombie across the
// next polls: no reading of it is stamped after it ended, and its share
// is the scheduler's count over the span it was read alive in (see
// watch).
func TestSamplerZombieThread(t *testing.T) {
	h := newTestHost(t)
	wa := newWatch(h, RoleProxy)
	s, err := h.StartSampling(Plan{})
	if err != nil {
		t.Fatal(err)
	}
	parent := startHelper(t, h, RoleProxy, "zombie")
	child := 0
	for deadline := time.Now().Add(10 * time.Second); child == 0; time.Sleep(10 * time.Millisecond) {
		for _, pid := range h.PIDs(RoleProxy) {
			if pid != parent.PID() {
				child = pid
			}
		}
		if child == 0 && time.Now().After(deadline) {
			t.Fatalf("the zombie helper's child is not in the proxy's cgroup after 10 s")
		}
	}
	wa.born(t, child)
	time.Sleep(threadPeriod + threadPeriod/2) // a poll of it alive
	wa.stop(child)
	if err := unix.Kill(child, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); alive(child, child); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the killed child %d is not a zombie after 10 s", child)
		}
	}
	ended := time.Now()
	time.Sleep(2 * threadPeriod) // polls of the zombie
	if alive(child, child) || !exists(child) {
		t.Fatalf("the child %d was reaped or came back; want it a zombie through the window", child)
	}
	w, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("polls at %v; the child ended at %v", offsets(w.Polls, w.From), ended.Sub(w.From).Round(time.Millisecond))
	for _, o := range s.threads[child].obs {
		if o.t.After(ended) {
			t.Errorf("the child read %d ns at %v, after it ended at %v", o.ns, o.t.Sub(w.From).Round(time.Millisecond), ended.Sub(w.From).Round(time.Millisecond))
		}
	}
	wa.share(t, s, w, child)
}

// exists says whether process pid is there, ended or not.
func exists(pid int) bool {
	_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	return err == nil
}

func TestSamplerStopWindowOutside(t *testing.T) {
	h := newTestHost(t)
	s, err := h.StartSampling(Plan{})
	if err != nil {
		t.Fatal(err)
	}
	// A window that ended before the sampling started has no reading.
	if _, err := s.StopWindow(time.Now().Add(-time.Hour), time.Second); err == nil {
		t.Errorf("StopWindow an hour ago = nil error; want one")
	}
}

func TestPeakMemory(t *testing.T) {
	h := newTestHost(t)
	// As a session does: reset before the proxy starts.
	if err := h.ResetPeakMemory(); err != nil {
		t.Fatal(err)
	}
	before, err := h.PeakMemory()
	if err != nil {
		t.Fatal(err)
	}
	p := startHelper(t, h, RoleProxy, "alloc", "100")
	peak, err := h.PeakMemory()
	if err != nil {
		t.Fatal(err)
	}
	if peak < 100e6 {
		t.Errorf("PeakMemory = %d with 100 MB allocated in the proxy (before: %d); want at least 100e6", peak, before)
	}
	p.Stop(time.Second)
	// The next run's reset, right after the last proxy stopped.
	if err := h.ResetPeakMemory(); err != nil {
		t.Fatal(err)
	}
	if after, err := h.PeakMemory(); err != nil || after >= 100e6 {
		t.Errorf("PeakMemory after reset = %d, %v; want below 100e6", after, err)
	}
	p = startHelper(t, h, RoleProxy, "alloc", "20")
	if peak, err := h.PeakMemory(); err != nil || peak < 20e6 || peak >= 100e6 {
		t.Errorf("PeakMemory of the next run = %d, %v; want 20e6 up to below the last run's 100e6", peak, err)
	}
	p.Stop(time.Second)
}

// holdPolls makes every poll of the threads of h's samplers call hold
// halfway, as a loaded machine holds the sampler's thread.
func holdPolls(h *Host, hold func()) {
	h.sampling.pollHold = hold
}

// offCPU holds a poll's thread off the CPU for d without using it, as a
// thread waiting for a CPU is held.
func offCPU(d time.Duration) func() {
	return func() {
		ts := unix.NsecToTimespec(int64(d))
		unix.Nanosleep(&ts, nil)
	}
}

// onCPU makes a poll use d more of its thread's CPU, as a poll of many
// threads does.
func onCPU(d time.Duration) func() {
	return func() {
		for c := threadCPU(); threadCPU()-c < d; {
		}
	}
}

// idleWindow samples a planned window of length on a new host whose
// proxy sleeps, every poll calling hold, and returns the plan, the
// sampler and what StopWindow gave at its end.
func idleWindow(t *testing.T, hold func(), length time.Duration) (Plan, *Sampler, Window) {
	h := newTestHost(t)
	startHelper(t, h, RoleProxy, "sleep")
	holdPolls(h, hold)
	plan := Plan{Length: length}
	s, w := sampleWindow(t, h, plan)
	t.Logf("polls at %v after the start; cost %v; their schedule %v", offsets(w.Polls, w.Planned), w.Cost, schedule(s.sched, w.Planned))
	return plan, s, w
}

// schedule is how the loop scheduled its polls, as offsets after t0, for
// the logs.
func schedule(sched []pollRecord, t0 time.Time) []string {
	var out []string
	for _, r := range sched {
		out = append(out, fmt.Sprintf("%d: due %v made %v cost %v next %v", r.kind, r.due.Sub(t0).Round(time.Millisecond),
			r.at.Sub(t0).Round(time.Millisecond), r.cost.Round(time.Microsecond), r.next.Sub(t0).Round(time.Millisecond)))
	}
	return out
}

// checkSchedule checks the polls of sampler s, planned by plan, against
// the loop's rules, given when they were made and what they cost: the
// window's first poll due at its first edge and its last at its last
// edge, each poll between them due when the one before put it off to,
// each made no earlier than it was due, each putting off the next by its
// cost over pollBudget, at least threadPeriod and at most a third of the
// window, and no poll between the edges made within half a threadPeriod
// of the last's due time and within a third of the window of the poll
// before (see lastNear). A machine that holds the loop only makes the
// polls later, which changes none of this.
func checkSchedule(t testing.TB, s *Sampler, plan Plan) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	rs := s.sched
	if len(rs) < 2 || rs[0].kind != firstPoll || rs[len(rs)-1].kind != lastPoll {
		t.Fatalf("polls scheduled %v; want the window's first, the last, and between them", schedule(rs, s.planned))
	}
	gap := max(plan.Length/3, statPeriod)
	firstAt, lastAt := s.planned.Add(plan.edge()), s.planned.Add(plan.Length-plan.edge())
	for i, r := range rs {
		switch {
		case i == 0 && !r.due.Equal(firstAt):
			t.Errorf("the first poll due %v after the start; want at the edge, %v", r.due.Sub(s.planned), plan.edge())
		case i == len(rs)-1 && !r.due.Equal(lastAt):
			t.Errorf("the last poll due %v after the start; want %v", r.due.Sub(s.planned), plan.Length-plan.edge())
		case i > 0 && i < len(rs)-1 && (r.kind != midPoll || !r.due.Equal(rs[i-1].next)):
			t.Errorf("poll %d (kind %d) due %v after the start; want a poll between the edges, due when the one before put it off to, %v",
				i, r.kind, r.due.Sub(s.planned), rs[i-1].next.Sub(s.planned))
		}
		if r.at.Before(r.due) {
			t.Errorf("poll %d made %v before it was due", i, r.due.Sub(r.at))
		}
		if want := r.at.Add(min(max(threadPeriod, time.Duration(float64(r.cost)/pollBudget)), gap)); !r.next.Equal(want) {
			t.Errorf("poll %d of %v put the next off %v; want %v", i, r.cost, r.next.Sub(r.at), want.Sub(r.at))
		}
		if i > 0 && r.kind == midPoll && lastAt.Sub(r.at) < threadPeriod/2 && lastAt.Sub(rs[i-1].at) <= gap {
			t.Errorf("poll %d made %v before the last was due, %v after the one before; want none within %v of it", i, lastAt.Sub(r.at), r.at.Sub(rs[i-1].at), threadPeriod/2)
		}
	}
}

// TestSamplerPollsHeldOffCPU: a poll that waits for a CPU puts the next
// off by what it used of one, not by how long it waited: held 300 ms off
// the CPU, every poll, the polls of a planned window are each put off
// threadPeriod from the round that made the one before, the window's
// first and last due at its edges, and the pipes are counted at the last.
// It asserted when the polls were made, within a machine's wait of 500 ms
// of their due times, and four of them inside the window, which a machine
// that holds the sampler's thread longer fails: now the schedule is
// checked against the loop's rules given when the polls were made and
// what they cost (checkSchedule), and the 300 ms each waited is not in
// its cost.
func TestSamplerPollsHeldOffCPU(t *testing.T) {
	const hold = 300 * time.Millisecond
	plan, s, _ := idleWindow(t, offCPU(hold), 4*time.Second)
	checkSchedule(t, s, plan)
	for i, r := range s.sched {
		if r.cost >= hold {
			t.Errorf("poll %d cost %v held %v off the CPU; want the wait left out", i, r.cost, hold)
		}
	}
	if len(s.pipes) != 1 {
		t.Errorf("the pipes were counted %d times; want once, at the window's last poll", len(s.pipes))
	}
}

// TestSamplerPollsCapped: a costly poll puts the next off by its cost over
// pollBudget, but never by more than a third of the window: each poll
// using 20 ms of CPU more (20 s of budget) puts the next off by a third
// of the window. It asserted four polls, a third of the window apart
// within a machine's wait of 500 ms, which a machine that holds the
// sampler's thread longer fails; now the schedule is checked against the
// loop's rules given when the polls were made and what they cost
// (checkSchedule), each poll's cost holds its 20 ms, and the sampler's
// cost holds every poll's.
func TestSamplerPollsCapped(t *testing.T) {
	const use = 20 * time.Millisecond
	plan, s, w := idleWindow(t, onCPU(use), 4500*time.Millisecond)
	checkSchedule(t, s, plan)
	var sum time.Duration
	for i, r := range s.sched {
		sum += r.cost
		if r.cost < use {
			t.Errorf("poll %d cost %v using %v more; want at least that", i, r.cost, use)
		}
		if r.next.Sub(r.at) != plan.Length/3 {
			t.Errorf("poll %d of %v put the next off %v; want a third of the window, %v", i, r.cost, r.next.Sub(r.at), plan.Length/3)
		}
	}
	if w.Cost < sum {
		t.Errorf("cost %v with polls using %v; want at least theirs", w.Cost, sum)
	}
}

// offsets are the times ts as durations after t0, for the logs.
func offsets(ts []time.Time, t0 time.Time) []time.Duration {
	var d []time.Duration
	for _, t := range ts {
		d = append(d, t.Sub(t0).Round(time.Millisecond))
	}
	return d
}

// TestSamplerSessionWindow: a session's window, as a session samples it:
// a proxy thread spinning throughout, the client and the origin busy on
// the CPU the harness shares with them, the load tool started as the
// sampling is and its window ending when it exits, StopWindow as the
// session calls it, and every poll held 10 ms off the CPU. The proxy's
// thread and the load tool's are charged what the scheduler's count at
// the sampler's polls gives (see watch), and the proxy, its CPU never
// idle, set the pace. The shares were checked against the scheduler's
// count over the whole window, a span longer than the polls' by up to an
// edge and a poll, within 0.1 of it (0.25 where the proxy's CPU was
// shared); and two polls inside the window were required, where a tool
// slow to start (a loaded machine) puts the first before it: a thread
// read once is unknown.
func TestSamplerSessionWindow(t *testing.T) {
	h := newTestHost(t)
	proxy := startHelper(t, h, RoleProxy, "spin")
	startHelper(t, h, RoleOrigin, "load")
	holdPolls(h, offCPU(10*time.Millisecond))
	wa := newWatch(h, RoleProxy, RoleClient)
	plan := Plan{Length: 3 * time.Second}
	s, err := h.StartSampling(plan)
	if err != nil {
		t.Fatal(err)
	}
	tool := startHelper(t, h, RoleClient, "load")
	wa.born(t, tool.PID())
	time.Sleep(plan.Length)
	wa.stop(tool.PID())
	tool.Stop(time.Second)
	ended := time.Now()
	w, err := s.StopWindow(ended, plan.Length)
	if err != nil {
		t.Fatal(err)
	}
	smp := read(w)
	t.Logf("sample: %+v; polls at %v, /proc/stat read at %v", smp, offsets(w.Polls, w.From), offsets(w.Times, w.From))
	if share, known := wa.share(t, s, w, proxy.PID()); known && smp.Thread[RoleProxy] < share {
		t.Errorf("Thread[proxy] = %.3f; want at least the spinner's %.3f", smp.Thread[RoleProxy], share)
	}
	// The proxy's CPU is never idle, its spinner always runnable.
	if smp.Bound != results.BoundProxy {
		t.Errorf("Bound = %q with the proxy's CPU busy %.3f; want proxy", smp.Bound, smp.Busy[RoleProxy])
	}
	if share, known := wa.share(t, s, w, tool.PID()); known && smp.Thread[RoleClient] < share {
		t.Errorf("Thread[client] = %.3f; want at least the load tool's %.3f", smp.Thread[RoleClient], share)
	}
}

// TestSamplerThreadBornInWindow: a thread born and ended inside a planned
// window (3proxy's thread a connection) is charged its share of its own
// life as the polls saw it, its polls held off the CPU: checked against
// the scheduler's count at the sampler's polls and at the thread's birth
// (see watch). It was checked against the scheduler's count from when
// the spinner was ready to when it was stopped, within 0.1 (0.25 where
// the CPU was shared), a span that leaves out its start-up and its last
// part after the last poll.
func TestSamplerThreadBornInWindow(t *testing.T) {
	h := newTestHost(t)
	holdPolls(h, offCPU(10*time.Millisecond))
	wa := newWatch(h, RoleProxy)
	plan := Plan{Length: 4 * time.Second}
	s, err := h.StartSampling(plan)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()                // the tool's, were there one
	time.Sleep(700 * time.Millisecond) // past the window's first poll
	sp := spinFor(t, h, wa, RoleProxy, 2500*time.Millisecond)
	time.Sleep(time.Until(start.Add(plan.Length)))
	w, err := s.StopWindow(time.Now(), plan.Length)
	if err != nil {
		t.Fatal(err)
	}
	smp := read(w)
	t.Logf("sample: %+v; polls at %v; the spinner %v", smp, offsets(w.Polls, w.From), sp)
	share, known := wa.share(t, s, w, sp.tid)
	if !known {
		return
	}
	if th := smp.Thread[RoleProxy]; th < share {
		t.Errorf("Thread[proxy] = %.3f; want at least the spinner's %.3f", th, share)
	}
	if share >= pace.Threshold && smp.Bound != results.BoundProxy {
		t.Errorf("Bound = %q with a proxy thread at %.3f; want proxy", smp.Bound, share)
	}
}

// TestSamplerDeferredWindow: a tool that opens its connections before its
// window (bench mix through a slow proxy) begins it later than the
// sampling did, by longer than the window; told so with Begin, the
// sampler plans the window from then: its first and last polls are made
// no earlier than its edges, and the spinning proxy thread is charged
// what the scheduler's count at the polls gives (see watch), its polls
// held off the CPU. A window never begun has no poll of the threads. The
// polls were required inside the window, which a machine that holds the
// sampler's thread longer than the window's edge (200 ms) fails: a
// thread read once inside it is unknown. The share was checked against
// the scheduler's count over the whole window, within 0.25.
func TestSamplerDeferredWindow(t *testing.T) {
	h := newTestHost(t)
	proxy := startHelper(t, h, RoleProxy, "spin")
	holdPolls(h, offCPU(10*time.Millisecond))
	wa := newWatch(h, RoleProxy)
	plan := Plan{Warmup: 500 * time.Millisecond, Length: 2 * time.Second, Deferred: true}
	s, err := h.StartSampling(plan)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond) // the opening, longer than the window
	begun := time.Now()
	s.Begin(begun)
	s.Begin(begun.Add(time.Hour)) // a second call changes nothing
	from := begun.Add(plan.Warmup)
	time.Sleep(time.Until(from.Add(plan.Length)))
	w, err := s.StopWindow(from.Add(plan.Length), plan.Length)
	if err != nil {
		t.Fatal(err)
	}
	if !w.Planned.Equal(from) {
		t.Errorf("Planned = %v; want %v, Begin's time and the warm-up", w.Planned, from)
	}
	s.mu.Lock()
	polls := slices.Clone(s.polls)
	s.mu.Unlock()
	t.Logf("polls at %v of the window", offsets(polls, from))
	if len(polls) == 0 || polls[0].Before(from.Add(plan.edge())) {
		t.Errorf("polls at %v of the window; want the first no earlier than its edge, %v", offsets(polls, from), plan.edge())
	}
	if len(polls) < 2 || polls[len(polls)-1].Before(from.Add(plan.Length-plan.edge())) {
		t.Errorf("polls at %v of the window; want the last no earlier than %v before its end", offsets(polls, from), plan.edge())
	}
	if share, known := wa.share(t, s, w, proxy.PID()); known && read(w).Thread[RoleProxy] < share {
		t.Errorf("Thread[proxy] = %.3f; want at least the spinner's %.3f", read(w).Thread[RoleProxy], share)
	}

	never, err := h.StartSampling(plan)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(plan.Length)
	w, err = never.StopWindow(time.Now(), plan.Length-statPeriod)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Polls) != 0 {
		t.Errorf("a window never begun polled the threads at %v; want no poll", offsets(w.Polls, w.From))
	}
}

// Where taskstats does not answer, the sampler reads the threads'
// schedstat files and observes the same: two samplers of the same
// processes at once, one each way, find the same threads with the same
// roles and processes, and their readings of a thread, in the order the
// polls made them (the first through schedstat, then through taskstats,
// the last likewise), read a time on a CPU that never goes back.
func TestSamplerSchedstatAsTaskstats(t *testing.T) {
	h := newTestHost(t)
	startHelper(t, h, RoleProxy, "threads", "50")
	startHelper(t, h, RoleOrigin, "sleep")
	for deadline := time.Now().Add(10 * time.Second); threads(h, RoleProxy) < 50; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the proxy has %d threads; want 50", threads(h, RoleProxy))
		}
	}
	// A batch of taskstats held off the CPU in the middle (by a loaded
	// machine, here by the test at the last poll of its first try) has all
	// its readings left out, each of its threads read at one poll only,
	// and counted as left out (see leftOut): every thread is read at both
	// polls each way but for those. The samplers are tried again until
	// some thread was read at both polls both ways, a few times. Unheld,
	// the test wanted most threads compared, which a machine that holds
	// a batch or a read of schedstat in the middle fails; every reading
	// missing is now accounted for.
	for try := 1; ; try++ {
		compared, n := compareSchedstatTaskstats(t, h, try == 1)
		if try == 1 {
			if compared != 0 {
				t.Errorf("%d of %d threads read at both polls both ways with the last poll's taskstats held %v; want none", compared, n, 2*maxReadSpan)
			}
			continue
		}
		if compared > 0 || t.Failed() {
			break
		}
		if try == 4 {
			t.Fatalf("none of %d threads read at both polls both ways, in each of %d tries unheld; want some", n, try-1)
		}
		t.Logf("try %d: none of %d threads read at both polls both ways", try, n)
	}
}

// compareSchedstatTaskstats samples h's processes through schedstat and
// through taskstats at once, at the first and last polls (the last's
// taskstats calls held off the CPU when hold), and checks that they find
// the same threads and readings in order; it returns how many threads
// were read at both polls both ways, and of how many.
func compareSchedstatTaskstats(t *testing.T, h *Host, hold bool) (compared, n int) {
	t.Helper()
	h.sampling.schedstatOnly = true
	viaSchedstat, err := h.StartSampling(Plan{})
	h.sampling.schedstatOnly = false
	if err != nil {
		t.Fatal(err)
	}
	viaTaskstats, err := h.StartSampling(Plan{})
	if err != nil {
		viaSchedstat.Stop()
		t.Fatal(err)
	}
	if viaSchedstat.ts != nil || viaTaskstats.ts == nil {
		t.Fatalf("samplers read through taskstats: %v, %v; want false, true (as root)", viaSchedstat.ts != nil, viaTaskstats.ts != nil)
	}
	time.Sleep(threadPeriod / 2) // the first and last polls only
	wa, errA := viaSchedstat.Stop()
	if hold {
		viaTaskstats.ts.hold = offCPU(2 * maxReadSpan)
	}
	wb, errB := viaTaskstats.Stop()
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	a, b := viaSchedstat.threads, viaTaskstats.threads
	if len(a) != len(b) || len(wa.Threads) != len(wb.Threads) {
		t.Errorf("%d threads (%d in the window) through schedstat, %d (%d) through taskstats", len(a), len(wa.Threads), len(b), len(wb.Threads))
	}
	short := 0
	for tid, ta := range a {
		tb := b[tid]
		if tb == nil {
			t.Errorf("thread %d (%s, process %d) read through schedstat only", tid, ta.role, ta.pid)
			continue
		}
		if ta.role != tb.role || ta.pid != tb.pid {
			t.Errorf("thread %d: %s of process %d through schedstat, %s of %d through taskstats", tid, ta.role, ta.pid, tb.role, tb.pid)
		}
		for _, way := range []struct {
			name string
			s    *Sampler
			rec  *threadRec
		}{{"schedstat", viaSchedstat, ta}, {"taskstats", viaTaskstats, tb}} {
			if late := way.s.late[tid]; len(way.rec.obs)+late < 2 {
				t.Errorf("thread %d read %d times through %s, %d readings left out; want it read at both polls", tid, len(way.rec.obs), way.name, late)
			}
		}
		if hold && (len(tb.obs) != 1 || viaTaskstats.late[tid] != 1) {
			t.Errorf("thread %d read %d times through taskstats, %d left out, its last poll held; want once, one", tid, len(tb.obs), viaTaskstats.late[tid])
		}
		if len(ta.obs) != 2 || len(tb.obs) != 2 {
			short++ // a reading left out, as it took too long
			continue
		}
		compared++
		if ns := []uint64{ta.obs[0].ns, tb.obs[0].ns, ta.obs[1].ns, tb.obs[1].ns}; !slices.IsSorted(ns) {
			t.Errorf("thread %d read %v ns on a CPU by the polls in turn; want them in order", tid, ns)
		}
	}
	for tid, tb := range b {
		if a[tid] == nil {
			t.Errorf("thread %d (%s, process %d) read through taskstats only", tid, tb.role, tb.pid)
		}
	}
	return compared, len(a)
}

// The proxy's pipes are counted by inode, each once however many of its
// descriptors hold it (both ends, a copy far above the others), as
// os.Readlink reads them; less those it held when it became ready.
func TestProxyPipes(t *testing.T) {
	h := newTestHost(t)
	startHelper(t, h, RoleProxy, "pipes", "7")
	pids := h.PIDs(RoleProxy)
	want := map[string]bool{}
	for _, pid := range pids {
		dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
		names, err := readDirNames(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if link, err := os.Readlink(dir + n); err == nil && strings.HasPrefix(link, "pipe:") {
				want[link] = true
			}
		}
	}
	// 7 of its own, and its standard output's and error's.
	if len(want) < 7 {
		t.Fatalf("the helper holds %d pipes; want 7 at least", len(want))
	}
	if got := len(h.proxyPipes(pids, h.notedPipes(), make([]byte, dirBufSize), nil)); got != len(want) {
		t.Errorf("%d pipes counted; os.Readlink finds %d", got, len(want))
	}
	h.ProxyReady()
	if got := len(h.proxyPipes(pids, h.notedPipes(), make([]byte, dirBufSize), nil)); got != 0 {
		t.Errorf("%d pipes counted beyond those held when ready; want 0", got)
	}
}

// sampleWindow samples the window plan plans on h from now, with nothing
// else done, and returns the sampler and its window.
func sampleWindow(t *testing.T, h *Host, plan Plan) (*Sampler, Window) {
	t.Helper()
	s, err := h.StartSampling(plan)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(plan.Length)
	w, err := s.StopWindow(time.Now(), plan.Length)
	if err != nil {
		t.Fatal(err)
	}
	return s, w
}

// TestSamplerPollsInSlices: the polls of a proxy of 2000 threads and
// 4000 sockets (a thread a connection), some milliseconds of CPU each,
// hold their CPU, the client's, in slices of about pollSlice with a sleep
// between them, never in one stretch, while their readings stay whole:
// the window's first and last polls are made, the pipes are counted at
// the last, and each of the proxy's threads is read at every poll but
// for the readings left out (see leftOut). What is asserted is
// what the polls owe given what they measured: a slice rests at its
// first look at the clock past pollSlice, the work is looked at between
// pieces of one taskstats batch (or breathReads readings) at most, and a
// poll that used more CPU than a slice and a piece rested. It asserted
// the longest slice at most 6 ms, every thread read at two polls inside
// the window, and a rest a poll, which a slow machine (a piece that
// costs more) or a fast one (a poll under 2 ms) fails, and the polls
// inside the window, which a machine that holds the sampler's thread
// past its edge does not give.
func TestSamplerPollsInSlices(t *testing.T) {
	h := newTestHost(t)
	startHelper(t, h, RoleProxy, "threads", "2000")
	for deadline := time.Now().Add(30 * time.Second); threads(h, RoleProxy) < 2000; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the proxy has %d threads; want 2000", threads(h, RoleProxy))
		}
	}
	s, w := sampleWindow(t, h, Plan{Length: 3 * time.Second})
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.breath
	t.Logf("%d polls (%d in the window), %v of CPU in all; %d slices, the longest %v, %v before its last look; the longest piece %v; %d looks, %d rests",
		len(s.polls), len(w.Polls), w.Cost, b.slices, b.longest, b.before, b.piece, b.looks, b.rests)
	kinds := map[pollKind]int{}
	for _, r := range s.sched {
		kinds[r.kind]++
	}
	if kinds[firstPoll] != 1 || kinds[lastPoll] != 1 || len(s.pipes) != 1 {
		t.Fatalf("%d first polls, %d last, %d counts of the pipes; want one each", kinds[firstPoll], kinds[lastPoll], len(s.pipes))
	}
	// Each thread is read at every poll from the one that first read it,
	// but for the readings left out; the 2000 live through the window.
	proxy, short := 0, 0
	for _, th := range s.order {
		if th.role != RoleProxy || th.gone {
			continue
		}
		proxy++
		k := 0
		for k+1 < len(s.polls) && !s.polls[k+1].After(th.obs[0].t) {
			k++
		}
		if owed := len(s.polls) - k; len(th.obs)+s.late[th.tid] < owed {
			short++
			if short <= 3 {
				t.Errorf("thread %d read at %d polls, %d readings left out; it lived through %d", th.tid, len(th.obs), s.late[th.tid], owed)
			}
		}
	}
	if proxy < 2000 || short > 0 {
		t.Errorf("%d of the proxy's %d threads read at fewer polls than they lived through; want none of 2000 or more", short, proxy)
	}
	// A slice rests at its first look at the clock past pollSlice.
	if b.before >= pollSlice {
		t.Errorf("a slice ran %v before its last look at the clock; want less than %v", b.before, pollSlice)
	}
	// The work is looked at between pieces: a batch of taskstats each (or
	// breathReads readings of schedstat), at every poll.
	per := taskstatsBatch
	if s.ts == nil {
		per = breathReads
	}
	if want := len(s.polls) * 2000 / per; b.looks < want {
		t.Errorf("%d looks at the clock in %d polls of 2000 threads; want %d at least, one a piece of %d readings", b.looks, len(s.polls), want, per)
	}
	// Each slice used less than pollSlice and a piece: a poll that used
	// more rested.
	owed := 0
	for _, r := range s.sched {
		owed += int(r.cost / (pollSlice + b.piece))
	}
	if b.rests < owed {
		t.Errorf("%d rests in polls of %v of CPU each; want %d at least, one a slice of %v and a piece of %v", b.rests, costs(s.sched), owed, pollSlice, b.piece)
	}
}

// costs are the CPU times of the polls scheduled, for the logs.
func costs(sched []pollRecord) []time.Duration {
	var d []time.Duration
	for _, r := range sched {
		d = append(d, r.cost.Round(time.Microsecond))
	}
	return d
}

// watch reads the scheduler's own count of every thread of the roles
// given to it at every poll of the samplers, as the poll begins and as it
// ends (see pollWatch): each of the poll's readings of a thread was made
// between the two and reads a count between theirs. Those brackets, and
// a born thread's start time, are the reference a thread's share is
// checked against, over the span of the sampler's own readings.
type watch struct {
	h       *Host
	roles   []Role
	mu      sync.Mutex
	threads map[int]*watched // by TID
	began   time.Time        // when the poll under way began
}

// watched is what a watch knows of one thread.
type watched struct {
	pid int // its process's; 0 until a poll saw it
	// polls bracket the readings of the polls it was seen alive at, in
	// time order; open is the poll under way's.
	polls []bracket
	open  *bracket
	// birth brackets its start, when it was born since the sampling
	// began: a count of 0 then.
	birth *bracket
	// stopped is when the test began to stop it: the polls from then on
	// owe it no reading.
	stopped time.Time
}

// bracket bounds a reading: made between from and to, of a count of
// nanoseconds on a CPU between lo and hi.
type bracket struct {
	from, to time.Time
	lo, hi   uint64
}

// holds says whether reading o falls inside b.
func (b bracket) holds(o threadObs) bool {
	return !o.t.Before(b.from) && !o.t.After(b.to) && o.ns >= b.lo && o.ns <= b.hi
}

// newWatch watches the threads of h's roles rs at every poll of the
// samplers h starts from now on.
func newWatch(h *Host, rs ...Role) *watch {
	w := &watch{h: h, roles: rs, threads: map[int]*watched{}}
	h.sampling.pollWatch = w.poll
	return w
}

// born notes that process pid, one thread, was born since the sampling
// began, and brackets its birth by its start time (its stat file,
// through procfs rather than the sampler's parser).
func (w *watch) born(t *testing.T, pid int) {
	t.Helper()
	b, err := birthBracket(pid)
	if err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	th := w.thread(pid)
	th.pid, th.birth = pid, &b
}

// thread returns what w knows of thread tid. The caller holds mu.
func (w *watch) thread(tid int) *watched {
	th := w.threads[tid]
	if th == nil {
		th = &watched{}
		w.threads[tid] = th
	}
	return th
}

// stop notes that the test begins to stop thread tid now.
func (w *watch) stop(tid int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.thread(tid).stopped = time.Now()
}

// birthBracket brackets the birth of process pid's main thread: its
// start time counts in ticks since boot (rounded down), set against now
// by CLOCK_BOOTTIME, the clock it counts in; the sampler places it by
// /proc/uptime, rounded down to a hundredth of a second, so that its
// stamp lies within two ticks after the start time's, and the thread may
// have run that long by then.
func birthBracket(pid int) (bracket, error) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return bracket{}, err
	}
	st, err := p.Stat()
	if err != nil {
		return bracket{}, err
	}
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return bracket{}, err
	}
	now := time.Now()
	tick := time.Second / userHZ
	at := now.Add(-time.Duration(ts.Nano())).Add(time.Duration(st.Starttime) * tick)
	slack := 2*tick + time.Millisecond
	return bracket{from: at.Add(-time.Millisecond), to: at.Add(slack), lo: 0, hi: uint64(slack + time.Millisecond)}, nil
}

// poll is the watch's pollWatch: as a poll begins it reads every live
// thread of the roles' processes, and those it saw before wherever they
// are now, and as it ends those again. A thread that has ended, a
// process's main thread left a zombie until its parent reaps it, is
// read no more: it is not alive, and its count, final, is no share of a
// span it was not alive in. A thread gone by the poll's end may have
// been read before it ended: its bracket has no upper bound. One first
// seen as the poll ends was born (or came into a role) during it: its
// bracket spans the poll, from a count of 0.
func (w *watch) poll(at pollPoint) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if at == pollBegins {
		w.began = time.Now()
		w.each(func(pid, tid int) { w.thread(tid).pid = pid })
		for tid, th := range w.threads {
			th.open = nil
			if th.pid == 0 || !alive(th.pid, tid) {
				continue
			}
			at := time.Now()
			if ns, ok := runNS(th.pid, tid); ok {
				th.open = &bracket{from: at, lo: ns}
			}
		}
		return
	}
	w.each(func(pid, tid int) {
		if th := w.thread(tid); th.pid == 0 {
			th.pid, th.open = pid, &bracket{from: w.began}
		}
	})
	for tid, th := range w.threads {
		if th.open == nil {
			continue
		}
		ns, ok := runNS(th.pid, tid)
		th.open.to, th.open.hi = time.Now(), ns
		if !ok {
			th.open.hi = math.MaxUint64
		}
		th.polls = append(th.polls, *th.open)
		th.open = nil
	}
}

// alive says whether thread tid of process pid is there and has not
// ended: its stat file's state is neither Z nor X.
func alive(pid, tid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/stat", pid, tid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i >= 0 && i+2 < len(b) && b[i+2] != 'Z' && b[i+2] != 'X'
}

// each calls fn with every thread of the roles' processes.
func (w *watch) each(fn func(pid, tid int)) {
	for _, r := range w.roles {
		for _, pid := range w.h.PIDs(r) {
			tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
			for _, e := range tasks {
				if tid, err := strconv.Atoi(e.Name()); err == nil {
					fn(pid, tid)
				}
			}
		}
	}
}

// runNS reads a thread's time on a CPU in nanoseconds from its schedstat
// file (false once it is gone).
func runNS(pid, tid int) (uint64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/schedstat", pid, tid))
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, false
	}
	v, err := strconv.ParseUint(f[0], 10, 64)
	return v, err == nil
}

// share checks the sampler s's readings of thread tid inside window w
// against the scheduler's count at the same polls: each lies in its
// poll's bracket (or its birth's), the thread was read at every poll
// inside the window it lived through but for the readings left out (see
// leftOut), and the share harness/pace reads of them lies
// between the least and the most the brackets of its first and last
// readings allow. It returns that share, and known false where the
// thread was read fewer than twice inside the window: then its share is
// unknown, which the window says by holding one reading of it or none,
// and nothing is checked of a share.
func (wa *watch) share(t *testing.T, s *Sampler, w Window, tid int) (share float64, known bool) {
	t.Helper()
	wa.mu.Lock()
	th := wa.thread(tid)
	wa.mu.Unlock()
	inside := func(at time.Time) bool { return !at.Before(w.From) && !at.After(w.To) }
	var obs []threadObs
	var in []bracket // the bracket of each of obs
	polls := 0       // of obs, those of polls (not the birth)
	if rec := s.threads[tid]; rec != nil {
		for _, o := range rec.obs {
			if !inside(o.t) {
				continue
			}
			var b *bracket
			if th.birth != nil && o.ns == 0 && th.birth.holds(o) {
				b = th.birth
			} else {
				for i := range th.polls {
					if th.polls[i].holds(o) {
						b = &th.polls[i]
						polls++
						break
					}
				}
			}
			if b == nil {
				t.Errorf("thread %d read %d ns at %s: in no poll's bracket of the scheduler's count %v (birth %v)",
					tid, o.ns, o.t.Format("15:04:05.000000"), th.polls, th.birth)
				return 0, false
			}
			obs, in = append(obs, o), append(in, *b)
		}
	}
	owed := 0
	for _, b := range th.polls {
		if inside(b.from) && inside(b.to) && (th.stopped.IsZero() || b.to.Before(th.stopped)) {
			owed++
		}
	}
	if polls+s.late[tid] < owed {
		t.Errorf("thread %d read at %d polls inside the window, %d readings left out; it lived through %d", tid, polls, s.late[tid], owed)
	}
	if len(obs) < 2 {
		t.Logf("thread %d read %d times inside the window (%d polls it lived through): its share unknown", tid, len(obs), owed)
		return 0, false
	}
	ts, ns := make([]time.Time, len(obs)), make([]uint64, len(obs))
	for i, o := range obs {
		ts[i], ns[i] = o.t, o.ns
	}
	got := pace.Thread(ts, ns, w.From, w.To)
	first, last := in[0], in[len(in)-1]
	cpuLo, cpuHi := float64(int64(last.lo)-int64(first.hi))/1e9, float64(int64(last.hi)-int64(first.lo))/1e9
	window := w.To.Sub(w.From).Seconds()
	overLo, overHi := window, window
	if span := obs[len(obs)-1].t.Sub(obs[0].t); span >= min(pace.MinThreadSpan, w.To.Sub(w.From)/2) {
		overLo, overHi = last.from.Sub(first.to).Seconds(), last.to.Sub(first.from).Seconds()
	}
	lo, hi := min(max(cpuLo, 0)/overHi, 1), 1.0
	if overLo > 0 {
		hi = min(cpuHi/overLo, 1)
	}
	if got < lo-1e-9 || got > hi+1e-9 {
		t.Errorf("share of thread %d = %.4f; the scheduler's count at the same polls gives %.4f..%.4f (%.4f..%.4f s on a CPU over %.4f..%.4f s)",
			tid, got, lo, hi, cpuLo, cpuHi, overLo, overHi)
	}
	return got, true
}

package host

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"bench/report/results"

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
// than that less the outer interval's extra length (a tick of slack per
// CPU and end). This holds whatever else the machine runs, so it checks
// the idle roles too.
func checkBracketed(t *testing.T, h *Host, smp figures, before, after map[int]float64, outer float64) {
	t.Helper()
	for _, r := range roles {
		cpus := h.Layout().cpus(r)
		var did float64
		for _, c := range cpus {
			did += after[c] - before[c]
		}
		n := float64(len(cpus))
		slack := 2 * n / userHZ
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

	// The proxy's CPU was busy the whole window: the spinner, or whoever
	// else the machine ran there while the spinner waited.
	if b := smp.Busy[RoleProxy]; b < 0.95 || b > 1 {
		t.Errorf("Busy[proxy] = %.3f; want 0.95..1", b)
	}
	// Every role's CPU time is the kernel's. The idle roles' CPUs are
	// not asserted idle: on a small machine they are shared with
	// everything else the machine runs.
	checkBracketed(t, h, smp, before, after, outer)
	// The busiest thread is the spinner, charged what the scheduler gave
	// it. Alone on its CPU that is the whole window; on a machine shared
	// with other work (CI runs other tests at once, and every host's proxy
	// gets the same CPU) the scheduler's own count is the reference.
	ran := (run1 - run0) / smp.Seconds
	if th := smp.Thread[RoleProxy]; th > 1 || th < ran-0.05 || th > ran+0.05 {
		t.Errorf("Thread[proxy] = %.3f; the scheduler ran the spinner %.3f of the window", th, ran)
	}
	if ran >= 0.95 && smp.Thread[RoleProxy] < 0.95 {
		t.Errorf("Thread[proxy] = %.3f with the spinner running %.3f of the window; want 0.95..1", smp.Thread[RoleProxy], ran)
	}
	if ran < 0.95 {
		t.Logf("the proxy's CPU was shared: the spinner waited %.3f s for it", wait1-wait0)
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

// The 90% rule reads what the proxy was allowed: a spinner held at a
// quota of half a CPU set the pace as one with its CPU to itself does,
// and an idle proxy under a quota did not, whatever else ran on its CPU.
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
			run0, _ := schedstat(t, p.PID(), p.PID())
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
			run1, _ := schedstat(t, p.PID(), p.PID())
			ran := (run1 - run0) / smp.Seconds
			t.Logf("sample: %+v; throttled %.2f of the window; the helper ran %.3f of it", smp, smp.ThrottledShare(), ran)
			if smp.Quota != tt.quota {
				t.Errorf("Quota = %g; want %g", smp.Quota, tt.quota)
			}
			// Other work on the proxy's CPU (CI runs other tests at
			// once, and every host's proxy gets the same CPU) may keep
			// the spinner below its quota, and an idle proxy's CPU
			// busy: the scheduler's count and the CPU's say when.
			others := smp.Busy[RoleProxy] - ran // the CPU's work for others
			if tt.quota > 0 && tt.helper == "spin" {
				// Held at the quota: no more than half the CPU, and,
				// with the CPU to itself, throttled in nearly every
				// period (sharing it, the spinner may not reach its
				// quota in a period before it ends).
				if ran > tt.quota+0.05 {
					t.Errorf("the spinner ran %.3f of the window under a quota of %g", ran, tt.quota)
				}
				sh := smp.ThrottledShare()
				switch {
				case others < 0.1 && (sh < 0.9 || smp.Throttled <= 0):
					t.Errorf("throttled %d periods (%.2f of the window), %.3f s; want at least 0.9 of it",
						smp.ThrottledPeriods, sh, smp.Throttled)
				case others >= 0.1:
					t.Logf("the proxy's CPU ran other work %.2f of the window: throttled %.2f of it", others, sh)
				}
			}
			if tt.quota == 0 && (smp.ThrottledPeriods != 0 || smp.Throttled != 0) {
				t.Errorf("throttled %d periods, %.3f s without a quota; want none", smp.ThrottledPeriods, smp.Throttled)
			}
			switch got := smp.Bound == "proxy"; {
			case got == tt.bound:
			case !tt.bound && smp.Busy[RoleProxy] >= 0.9:
				t.Logf("other work kept the idle proxy's CPU busy %.2f of the window: the CPU set the pace", smp.Busy[RoleProxy])
			default:
				t.Errorf("Bound = %q; want proxy: %v", smp.Bound, tt.bound)
			}
		})
	}
}

// spinFor starts a spinner in role r, lets it run for d and stops it. It
// returns when it was ready and stopped, and the share of that span the
// scheduler ran it.
func spinFor(t *testing.T, h *Host, r Role, d time.Duration) (from, to time.Time, ran float64) {
	t.Helper()
	p := startHelper(t, h, r, "spin")
	from = time.Now()
	run0, _ := schedstat(t, p.PID(), p.PID())
	time.Sleep(d)
	run1, _ := schedstat(t, p.PID(), p.PID())
	to = time.Now()
	if err := p.Stop(time.Second); err != nil {
		t.Fatal(err)
	}
	return from, to, (run1 - run0) / to.Sub(from).Seconds()
}

// spinInside starts sampling on a new host, then a spinner in the proxy
// for d with idle time before and after; it returns the sampler, still
// sampling, and what spinFor does.
func spinInside(t *testing.T, d time.Duration) (s *Sampler, from, to time.Time, ran float64) {
	h := newTestHost(t)
	s, err := h.StartSampling(Plan{})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // before the spinner
	from, to, ran = spinFor(t, h, RoleProxy, d)
	time.Sleep(500 * time.Millisecond) // after it
	return s, from, to, ran
}

// A thread that starts after the window does and ends before it is
// charged its share of its own life, not of the window.
func TestSamplerThreadInsideWindow(t *testing.T) {
	s, from, to, ran := spinInside(t, 2500*time.Millisecond)
	w, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	smp := read(w)
	life := to.Sub(from).Seconds()
	t.Logf("sample: %+v; spinner lived %.3f s of the %.3f s window, ran %.3f of it", smp, life, smp.Seconds, ran)
	if life > 0.9*smp.Seconds {
		t.Fatalf("the spinner lived %.3f s of a %.3f s window; the test needs it shorter", life, smp.Seconds)
	}
	if th := smp.Thread[RoleProxy]; th < ran-0.1 || th > 1 {
		t.Errorf("Thread[proxy] = %.3f; the scheduler ran the spinner %.3f of its life (%.3f s of the %.3f s window)",
			th, ran, life, smp.Seconds)
	}
	if ran >= 0.95 && smp.Bound != "proxy" {
		t.Errorf("Bound = %q with a saturated proxy thread; want proxy", smp.Bound)
	}
}

// StopWindow measures the load tool's window inside the sampling: here
// the span a spinner ran in, with idle time before and after.
func TestSamplerStopWindow(t *testing.T) {
	s, from, to, ran := spinInside(t, 3*time.Second)
	w, err := s.StopWindow(to, to.Sub(from))
	if err != nil {
		t.Fatal(err)
	}
	smp := read(w)
	t.Logf("sample: %+v; spinner ran %.3f of the window", smp, ran)
	if got, want := smp.Seconds, to.Sub(from).Seconds(); abs(got-want) > 1e-9 {
		t.Errorf("Seconds = %.3f; want the window's %.3f", got, want)
	}
	// The proxy's CPU was busy through the window: the spinner, or
	// whoever ran there while it waited.
	if b := smp.Busy[RoleProxy]; b < 0.95 {
		t.Errorf("Busy[proxy] = %.3f over the spinner's window; want 0.95..1", b)
	}
	if th := smp.Thread[RoleProxy]; th < ran-0.1 || th > 1 {
		t.Errorf("Thread[proxy] = %.3f; the scheduler ran the spinner %.3f of the window", th, ran)
	}
	if _, err := s.Stop(); err == nil {
		t.Errorf("Stop after StopWindow = nil error; want one")
	}
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

// machineWait is what a loaded machine adds to when a poll is made: the
// real-time busy loop of make test-loaded holds the harness's CPU 300 ms
// at a time, and other work beside it more.
const machineWait = 500 * time.Millisecond

// holdPolls makes every poll of the threads call hold halfway, as a
// loaded machine holds the sampler's thread, until the test ends.
func holdPolls(t *testing.T, hold func()) {
	pollHold = hold
	t.Cleanup(func() { pollHold = nil })
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

// maxGap is the longest time between two polls.
func maxGap(polls []time.Time) time.Duration {
	var g time.Duration
	for i := 1; i < len(polls); i++ {
		g = max(g, polls[i].Sub(polls[i-1]))
	}
	return g
}

// idleWindow samples a planned window of length on a new host whose
// proxy sleeps, every poll calling hold, and returns the plan and what
// StopWindow gave at its end.
func idleWindow(t *testing.T, hold func(), length time.Duration) (Plan, Window) {
	h := newTestHost(t)
	startHelper(t, h, RoleProxy, "sleep")
	holdPolls(t, hold)
	plan := Plan{Length: length}
	_, w := sampleWindow(t, h, plan)
	t.Logf("polls at %v after the start; cost %v", offsets(w.Polls, w.Planned), w.Cost)
	return plan, w
}

// A poll that waits for a CPU puts the next off by what it used of one,
// not by how long it waited: held 300 ms off the CPU, every poll, the
// polls of a planned window still come threadPeriod apart, its first
// and last at its edges.
func TestSamplerPollsHeldOffCPU(t *testing.T) {
	plan, w := idleWindow(t, offCPU(300*time.Millisecond), 4*time.Second)
	if len(w.Polls) < 4 {
		t.Fatalf("%d polls in a %v window held 300 ms off the CPU each; want 4 or more", len(w.Polls), plan.Length)
	}
	if first := w.Polls[0].Sub(w.Planned); first < plan.edge() || first > plan.edge()+statPeriod+machineWait {
		t.Errorf("first poll %v after the start; want at the edge, %v", first, plan.edge())
	}
	// At the edge, or as soon after as the poll before it, held, lets.
	if last := w.Planned.Add(plan.Length).Sub(w.Polls[len(w.Polls)-1]); last > plan.edge() || last < plan.edge()-300*time.Millisecond-statPeriod-machineWait {
		t.Errorf("last poll %v before the end; want at the edge, %v", last, plan.edge())
	}
	// No poll just before the last, to hold it off its edge (see lastNear).
	if n := len(w.Polls); w.Polls[n-1].Sub(w.Polls[n-2]) < threadPeriod/2 {
		t.Errorf("a poll %v before the last; want none within %v", w.Polls[n-1].Sub(w.Polls[n-2]), threadPeriod/2)
	}
	// threadPeriod apart, plus the hold and a round of the loop; the
	// machine's own waits come on top.
	if g := maxGap(w.Polls); g > threadPeriod+300*time.Millisecond+2*statPeriod+machineWait {
		t.Errorf("polls up to %v apart; want about %v", g, threadPeriod)
	}
	if !w.PipesCounted {
		t.Errorf("the pipes were not counted in the window")
	}
}

// A costly poll puts the next off by its cost over pollBudget, but never
// by more than a third of the window.
func TestSamplerPollsCapped(t *testing.T) {
	plan, w := idleWindow(t, onCPU(20*time.Millisecond), 4500*time.Millisecond) // 10 s of budget a poll
	// The first, two put off by a third of the window each, the last.
	if len(w.Polls) != 4 {
		t.Fatalf("%d polls; want 4: the window's edges and two a third of it apart", len(w.Polls))
	}
	third := plan.Length / 3
	for i := 1; i < 3; i++ {
		if g := w.Polls[i].Sub(w.Polls[i-1]); g < third || g > third+statPeriod+machineWait {
			t.Errorf("poll %d came %v after the one before; want a third of the window, %v", i, g, third)
		}
	}
	if w.Cost < 4*20*time.Millisecond {
		t.Errorf("cost %v with 4 polls using 20 ms each; want at least 80 ms", w.Cost)
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

// A session's window, as a session samples it: a proxy thread saturated
// throughout, the client and the origin busy on the CPU the harness
// shares with them, the load tool started as the sampling is and its
// window ending when it exits, StopWindow as the session calls it, and
// every poll held 10 ms off the CPU. The proxy's thread reads saturated
// and the proxy set the pace.
func TestSamplerSessionWindow(t *testing.T) {
	h := newTestHost(t)
	proxy := startHelper(t, h, RoleProxy, "spin")
	startHelper(t, h, RoleOrigin, "load")
	holdPolls(t, offCPU(10*time.Millisecond))
	plan := Plan{Length: 3 * time.Second}
	s, err := h.StartSampling(plan)
	if err != nil {
		t.Fatal(err)
	}
	tool := startHelper(t, h, RoleClient, "load")
	run0, _ := schedstat(t, proxy.PID(), proxy.PID())
	tool0, _ := schedstat(t, tool.PID(), tool.PID())
	time.Sleep(plan.Length)
	run1, _ := schedstat(t, proxy.PID(), proxy.PID())
	tool1, _ := schedstat(t, tool.PID(), tool.PID())
	tool.Stop(time.Second)
	ended := time.Now()
	w, err := s.StopWindow(ended, plan.Length)
	if err != nil {
		t.Fatal(err)
	}
	smp := read(w)
	ran := (run1 - run0) / plan.Length.Seconds()
	t.Logf("sample: %+v; polls at %v, /proc/stat read at %v; the proxy's spinner ran %.3f of the window",
		smp, offsets(w.Polls, w.Planned), offsets(w.Times, w.Planned), ran)
	if len(w.Polls) < 2 {
		t.Fatalf("%d polls inside the window; want its first and last at least", len(w.Polls))
	}
	// Alone on its CPU (as in CI, where the tests run one package at a
	// time) the spinner is saturated, and so is its share of any part of
	// the window. Sharing it, its share of the part the polls saw differs
	// from that of the window by what the sharing changed between them.
	switch th := smp.Thread[RoleProxy]; {
	case ran >= 0.9 && th < 0.9:
		t.Errorf("Thread[proxy] = %.3f; the scheduler ran the spinner %.3f of the window; want 0.9 or more", th, ran)
	case ran < 0.9:
		t.Logf("the proxy's CPU was shared: the spinner ran %.3f of the window", ran)
		if th < ran-0.25 {
			t.Errorf("Thread[proxy] = %.3f; the scheduler ran the spinner %.3f of the window", th, ran)
		}
	}
	if smp.Bound != results.BoundProxy {
		t.Errorf("Bound = %q with the proxy's thread saturated; want proxy", smp.Bound)
	}
	// The load tool shares its CPU with the origin and the harness: the
	// scheduler's count is the reference.
	if th, ran := smp.Thread[RoleClient], (tool1-tool0)/plan.Length.Seconds(); th < ran-0.1 || th > ran+0.1 {
		t.Errorf("Thread[client] = %.3f; the scheduler ran the load tool %.3f of the window", th, ran)
	}
}

// A thread born and ended inside a planned window (3proxy's thread a
// connection) is charged its share of its own life, its polls held off
// the CPU.
func TestSamplerThreadBornInWindow(t *testing.T) {
	h := newTestHost(t)
	holdPolls(t, offCPU(10*time.Millisecond))
	plan := Plan{Length: 4 * time.Second}
	s, err := h.StartSampling(plan)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()                // the tool's, were there one
	time.Sleep(700 * time.Millisecond) // past the window's first poll
	from, to, ran := spinFor(t, h, RoleProxy, 2500*time.Millisecond)
	time.Sleep(time.Until(start.Add(plan.Length)))
	w, err := s.StopWindow(time.Now(), plan.Length)
	if err != nil {
		t.Fatal(err)
	}
	smp := read(w)
	t.Logf("sample: %+v; polls at %v; the spinner lived %v to %v, ran %.3f of its life", smp, offsets(w.Polls, w.Planned),
		from.Sub(w.Planned).Round(time.Millisecond), to.Sub(w.Planned).Round(time.Millisecond), ran)
	// Alone on its CPU the spinner is saturated over any part of its
	// life. Sharing it (other work on the machine), its share of the part
	// the polls saw differs from that of its whole life by what the
	// sharing changed between them.
	slack := 0.1
	if ran < 0.9 {
		t.Logf("the proxy's CPU was shared: the spinner ran %.3f of its life", ran)
		slack = 0.25
	}
	if th := smp.Thread[RoleProxy]; th < ran-slack || th > 1 {
		t.Errorf("Thread[proxy] = %.3f; the scheduler ran the spinner %.3f of its life", th, ran)
	}
	if ran >= 0.95 && smp.Bound != results.BoundProxy {
		t.Errorf("Bound = %q with a saturated proxy thread; want proxy", smp.Bound)
	}
}

// TestSamplerDeferredWindow: a tool that opens its connections before its
// window (bench mix through a slow proxy) begins it later than the
// sampling did, by longer than the window; told so with Begin, the
// sampler makes the window's first and last polls inside it and reads
// the saturated proxy thread, its polls held off the CPU. A window never
// begun has no poll of the threads.
func TestSamplerDeferredWindow(t *testing.T) {
	h := newTestHost(t)
	proxy := startHelper(t, h, RoleProxy, "spin")
	holdPolls(t, offCPU(10*time.Millisecond))
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
	time.Sleep(time.Until(from))
	run0, _ := schedstat(t, proxy.PID(), proxy.PID())
	time.Sleep(time.Until(from.Add(plan.Length)))
	run1, _ := schedstat(t, proxy.PID(), proxy.PID())
	w, err := s.StopWindow(from.Add(plan.Length), plan.Length)
	if err != nil {
		t.Fatal(err)
	}
	if !w.Planned.Equal(from) {
		t.Errorf("Planned = %v; want %v, Begin's time and the warm-up", w.Planned, from)
	}
	if len(w.Polls) < 2 || w.Polls[0].Before(from) || w.Polls[len(w.Polls)-1].After(from.Add(plan.Length)) {
		t.Fatalf("polls at %v of the window; want its first and last inside it", offsets(w.Polls, from))
	}
	// As in TestSamplerSessionWindow: the scheduler's count is the
	// reference where the spinner shares its CPU.
	ran := (run1 - run0) / plan.Length.Seconds()
	if th := read(w).Thread[RoleProxy]; th < min(ran, 0.9)-0.25 || (ran >= 0.9 && th < 0.9) {
		t.Errorf("Thread[proxy] = %.3f; the scheduler ran the spinner %.3f of the window", th, ran)
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
	// its readings left out, each of its threads read at one poll only:
	// the samplers are tried again, a few times.
	for try := 1; ; try++ {
		compared, n := compareSchedstatTaskstats(t, h, try == 1)
		if try == 1 {
			if compared != 0 {
				t.Errorf("%d of %d threads read at both polls both ways with the last poll's taskstats held %v; want none", compared, n, 2*maxReadSpan)
			}
			continue
		}
		if compared >= n/2 || t.Failed() {
			break
		}
		if try == 4 {
			t.Fatalf("%d of %d threads read at both polls both ways, in each of %d tries unheld; want most", compared, n, try-1)
		}
		t.Logf("try %d: %d of %d threads read at both polls both ways", try, compared, n)
	}
}

// compareSchedstatTaskstats samples h's processes through schedstat and
// through taskstats at once, at the first and last polls (the last's
// taskstats calls held off the CPU when hold), and checks that they find
// the same threads and readings in order; it returns how many threads
// were read at both polls both ways, and of how many.
func compareSchedstatTaskstats(t *testing.T, h *Host, hold bool) (compared, n int) {
	t.Helper()
	schedstatOnly = true
	viaSchedstat, err := h.StartSampling(Plan{})
	schedstatOnly = false
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
		batchHold = offCPU(2 * maxReadSpan)
	}
	wb, errB := viaTaskstats.Stop()
	batchHold = nil
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
	if got := len(h.proxyPipes(pids, true, make([]byte, dirBufSize), nil)); got != len(want) {
		t.Errorf("%d pipes counted; os.Readlink finds %d", got, len(want))
	}
	h.ProxyReady()
	if got := len(h.proxyPipes(pids, true, make([]byte, dirBufSize), nil)); got != 0 {
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
// every poll of the schedule is made, the pipes are counted and the
// proxy's threads are all read.
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
	longest, rests, read := s.breath.longest, s.breath.rests, 0
	for _, th := range s.order {
		if th.role == RoleProxy && len(th.obs) >= 2 {
			read++
		}
	}
	s.mu.Unlock()
	t.Logf("%d polls, %v of CPU in all; the longest slice %v, %d rests; %d of the proxy's threads read twice or more",
		len(w.Polls), w.Cost, longest, rests, read)
	if len(w.Polls) < 2 || !w.PipesCounted {
		t.Fatalf("%d polls, pipes counted %v; want the window's first and last, and its pipes", len(w.Polls), w.PipesCounted)
	}
	if read < 2000 {
		t.Errorf("%d of the proxy's threads read at two polls or more; want its 2000", read)
	}
	// A poll of these threads takes several slices: one at least beside
	// each poll's last.
	if rests < len(w.Polls) {
		t.Errorf("%d rests in %d polls; want a poll of 2000 threads cut into slices", rests, len(w.Polls))
	}
	// A slice ends at the first look at the clock past pollSlice: 32
	// readings later at most, or a batch of taskstats, and the read of
	// cgroup.procs, which cannot be cut.
	if longest > 3*pollSlice {
		t.Errorf("a poll held its CPU %v at a stretch; want about %v at most", longest, pollSlice)
	}
}

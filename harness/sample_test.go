package harness

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
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

// busiestThread returns the thread of pid with the most CPU time.
func busiestThread(t *testing.T, pid int) int {
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		t.Fatal(err)
	}
	best, bestRun := 0, -1.0
	for _, e := range entries {
		tid, _ := strconv.Atoi(e.Name())
		if run, _ := schedstat(t, pid, tid); run > bestRun {
			best, bestRun = tid, run
		}
	}
	return best
}

func TestSamplerChargesTheProxy(t *testing.T) {
	h := newTestHost(t)
	p := startHelper(t, h, RoleProxy, "spin")
	// It may run only on the proxy's CPUs.
	status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.PID()))
	want := "Cpus_allowed_list:\t" + formatCPUList(h.Layout().Proxy)
	if !strings.Contains(string(status), want+"\n") {
		t.Errorf("spinner's status lacks %q:\n%s", want, status)
	}
	time.Sleep(200 * time.Millisecond) // let the spinner's thread settle as the busiest
	tid := busiestThread(t, p.PID())
	run0, wait0 := schedstat(t, p.PID(), tid)
	s, err := h.StartSampling()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // the measured window
	smp, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	run1, wait1 := schedstat(t, p.PID(), tid)
	t.Logf("sample: %+v; spinner ran %.3f s and waited %.3f s", smp, run1-run0, wait1-wait0)

	// The proxy's CPU was busy the whole window: the spinner, or whoever
	// else the machine ran there while the spinner waited.
	if b := smp.Busy[RoleProxy]; b < 0.95 || b > 1 {
		t.Errorf("Busy[proxy] = %.3f; want 0.95..1", b)
	}
	if c := smp.CPU[RoleProxy]; c < 0.95*smp.Seconds*float64(len(h.Layout().Proxy)) {
		t.Errorf("CPU[proxy] = %.3f s in a %.3f s window; want nearly all of it", c, smp.Seconds)
	}
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

func TestPeakMemory(t *testing.T) {
	h := newTestHost(t)
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
	if err := h.ResetPeakMemory(); err != nil {
		t.Fatal(err)
	}
	if after, err := h.PeakMemory(); err != nil || after >= 100e6 {
		t.Errorf("PeakMemory after reset = %d, %v; want below 100e6", after, err)
	}
}

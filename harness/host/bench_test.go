package host

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"bench/internal/testenv"
)

// cpuTime returns this process's user+system CPU time.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSampler measures what observing the roles through a 10 s
// window costs, as a share of one CPU (goal: under 0.5%): the sampler's
// own threads (%cpu; the time Window.Cost counts) and the whole test
// process (%cpu-process, with the Go runtime's own upkeep). In "helpers"
// each role runs a helper process (a Go program: 5 to 10 threads); in
// "proxy-2000-threads" the proxy's holds 2000 threads and 4000 sockets,
// as 3proxy does with the 2000-connection loads (a thread a connection),
// its threads read through taskstats (as root); "-schedstat" reads them
// as where taskstats does not answer, through their schedstat files.
// The window is planned as a session plans it, and every poll the
// schedule makes is checked to have been made: the window's first and
// last, and one at least every third of the window.
// go test -run XXX -bench Sampler -benchtime 1x ./harness/host/
func BenchmarkSampler(b *testing.B) {
	for _, c := range []struct {
		name      string
		proxy     []string
		schedstat bool
	}{
		{"helpers", helperArgv("sleep"), false},
		{"proxy-2000-threads", helperArgv("threads", "2000"), false},
		{"proxy-2000-threads-schedstat", helperArgv("threads", "2000"), true},
	} {
		b.Run(c.name, func(b *testing.B) {
			h := newTestHost(b)
			for _, r := range roles {
				argv := helperArgv("sleep")
				if r == RoleProxy {
					argv = c.proxy
				}
				p, err := h.Start(r, ProcSpec{Argv: argv, Env: []string{helperEnv + "=1"}})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { p.Stop(time.Second) })
			}
			// the proxy's threads all started before the window
			want := 2000
			if c.name == "helpers" {
				want = 1
			}
			for deadline := time.Now().Add(30 * time.Second); threads(h, RoleProxy) < want; time.Sleep(100 * time.Millisecond) {
				if time.Now().After(deadline) {
					b.Fatalf("the proxy has %d threads; want %d", threads(h, RoleProxy), want)
				}
			}
			if !c.schedstat {
				ts, err := openTaskstats()
				if err != nil {
					b.Skipf("taskstats does not answer here (%v): the -schedstat case measures what the sampler does", err)
				}
				ts.close()
			}
			h.sampling.schedstatOnly = c.schedstat
			defer func() { h.sampling.schedstatOnly = false }()
			benchmarkSampler(b, h)
			b.ReportMetric(float64(threads(h, RoleProxy)), "proxy-threads")
		})
	}
}

func benchmarkSampler(b *testing.B, h *Host) {
	const window = 10 * time.Second
	var own, used time.Duration
	polls := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c0 := cpuTime(b)
		plan := Plan{Length: window}
		s, err := h.StartSampling(plan)
		if err != nil {
			b.Fatal(err)
		}
		time.Sleep(window)
		w, err := s.StopWindow(time.Now(), window)
		if err != nil {
			b.Fatal(err)
		}
		used += cpuTime(b) - c0
		own += w.Cost
		polls += len(w.Polls)
		checkSchedule(b, s, plan)
	}
	b.ReportMetric(100*own.Seconds()/(window.Seconds()*float64(b.N)), "%cpu")
	b.ReportMetric(100*used.Seconds()/(window.Seconds()*float64(b.N)), "%cpu-process")
	b.ReportMetric(float64(polls)/float64(b.N), "polls")
	b.ReportMetric(float64(len(h.PIDs(RoleClient))+len(h.PIDs(RoleProxy))+len(h.PIDs(RoleOrigin))), "procs")
}

// BenchmarkTopology measures setting up and tearing down a host: three
// namespaces, two veth pairs, cgroups (goal: under 0.5 s together).
// go test -run '^$' -bench Topology -benchtime 20x ./harness/host/
func BenchmarkTopology(b *testing.B) {
	testenv.NeedRoot(b, "makes network namespaces and cgroups")
	layout := testLayout(b)
	var up, down time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		h, err := New(Config{Prefix: testPrefix(b), Layout: layout})
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := h.Close(); err != nil {
			b.Fatal(err)
		}
		up, down = up+t1.Sub(t0), down+time.Since(t1)
	}
	b.ReportMetric(up.Seconds()*1000/float64(b.N), "ms-up")
	b.ReportMetric(down.Seconds()*1000/float64(b.N), "ms-down")
}

// threads counts the threads of a role's processes.
func threads(h *Host, r Role) int {
	n := 0
	for _, pid := range h.PIDs(r) {
		tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		n += len(tasks)
	}
	return n
}

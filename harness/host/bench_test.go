package host

import (
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

// BenchmarkSampler measures what following the roles' threads through a
// 10 s window costs, as a share of one CPU (goal: under 0.5%). Each role
// runs a helper process (a Go program: 5 to 10 threads).
// go test -run '^$' -bench Sampler -benchtime 1x ./harness/host/
func BenchmarkSampler(b *testing.B) {
	h := newTestHost(b)
	for _, r := range roles {
		p, err := h.Start(r, ProcSpec{Argv: helperArgv("sleep"), Env: []string{helperEnv + "=1"}})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { p.Stop(time.Second) })
	}
	const window = 10 * time.Second
	var used time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c0 := cpuTime(b)
		s, err := h.StartSampling()
		if err != nil {
			b.Fatal(err)
		}
		time.Sleep(window)
		if _, err := s.Stop(); err != nil {
			b.Fatal(err)
		}
		used += cpuTime(b) - c0
	}
	b.ReportMetric(100*used.Seconds()/(window.Seconds()*float64(b.N)), "%cpu")
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

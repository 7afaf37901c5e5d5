package harness

import (
	"math"
	"testing"
	"time"

	"bench/harness/host"
	"bench/results"
	"bench/scenarios"
)

// A window's observations read as a run's figures: the busy of each
// role's CPUs between the readings nearest its bounds, scaled to it; the
// busiest thread's share of its span; the bound; the pipes only where
// they were counted in the window.
func TestFiguresOf(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	w := host.Window{
		From: at(0), To: at(2),
		// readings 0.05 s and 1.95 s in: the proxy's one CPU busy 1.9 s
		// of 1.9, the client's two 0.95 s.
		Times: []time.Time{at(0.05), at(1.95)},
		Ticks: map[host.Role][]uint64{host.RoleProxy: {1000, 1190}, host.RoleClient: {500, 595}, host.RoleOrigin: {7, 7}},
		CPUs:  map[host.Role]int{host.RoleProxy: 1, host.RoleClient: 2, host.RoleOrigin: 1},
		Threads: []host.Thread{
			{Role: host.RoleProxy, T: []time.Time{at(0.2), at(1.8)}, NS: []uint64{0, 1.2e9}},
			{Role: host.RoleProxy, T: []time.Time{at(0.2), at(1.8)}, NS: []uint64{0, 0.4e9}},
			{Role: host.RoleClient, T: []time.Time{at(0.2), at(1.8)}, NS: []uint64{0, 0.8e9}},
		},
	}
	f := figuresOf(w)
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	if !near(f.seconds, 2) || !near(f.busy[host.RoleProxy], 1) || !near(f.cpu[host.RoleProxy], 2) ||
		!near(f.busy[host.RoleClient], 0.25) || !near(f.cpu[host.RoleClient], 1) || f.busy[host.RoleOrigin] != 0 {
		t.Errorf("figuresOf: seconds %v, busy %v, cpu %v; want 2, proxy 1 and client 0.25, proxy 2 and client 1", f.seconds, f.busy, f.cpu)
	}
	if !near(f.thread[host.RoleProxy], 0.75) || !near(f.thread[host.RoleClient], 0.5) {
		t.Errorf("figuresOf: threads %v; want proxy 0.75 (its busiest), client 0.5", f.thread)
	}
	if f.bound != results.BoundProxy {
		t.Errorf("figuresOf: bound %q; want proxy (its CPU saturated)", f.bound)
	}
	var row results.Row
	x := measured{m: scenarios.Measurement{Seconds: 2, Requests: 10}, sample: f}
	x.fill(&row, RunSpec{})
	if row.HasPipes {
		t.Errorf("a window whose pipes were not counted in it: HasPipes; want unknown")
	}
	w.Pipes, w.PipesCounted = 4, true
	x.sample = figuresOf(w)
	if x.fill(&row, RunSpec{}); !row.HasPipes || row.SplicePipes != 4 {
		t.Errorf("pipes counted in the window: HasPipes %v, SplicePipes %d; want 4", row.HasPipes, row.SplicePipes)
	}
}

// A window merged from hosts of their own reads each role's busy over
// its own host's readings (RoleTimes), not another host's times.
func TestFiguresOfHosts(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	w := host.Window{
		From: at(0), To: at(2),
		// the proxy's host read at 0.05 and 1.95 s, the client's at 0.1
		// and 1.1 s: the client's one CPU busy 0.5 s of its 1 s
		Ticks:     map[host.Role][]uint64{host.RoleProxy: {1000, 1190}, host.RoleClient: {500, 550}},
		RoleTimes: map[host.Role][]time.Time{host.RoleProxy: {at(0.05), at(1.95)}, host.RoleClient: {at(0.1), at(1.1)}},
		CPUs:      map[host.Role]int{host.RoleProxy: 1, host.RoleClient: 1},
	}
	f := figuresOf(w)
	if math.Abs(f.busy[host.RoleProxy]-1) > 1e-9 || math.Abs(f.busy[host.RoleClient]-0.5) > 1e-9 {
		t.Errorf("busy %v; want the proxy 1 and the client 0.5, each over its own host's readings", f.busy)
	}
}

// Two client hosts sharing a load: the client's CPU time is both's, its
// busy share the busier's, which sets the pace when it is at its limit.
func TestFiguresOfClientHosts(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	times := []time.Time{at(0), at(2)}
	w := host.Window{
		From: at(0), To: at(2),
		// the proxy half busy; the first client host 30% of its 2 CPUs,
		// the second 99% of its one
		Ticks:     map[host.Role][]uint64{host.RoleProxy: {0, 100}, host.RoleClient: {0, 120}},
		RoleTimes: map[host.Role][]time.Time{host.RoleProxy: times, host.RoleClient: times},
		CPUs:      map[host.Role]int{host.RoleProxy: 1, host.RoleClient: 2},
		Clients:   []host.Series{{Times: times, Ticks: []uint64{0, 120}, CPUs: 2}, {Times: times, Ticks: []uint64{0, 198}, CPUs: 1}},
	}
	f := figuresOf(w)
	if math.Abs(f.busy[host.RoleClient]-0.99) > 1e-9 || math.Abs(f.cpu[host.RoleClient]-(1.2+1.98)) > 1e-9 || f.bound != "client" {
		t.Errorf("client busy %.3f, CPU %.3f s, bound %q; want the busier host's 0.99, both's 3.18 s, and the client setting the pace",
			f.busy[host.RoleClient], f.cpu[host.RoleClient], f.bound)
	}
}

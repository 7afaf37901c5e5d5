package host

import (
	"reflect"
	"testing"
	"time"
)

// A host's window, its clock a second ahead of this one's, is merged on
// this machine's clock: only the roles the host holds, each with its own
// readings' times; the proxy's host's pipes and quota.
func TestWindowMerge(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	proxyHost := &placed{roles: []Role{RoleProxy}, offset: time.Second}
	clientHost := &placed{roles: []Role{RoleClient}}
	m := Window{Ticks: map[Role][]uint64{}, CPUs: map[Role]int{}, RoleTimes: map[Role][]time.Time{}}
	m.merge(proxyHost, Window{From: at(1), To: at(3), Times: []time.Time{at(1.05), at(2.95)},
		Ticks: map[Role][]uint64{RoleProxy: {10, 200}, RoleClient: {1, 1}}, CPUs: map[Role]int{RoleProxy: 1, RoleClient: 4},
		Threads: []Thread{{Role: RoleProxy, T: []time.Time{at(1.2)}, NS: []uint64{5}}, {Role: RoleClient, T: []time.Time{at(1.2)}, NS: []uint64{9}}},
		Pipes:   3, PipesCounted: true, Polls: []time.Time{at(1.2)}}, false)
	m.merge(clientHost, Window{From: at(0), To: at(2), Times: []time.Time{at(0.1), at(1.9)},
		Ticks: map[Role][]uint64{RoleClient: {7, 9}}, CPUs: map[Role]int{RoleClient: 2}, Polls: []time.Time{at(0.1)}}, false)
	if !reflect.DeepEqual(m.RoleTimes[RoleProxy], []time.Time{at(0.05), at(1.95)}) || !reflect.DeepEqual(m.RoleTimes[RoleClient], []time.Time{at(0.1), at(1.9)}) {
		t.Errorf("role times %v; want the proxy's readings a second earlier, the client's as read", m.RoleTimes)
	}
	if m.CPUs[RoleClient] != 2 || !reflect.DeepEqual(m.Ticks[RoleClient], []uint64{7, 9}) {
		t.Errorf("the client's CPUs %d, ticks %v; want its own host's, 2 and [7 9]", m.CPUs[RoleClient], m.Ticks[RoleClient])
	}
	if len(m.Threads) != 1 || m.Threads[0].Role != RoleProxy || !m.Threads[0].T[0].Equal(at(0.2)) {
		t.Errorf("threads %+v; want the proxy's alone, at 0.2 s", m.Threads)
	}
	if m.Pipes != 3 || !m.PipesCounted || !m.From.Equal(at(0)) || !m.To.Equal(at(2)) || !reflect.DeepEqual(m.Polls, []time.Time{at(0.1), at(0.2)}) {
		t.Errorf("pipes %d %v, window %v to %v, polls %v; want 3 counted, 0 to 2 s, polls in order", m.Pipes, m.PipesCounted, m.From, m.To, m.Polls)
	}
}

// Where two client hosts share the load, each one's readings are kept
// (Window.Clients) and the first's are the client's.
func TestWindowMergeClients(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	m := Window{Ticks: map[Role][]uint64{}, CPUs: map[Role]int{}, RoleTimes: map[Role][]time.Time{}}
	for i, ticks := range [][]uint64{{1, 5}, {2, 90}} {
		h := &placed{roles: []Role{RoleClient}, offset: time.Duration(i) * time.Second}
		m.merge(h, Window{From: at(1), To: at(3), Times: []time.Time{at(1), at(3)}, Ticks: map[Role][]uint64{RoleClient: ticks}, CPUs: map[Role]int{RoleClient: 1 + i}}, true)
	}
	if len(m.Clients) != 2 || !reflect.DeepEqual(m.Clients[1], Series{Times: []time.Time{at(0), at(2)}, Ticks: []uint64{2, 90}, CPUs: 2}) ||
		!reflect.DeepEqual(m.Ticks[RoleClient], []uint64{1, 5}) || m.CPUs[RoleClient] != 1 {
		t.Errorf("clients %+v, the client's ticks %v on %d CPUs; want both hosts' readings, the second's a second earlier, the first's the client's", m.Clients, m.Ticks[RoleClient], m.CPUs[RoleClient])
	}
}

// A CPU mask as sysfs writes it, read as a list of CPUs.
func TestMaskCPUs(t *testing.T) {
	for mask, want := range map[string]string{"0\n": "none", "00000000,0000000f\n": "0-3", "1,00000000": "32", "a": "1,3"} {
		if got := maskCPUs(mask); got != want {
			t.Errorf("maskCPUs(%q) = %q; want %q", mask, got, want)
		}
	}
}

// The host's clock is read by the ping of the shortest round trip: on a
// loaded machine a burst's pings all waited for a CPU (100 ms and more)
// while one of the heartbeat's before went through in 0.4 ms.
func TestBestClock(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)
	samples := []clockSample{
		{sent: t0, rtt: 400 * time.Microsecond, offset: 3 * time.Millisecond},
		{sent: t0.Add(time.Second), rtt: 180 * time.Millisecond, offset: -87 * time.Millisecond},
		{sent: t0.Add(2 * time.Second), rtt: 120 * time.Millisecond, offset: 60 * time.Millisecond},
	}
	if b := bestClock(samples); b.rtt != 400*time.Microsecond || b.offset != 3*time.Millisecond {
		t.Errorf("bestClock = %+v; want the 0.4 ms ping's offset, 3 ms", b)
	}
}

// A path the session gives is taken beneath the run directory only: a
// name that starts with two dots is a name, ".." is not.
func TestRelPath(t *testing.T) {
	for _, c := range []struct {
		path string
		self bool
		want string // "" for refused
	}{
		{"/run/b-run-1/x/y", false, "x/y"},
		{"/run/b-run-1/..x", false, "..x"},
		{"/run/b-run-1/x/../../etc", false, ""},
		{"/run/b-run-1", false, ""},
		{"/run/b-run-1", true, "."},
		{"x/y", false, ""},
		{"/etc/passwd", false, ""},
	} {
		got, err := relPath("/run/b-run-1", c.path, c.self)
		if got != c.want || (err == nil) != (c.want != "") {
			t.Errorf("relPath(%q, self %v) = %q, %v; want %q", c.path, c.self, got, err, c.want)
		}
	}
	if !beneathAny("/r/a/b", []string{"/r/x", "/r/a"}) || beneathAny("/r/ab", []string{"/r/a"}) || beneathAny("/r/a/../b", []string{"/r/a"}) {
		t.Error("beneathAny: want /r/a/b beneath /r/a, /r/ab and /r/b not")
	}
}

package host

import (
	"math"
	"os"
	"slices"
	"testing"
	"time"
)

func TestParseStatBusy(t *testing.T) {
	stat := []byte("cpu  81184 360 78525 143884 721 0 71352 0 0 0\n" +
		"cpu0 38064 133 38734 74665 133 0 37257 0 0 0\n" +
		"cpu1 43119 226 39791 69218 588 5 34095 7 100 0\n" +
		"intr 22748859 0 0 0\n" +
		"softirq 40003521 0 274889\n")
	busy := make([]uint64, 1)
	if err := parseStatBusy(stat, map[int]int{1: 0}, busy); err != nil {
		t.Fatal(err)
	}
	// user+nice+system+irq+softirq+steal; idle, iowait and guest (in
	// user already) left out.
	if want := uint64(43119 + 226 + 39791 + 5 + 34095 + 7); busy[0] != want {
		t.Errorf("busy of cpu1 = %d; want %d", busy[0], want)
	}
	if err := parseStatBusy(stat, map[int]int{2: 0}, busy); err == nil {
		t.Errorf("parseStatBusy with cpu2 missing = nil; want an error")
	}
	if err := parseStatBusy([]byte("cpu0 1 2\n"), map[int]int{0: 0}, busy); err == nil {
		t.Errorf("parseStatBusy of a short line = nil; want an error")
	}
}

func TestThreadBusy(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	obs := func(pairs ...float64) []threadObs {
		var o []threadObs
		for i := 0; i < len(pairs); i += 2 {
			o = append(o, threadObs{at(pairs[i]), uint64(pairs[i+1] * 1e9)})
		}
		return o
	}
	tests := []struct {
		name   string
		obs    []threadObs
		lo, hi float64
		want   float64
	}{
		// Alive through a 3 s window, saturated.
		{"whole window", obs(0, 5, 1, 6, 2, 7, 3, 8), 0, 3, 1},
		// Born 0.3 s in, ended between the polls at 3 and 3.5: its share
		// of the span it was seen in, not of the window.
		{"born and ended inside", obs(0.3, 0, 1, 0.7, 2, 1.7, 3, 2.7), 0, 3.5, 1},
		// Half busy over its span.
		{"half busy", obs(0.5, 0, 1.5, 0.5, 2.5, 1), 0, 3, 0.5},
		// Seen over 0.2 s only: charged over the window.
		{"short span", obs(2.8, 0, 3, 0.2), 0, 4, 0.05},
		// Only the observations inside [lo, hi] count: busy before 2 s,
		// idle after.
		{"restricted", obs(0, 0, 1, 1, 2, 2, 3, 2, 4, 2), 2, 4, 0},
		{"restricted busy part", obs(0, 0, 1, 1, 2, 2, 3, 2, 4, 2), 0, 2, 1},
		{"no observation inside", obs(0, 0, 1, 1), 2, 4, 0},
	}
	for _, tt := range tests {
		window := at(tt.hi).Sub(at(tt.lo))
		if got := threadBusy(tt.obs, at(tt.lo), at(tt.hi), window); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: threadBusy = %.4f; want %.4f", tt.name, got, tt.want)
		}
	}
}

// BenchmarkProcStat measures one read and parse of /proc/stat, as the
// sampler does every statPeriod.
// go test -run '^$' -bench ProcStat ./harness/host/
func BenchmarkProcStat(b *testing.B) {
	online, err := OnlineCPUs()
	if err != nil {
		b.Fatal(err)
	}
	s := &Sampler{cpuIndex: map[int]int{}, statBuf: make([]byte, 4096)}
	for i, c := range online {
		s.cpus = append(s.cpus, c)
		s.cpuIndex[c] = i
	}
	if s.stat, err = os.Open("/proc/stat"); err != nil {
		b.Fatal(err)
	}
	defer s.stat.Close()
	for b.Loop() {
		if _, err := s.readStat(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPerSecond: a role's busy fraction each second of a window, from
// the readings nearest inside each second; a second without two
// readings ends the series.
func TestPerSecond(t *testing.T) {
	h := &Host{layout: Layout{Client: []int{0, 1}, Proxy: []int{2}, Origin: []int{3}}}
	s := &Sampler{h: h, cpuIndex: map[int]int{0: 0, 1: 1, 2: 2, 3: 3}}
	t0 := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	var snaps []cpuSnap
	busy := make([]uint64, 4)
	// 2.5 s of readings 100 ms apart: in the first second the proxy's CPU
	// is busy throughout (10 ticks a reading), the client's two half the
	// time between them, the origin idle; in the second the proxy idles.
	for i := 0; i <= 25; i++ {
		snaps = append(snaps, cpuSnap{t: t0.Add(time.Duration(i) * statPeriod), busy: slices.Clone(busy)})
		if i < 10 {
			busy[2] += 10
		}
		busy[0] += 10
	}
	got := s.perSecond(snaps, t0, snaps[len(snaps)-1].t)
	want := map[Role][]float64{
		RoleProxy:  {1, 0, 0},
		RoleClient: {0.5, 0.5, 0.5},
		RoleOrigin: {0, 0, 0},
	}
	for r, w := range want {
		if len(got[r]) != len(w) {
			t.Fatalf("perSecond: %s %v; want %v", r, got[r], w)
		}
		for i := range w {
			if math.Abs(got[r][i]-w[i]) > 1e-9 {
				t.Errorf("perSecond: %s second %d = %v; want %v", r, i, got[r][i], w[i])
			}
		}
	}
	if got := s.perSecond(snaps[:1], t0, t0.Add(time.Second)); len(got) != 0 {
		t.Errorf("perSecond of one reading = %v; want nothing", got)
	}
}

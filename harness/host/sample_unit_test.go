package host

import (
	"os"
	"testing"
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
	if err := parseStatBusy([]byte("cpu0 1 2 3 4 5 6 x 8\n"), map[int]int{0: 0}, busy); err == nil {
		t.Errorf("parseStatBusy of a time not a number = nil; want an error")
	}
	// It runs every statPeriod: no garbage for the collector.
	index := map[int]int{1: 0}
	if n := testing.AllocsPerRun(100, func() { parseStatBusy(stat, index, busy) }); n > 0 {
		t.Errorf("parseStatBusy allocates %v times; want none", n)
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

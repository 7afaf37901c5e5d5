package mix

import (
	"context"
	"testing"
	"time"

	"bench/harness/mix/mixtest"
	"bench/scenarios"
)

// BenchmarkExchange is the engine's cost of an exchange straight to a
// loopback origin (the origin's own work included), the answers drawn
// from the mix: go test ./harness/mix -bench Exchange -benchmem.
func BenchmarkExchange(b *testing.B) {
	o := mixtest.StartOrigin(b, mixtest.None)
	m, err := New(Config{Mode: Relay, Proxy: o.Addr, Origin: o.Addr, Conns: 64, Active: 64,
		Duration: time.Second, Timeout: 5 * time.Second, OpenParallel: 16})
	if err != nil {
		b.Fatal(err)
	}
	m.Open(context.Background())
	m.window, m.end = time.Now(), time.Now().Add(time.Hour)
	b.SetBytes(int64(scenarios.MixMeanSize()))
	b.ReportAllocs()
	b.SetParallelism(16) // 32 exchanges at a time on 2 CPUs
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.exchange(<-m.idle, time.Time{})
		}
	})
	b.StopTimer()
	m.reopening.Wait()
	if r := m.result(); r.Errors != (scenarios.MixErrors{}) {
		b.Fatalf("errors %+v", r.Errors)
	}
	for i := range m.slots {
		if c := m.slots[i].conn; c != nil {
			c.Close()
		}
	}
}

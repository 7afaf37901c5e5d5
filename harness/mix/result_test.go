package mix

import (
	"testing"
	"time"
)

// TestLatencies: latencies kept in the slots, more than a batch in one,
// fewer in another, and one recorded at once, are all in
// the result's histograms, the answered ones in theirs too, each at its
// value.
func TestLatencies(t *testing.T) {
	m, err := New(Config{Mode: Relay, Proxy: "127.0.0.1:1", Origin: "127.0.0.1:1", Conns: 3, Active: 3,
		Duration: time.Second, Timeout: time.Second, OpenParallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	// Two batches and one more in the first slot, five in the second,
	// none in the third.
	const first, n = 2*latBatch + 1, 2*latBatch + 6
	var answered int64
	for i := range n {
		whole := reply(i%4 != 0)
		if whole == gotAnswer {
			answered++
		}
		s := &m.slots[0]
		if i >= first {
			s = &m.slots[1]
		}
		m.recordOn(s, time.Duration(i+1)*time.Millisecond, whole)
	}
	m.record(5*time.Second, noAnswer)
	r := m.result()
	if r.Due != n+1 || m.okHist.TotalCount() != answered {
		t.Errorf("%d due, %d answered; want %d and %d", r.Due, m.okHist.TotalCount(), n+1, answered)
	}
	if r.P999Ms < 4990 || r.OkP999Ms < float64(n-1) || r.OkP999Ms > float64(n)*1.001 {
		t.Errorf("p99.9 %.1f ms, answered %.1f ms; want the one of 5 s, and the longest answered, %d ms", r.P999Ms, r.OkP999Ms, n)
	}
}

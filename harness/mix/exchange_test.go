package mix

import (
	"context"
	"testing"
	"time"
)

// TestExchangeAllocs: a kept-alive exchange to the mix's origin, every
// byte checked, allocates nothing, the origin's part included.
func TestExchangeAllocs(t *testing.T) {
	addr := serveOrigin(t)
	m, err := New(Config{Mode: Relay, Proxy: addr, Origin: addr, Conns: 1, Active: 1,
		Duration: time.Second, Timeout: 5 * time.Second, OpenParallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	m.work = checkContent // no half-close: a new connection allocates
	m.Open(context.Background())
	m.window, m.end = time.Now(), time.Now().Add(time.Hour)
	if a := testing.AllocsPerRun(200, func() { m.exchange(<-m.idle, time.Time{}) }); a != 0 {
		t.Errorf("%v allocations an exchange; want none", a)
	}
	if r := m.result(); r.Exchanges != 201 || r.Errors.Failed()+r.Errors.Timeout > 0 {
		t.Errorf("%d exchanges, errors %+v; want 201 and none", r.Exchanges, r.Errors)
	}
	m.slots[0].conn.Close()
}

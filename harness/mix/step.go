package mix

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"bench/scenarios"
)

// ErrClosedLoop is the error of a step of a mix in a closed loop: a
// sweep's steps are fixed rates.
var ErrClosedLoop = errors.New("a closed loop (exchanges at a time) has no rate to step")

// Step runs one window of a sweep from start (zero: now) over the
// connections m keeps open (Open them first): the warm-up and the window
// run at w's rate, as RunFrom runs them, and the window's figures are
// returned. The connections stay open for the next step; Close closes
// them. Those closed at the window's end (the exchanges that half-closed
// or failed near it give theirs back closed) are opened again as the
// step returns, while its caller takes its figures, so that the next
// step begins, as the first, with every connection open, and when it is
// asked for: with a zero start it waits for them first (Ready), outside
// its window and warm-up; a caller that gives a start has had them
// opened before it chose it.
func (m *Mix) Step(ctx context.Context, start time.Time, w scenarios.MixWindow) (scenarios.MixResult, error) {
	if m.cfg.Active > 0 {
		return scenarios.MixResult{}, ErrClosedLoop
	}
	if err := w.Check(); err != nil {
		return scenarios.MixResult{}, err
	}
	if start.IsZero() {
		m.Ready(ctx)
	}
	m.cfg.Rate, m.cfg.Offset, m.cfg.Warmup, m.cfg.Duration = w.Rate, w.Offset, w.Warmup, w.Duration
	m.resetFigures()
	if start.IsZero() {
		start = time.Now()
	}
	r := m.measure(ctx, start)
	rctx, stop := context.WithCancel(context.Background())
	m.refilled, m.stopRefill = make(chan struct{}), stop
	go func(done chan struct{}) {
		defer close(done)
		m.refill(rctx)
	}(m.refilled)
	return r, nil
}

// Ready waits for the connections being opened again since the last
// step, then opens those closed since by the proxy. It never fails: a
// connection that does not open is the step's to count.
func (m *Mix) Ready(ctx context.Context) error {
	m.finishRefill()
	m.refill(ctx)
	return nil
}

// finishRefill waits for the connections being opened again after the
// last step, all of them.
func (m *Mix) finishRefill() {
	if m.refilled == nil {
		return
	}
	<-m.refilled
	m.stopRefill()
	m.refilled, m.stopRefill = nil, nil
}

// abandonRefill gives up the connections still being opened again after
// the last step (Close), once those being dialled have ended.
func (m *Mix) abandonRefill() {
	if m.refilled == nil {
		return
	}
	m.stopRefill()
	m.finishRefill()
}

// refill opens again the connections closed, so that a step begins with
// every connection it can open. Between windows every slot is idle.
func (m *Mix) refill(ctx context.Context) {
	var closed []*slot
	for i := range m.slots {
		if m.slots[i].conn == nil {
			closed = append(closed, &m.slots[i])
		}
	}
	m.dialAll(ctx, closed)
	m.opened = m.open()
}

// resetFigures zeroes the window's figures for the next window.
func (m *Mix) resetFigures() {
	for _, c := range []*atomic.Int64{&m.exchanges, &m.bytes, &m.halfClosed, &m.late, &m.dropped,
		&m.halfCloseFailed, &m.reconnects, &m.unfinished} {
		c.Store(0)
	}
	for i := range m.errs {
		m.errs[i].Store(0)
	}
	m.seconds = make([]perSecond, windowSeconds(m.cfg.Duration))
	m.mu.Lock()
	defer m.mu.Unlock()
	m.hist.Reset()
	m.okHist.Reset()
}

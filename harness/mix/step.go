package mix

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"bench/scenarios"
)

// Window is one fixed-rate window of a sweep, run over the connections a
// mix keeps open from one window to the next: the rate is what changes.
type Window struct {
	Rate float64 // exchanges a second over all the connections
	// Offset shifts this process's schedule, as Config.Offset (Share).
	Offset time.Duration
	// Warmup is load at Rate before the measured window of Duration.
	Warmup, Duration time.Duration
}

// A step's rate is within these, exchanges a second: an exchange every
// 1000 s at the least, where the intervals of the schedule still fit a
// time.Duration, and ten million a second at the most, far above what
// one machine's connections carry, where an infinite rate would have
// every exchange due at the start.
const (
	minStepRate = 1e-3
	maxStepRate = 1e7
)

// Check reports what is wrong with w.
func (w Window) Check() error {
	switch {
	case !(w.Rate >= minStepRate && w.Rate <= maxStepRate):
		return fmt.Errorf("a step at %g exchanges a second: want %g to %g", w.Rate, minStepRate, maxStepRate)
	case w.Duration <= 0 || w.Warmup < 0 || w.Offset < 0:
		return fmt.Errorf("a step of %v after %v, offset by %v: want a positive window", w.Duration, w.Warmup, w.Offset)
	}
	return nil
}

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
func (m *Mix) Step(ctx context.Context, start time.Time, w Window) (scenarios.MixResult, error) {
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
	m.awaitRefill(true)
	m.refill(ctx)
	return nil
}

// awaitRefill waits for the connections being opened again after the
// last step, all of them when whole is set, or gives the rest up (Close).
func (m *Mix) awaitRefill(whole bool) {
	if m.refilled == nil {
		return
	}
	if !whole {
		m.stopRefill()
	}
	<-m.refilled
	m.stopRefill()
	m.refilled, m.stopRefill = nil, nil
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

// stepVerb begins the line that asks for a step, on a stepping bench mix's
// standard input (bench mix --steps) and on a split mix's workers'.
const stepVerb = "step"

// FormatStep is the line that asks for step w from start (zero: as soon
// as it is read): "step RATE WARMUP DURATION [START OFFSET]", the start in
// Unix nanoseconds.
func FormatStep(w Window, start time.Time) string {
	line := fmt.Sprintf("%s %s %s %s", stepVerb, strconv.FormatFloat(w.Rate, 'f', -1, 64), w.Warmup, w.Duration)
	if !start.IsZero() || w.Offset > 0 {
		var ns int64
		if !start.IsZero() {
			ns = start.UnixNano()
		}
		line += fmt.Sprintf(" %d %s", ns, w.Offset)
	}
	return line
}

// ParseStep reads a line of FormatStep; ok is false for a line that does
// not ask for a step.
func ParseStep(line string) (w Window, start time.Time, ok bool, err error) {
	f := strings.Fields(line)
	if len(f) == 0 || f[0] != stepVerb {
		return w, start, false, nil
	}
	bad := func(what string) error {
		return fmt.Errorf("step %q: %s; want %q", strings.TrimSpace(line), what, "step RATE WARMUP DURATION [START_NS OFFSET]")
	}
	if len(f) != 4 && len(f) != 6 {
		return w, start, true, bad(fmt.Sprintf("%d fields", len(f)))
	}
	if w.Rate, err = strconv.ParseFloat(f[1], 64); err != nil {
		return w, start, true, bad("the rate is not a number")
	}
	if w.Warmup, err = time.ParseDuration(f[2]); err != nil {
		return w, start, true, bad("the warm-up is not a duration")
	}
	if w.Duration, err = time.ParseDuration(f[3]); err != nil {
		return w, start, true, bad("the window is not a duration")
	}
	if len(f) == 6 {
		ns, err := strconv.ParseInt(f[4], 10, 64)
		if err != nil {
			return w, start, true, bad("the start is not Unix nanoseconds")
		}
		if ns != 0 {
			start = time.Unix(0, ns)
		}
		if w.Offset, err = time.ParseDuration(f[5]); err != nil {
			return w, start, true, bad("the offset is not a duration")
		}
	}
	if err := w.Check(); err != nil {
		return w, start, true, fmt.Errorf("step %q: %w", strings.TrimSpace(line), err)
	}
	return w, start, true, nil
}

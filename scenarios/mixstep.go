package scenarios

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// MixWindow is one fixed-rate window of a sweep, run over the connections a
// bench mix keeps open from one window to the next: the rate is what
// changes. A stepping bench mix (--steps) reads it, a line each, as
// FormatMixStep writes it, and so do a split mix's workers.
type MixWindow struct {
	Rate float64 // exchanges a second over all the connections
	// Offset shifts this process's schedule, as bench mix's split gives each of its processes.
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
func (w MixWindow) Check() error {
	switch {
	case !(w.Rate >= minStepRate && w.Rate <= maxStepRate):
		return fmt.Errorf("a step at %g exchanges a second: want %g to %g", w.Rate, minStepRate, maxStepRate)
	case w.Duration <= 0 || w.Warmup < 0 || w.Offset < 0:
		return fmt.Errorf("a step of %v after %v, offset by %v: want a positive window", w.Duration, w.Warmup, w.Offset)
	}
	return nil
}

// stepVerb begins the line that asks for a step, on a stepping bench mix's
// standard input (bench mix --steps) and on a split mix's workers'.
const stepVerb = "step"

// FormatMixStep is the line that asks for step w from start (zero: as soon
// as it is read): "step RATE WARMUP DURATION [START OFFSET]", the start in
// Unix nanoseconds.
func FormatMixStep(w MixWindow, start time.Time) string {
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

// ParseMixStep reads a line of FormatMixStep; ok is false for a line that does
// not ask for a step.
func ParseMixStep(line string) (w MixWindow, start time.Time, ok bool, err error) {
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

package mix

import (
	"context"
	"encoding/binary"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// sleeper waits for the exchanges' due times at a fixed rate. Go's timers
// wake a process that has nothing else to do at the next millisecond (its
// poller waits in whole milliseconds), so at 3000 exchanges a second one
// process would send three at once every millisecond. A timerfd, read
// through the same poller, wakes it within the kernel's timer slack
// (50 µs) instead.
type sleeper struct {
	f   *os.File // the timerfd; nil: Go's timers alone
	fd  int      // its descriptor, set through: f.Fd() would make it blocking
	buf [8]byte
}

// newSleeper makes a sleeper, falling back on Go's timers where the
// kernel has no timerfd.
func newSleeper() *sleeper {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return &sleeper{}
	}
	return &sleeper{f: os.NewFile(uintptr(fd), "timerfd"), fd: fd}
}

// close releases the timerfd.
func (s *sleeper) close() {
	if s.f != nil {
		s.f.Close()
	}
}

// coarse is how long before t Go's timers may sleep: the rest is the
// timerfd's.
const coarse = 5 * time.Millisecond

// until sleeps until t, or returns false when ctx ends first.
func (s *sleeper) until(ctx context.Context, t time.Time) bool {
	if s.f == nil || time.Until(t) > coarse {
		if !sleepUntil(ctx, t.Add(-coarse)) || s.f == nil {
			return sleepUntil(ctx, t)
		}
	}
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(d.Nanoseconds())}
	if err := unix.TimerfdSettime(s.fd, 0, &spec, nil); err != nil {
		return sleepUntil(ctx, t)
	}
	if n, err := s.f.Read(s.buf[:]); err != nil || n != 8 || binary.NativeEndian.Uint64(s.buf[:]) == 0 {
		return sleepUntil(ctx, t)
	}
	return ctx.Err() == nil
}

package host

import (
	"bytes"
	"fmt"
	"strconv"
)

// cpu.stat of the proxy's cgroup: its throttling under a CPU quota, read
// with each /proc/stat reading, so that the periods in which the kernel
// held the proxy at its quota are counted over the same window.

// throttle is one reading of the proxy's cpu.stat.
type throttle struct {
	periods   uint64 // CFS periods counted (those the cgroup had work in)
	throttled uint64 // periods in which it was held at its quota
	ns        uint64 // how long it was held, in nanoseconds
}

// readThrottle reads the proxy's cpu.stat through its descriptor.
func (s *Sampler) readThrottle() (throttle, error) {
	n, err := s.cpuStat.ReadAt(s.thrBuf, 0)
	if n == 0 && err != nil {
		return throttle{}, fmt.Errorf("read %s: %w", s.cpuStat.Name(), err)
	}
	t, err := parseThrottle(s.thrBuf[:n])
	if err != nil {
		return t, fmt.Errorf("%s: %w", s.cpuStat.Name(), err)
	}
	return t, nil
}

// parseThrottle reads the throttling of a cgroup from its cpu.stat: v1's
// nr_periods, nr_throttled and throttled_time (ns), or v2's with
// throttled_usec.
func parseThrottle(b []byte) (throttle, error) {
	var t throttle
	found := 0
	for line := range bytes.SplitSeq(b, []byte{'\n'}) {
		key, val, ok := bytes.Cut(line, []byte{' '})
		if !ok {
			continue
		}
		var dst *uint64
		scale := uint64(1)
		switch string(key) {
		case "nr_periods":
			dst = &t.periods
		case "nr_throttled":
			dst = &t.throttled
		case "throttled_time":
			dst = &t.ns
		case "throttled_usec":
			dst, scale = &t.ns, 1000
		default:
			continue
		}
		v, err := strconv.ParseUint(string(bytes.TrimSpace(val)), 10, 64)
		if err != nil {
			return t, fmt.Errorf("%q: %w", line, err)
		}
		*dst = v * scale
		found++
	}
	if found < 3 {
		return t, fmt.Errorf("want nr_periods, nr_throttled and throttled_time or throttled_usec; got %q", b)
	}
	return t, nil
}

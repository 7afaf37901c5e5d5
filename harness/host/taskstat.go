package host

import (
	"bytes"
	"errors"
	"fmt"
)

// A thread's files under /proc/PID/task/TID: schedstat, three numbers,
// the first its time on a CPU in nanoseconds, which the sampler reads at
// every poll through a descriptor kept open; and stat, slow for the
// kernel to make (about 30 us a thread here), read once for a thread
// first seen inside the window, for its start time.

// parseSchedstat reads a thread's time on a CPU, in nanoseconds, from its
// schedstat file: the first of its numbers.
func parseSchedstat(b []byte) (uint64, bool) {
	v, k := parseUint(b)
	return v, k > 0 && (k == len(b) || b[k] == ' ')
}

// parseState reads a task's state from its stat line: the field after
// the name in parentheses ('R', 'S', 'Z' for one ended and not yet
// reaped, ...).
func parseState(b []byte) (byte, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0, errors.New("stat: no state")
	}
	return b[i+2], nil
}

// parseStartTime reads a thread's start time, in ticks since boot, from
// its stat line: field 22, counting from the pid; the fields after the
// name (in parentheses, and which may hold anything) start at the state,
// field 3.
func parseStartTime(b []byte) (uint64, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("stat: no command name")
	}
	b = b[i+1:]
	for field := 3; ; field++ {
		b = bytes.TrimLeft(b, " ")
		if len(b) == 0 {
			return 0, fmt.Errorf("stat: %d fields", field-1)
		}
		if field == 22 {
			v, n := parseUint(b)
			if n == 0 {
				return 0, fmt.Errorf("stat: start time %.20q", b)
			}
			return v, nil
		}
		j := bytes.IndexByte(b, ' ')
		if j < 0 {
			return 0, fmt.Errorf("stat: %d fields", field)
		}
		b = b[j:]
	}
}

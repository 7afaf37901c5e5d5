package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A listener accepts connections in the kernel before its process takes
// them: a TCP probe is answered as soon as the socket listens, while the
// process may still be setting up the threads that will serve it
// (haproxy binds first and makes its thread's wake-up pipe after). The
// process has taken the probes' connections once its listeners' accept
// queues are empty, which /proc/net/tcp and tcp6 give (rx_queue of a
// listening socket).

// tcpTables are the kernel's files of TCP sockets of a namespace, as its
// threads see them.
var tcpTables = []string{"/proc/thread-self/net/tcp", "/proc/thread-self/net/tcp6"}

// tcpListen is the state of a listening socket in /proc/net/tcp.
const tcpListen = "0A"

// parseAcceptQueues reads a /proc/net/tcp or tcp6 table (name for
// errors) and adds to queued, by local port, the connections waiting in
// the accept queues of its listening sockets; a port with listeners and
// none waiting is there at 0.
func parseAcceptQueues(data []byte, name string, queued map[int]int) error {
	for i, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		f := strings.Fields(string(line))
		if i == 0 || len(f) < 5 || f[3] != tcpListen {
			continue // the header, or not a listener
		}
		_, port, ok := strings.Cut(f[1], ":")
		_, rx, ok2 := strings.Cut(f[4], ":")
		p, err := strconv.ParseUint(port, 16, 16)
		n, err2 := strconv.ParseUint(rx, 16, 32)
		if !ok || !ok2 || err != nil || err2 != nil {
			return fmt.Errorf("%s:%d: %q: want local_address ADDR:PORT and tx_queue:rx_queue in hex", name, i+1, line)
		}
		queued[int(p)] += int(n)
	}
	return nil
}

// WaitAccepted waits until the listeners of role's namespace on the
// ports of addrs (host:port) have taken every connection made to them
// (their accept queues empty): after WaitReady, until the process has
// taken the probes' connections, so that it runs whatever it makes
// before its first. A port with no listener in the namespace is not
// waited for. It fails when deadline passes or ctx ends first.
func (h *Host) WaitAccepted(ctx context.Context, role Role, addrs []string, deadline time.Duration) error {
	if p := h.remotes[role]; p != nil {
		return p.wait(ctx, "WaitAccepted", role, addrs, deadline)
	}
	ctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	var ports []int
	for _, a := range addrs {
		_, port, err := net.SplitHostPort(a)
		p, perr := strconv.Atoi(port)
		if err != nil || perr != nil {
			return fmt.Errorf("wait for %q to be accepted: not host:port", a)
		}
		ports = append(ports, p)
	}
	delay := 2 * time.Millisecond
	for {
		queued := map[int]int{}
		err := h.in(role, func() error {
			for _, t := range tcpTables {
				data, err := os.ReadFile(t)
				if err != nil {
					return fmt.Errorf("read %s: %w", t, err)
				}
				if err := parseAcceptQueues(data, t, queued); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		var waiting []string
		for i, p := range ports {
			if queued[p] > 0 {
				waiting = append(waiting, fmt.Sprintf("%s (%d)", addrs[i], queued[p]))
			}
		}
		if len(waiting) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("connections to %s in %s not taken by the process within %v", strings.Join(waiting, ", "), role, deadline)
		case <-time.After(delay):
		}
		delay = min(2*delay, 100*time.Millisecond)
	}
}

// WaitReady dials each of addrs (host:port) over TCP from inside role
// from's namespace until it accepts, and returns as soon as all have; it
// fails when deadline passes or ctx ends first, naming what did not
// answer and why.
func (h *Host) WaitReady(ctx context.Context, from Role, addrs []string, deadline time.Duration) error {
	if p := h.remotes[from]; p != nil {
		errs := make([]error, len(h.placed))
		var wg sync.WaitGroup
		for i, p := range h.placed {
			if slices.Contains(p.roles, from) {
				wg.Go(func() { errs[i] = p.wait(ctx, "WaitReady", from, addrs, deadline) })
			}
		}
		wg.Wait()
		return errors.Join(errs...)
	}
	ctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	pending := append([]string(nil), addrs...)
	delay := 2 * time.Millisecond
	var last error
	for {
		var still []string
		for _, a := range pending {
			err := h.in(from, func() error {
				d := net.Dialer{Timeout: 250 * time.Millisecond}
				c, err := d.DialContext(ctx, "tcp", a)
				if err != nil {
					return err
				}
				return c.Close()
			})
			if err != nil {
				last = err
				still = append(still, a)
			}
		}
		if pending = still; len(pending) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not accepting from %s within %v: %w", strings.Join(pending, ", "), from, deadline, last)
		case <-time.After(delay):
		}
		delay = min(2*delay, 100*time.Millisecond)
	}
}

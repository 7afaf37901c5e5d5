// Package accept is the accept loop of bench's own servers (bench mix
// --serve, bench mix tls): a goroutine per connection, and at the end
// every connection closed and every handler returned.
package accept

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// Serve hands every connection ln accepts to handle, in a goroutine of
// its own, until ctx ends; then it closes ln and the connections still
// open, and returns once every handle has returned. It returns nil when
// ctx ended, or the error that stopped Accept; an Accept that fails for
// want of descriptors or memory (outOfResources) is tried again, after
// 5 ms doubled up to a second while it goes on failing, and said on the
// standard error. handle need not close its connection.
func Serve(ctx context.Context, ln net.Listener, handle func(net.Conn)) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	stop := context.AfterFunc(ctx, func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	defer stop()
	var wait time.Duration // since the last accept that failed for want of a resource
	for {
		c, err := ln.Accept()
		if err != nil && ctx.Err() == nil && outOfResources(err) {
			// Out of descriptors (or buffers) for now: the connections
			// that end free them, so wait and accept again, as net/http
			// does. A server that returned here stopped the session:
			// the origin's TLS end ran out at 9950 connections through
			// no proxy when an overloaded step's timed-out connections
			// were opened again before the old ones had closed.
			wait = min(max(2*wait, 5*time.Millisecond), time.Second)
			fmt.Fprintf(os.Stderr, "accept: %v; again in %v\n", err, wait)
			select {
			case <-time.After(wait):
			case <-ctx.Done():
			}
			continue
		}
		if err != nil {
			wg.Wait()
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		wait = 0
		mu.Lock()
		conns[c] = true
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			handle(c)
			c.Close()
			mu.Lock()
			delete(conns, c)
			mu.Unlock()
		}()
	}
}

// outOfResources says whether an accept failed for want of something
// the connections that end give back: descriptors (EMFILE, ENFILE),
// buffers or memory.
func outOfResources(err error) bool {
	for _, e := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

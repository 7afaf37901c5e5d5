// Package nettest is the tests' loopback plumbing: a server on a fresh
// port of 127.0.0.1 for the life of a test, an echo that passes a
// half-close on, and a wait for listeners to accept.
package nettest

import (
	"context"
	"io"
	"net"
	"testing"
	"time"
)

// Serve listens on a fresh port of 127.0.0.1, runs serve on the listener
// until the test ends (its context is then cancelled, and Serve's cleanup
// waits for it to return), and returns the address.
func Serve(t testing.TB, serve func(ctx context.Context, ln net.Listener)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		serve(ctx, ln)
	}()
	t.Cleanup(func() { cancel(); <-done })
	return ln.Addr().String()
}

// Echo sends back what c sends, shuts its sending side when c has shut
// its own, and closes c.
func Echo(c net.Conn) {
	defer c.Close()
	io.Copy(c, c)
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
}

// WaitAccepting returns once every address accepts TCP, or fails the test
// after 10 s.
func WaitAccepting(t testing.TB, addrs ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, a := range addrs {
		for {
			c, err := net.DialTimeout("tcp", a, time.Second)
			if err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s does not accept: %v", a, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

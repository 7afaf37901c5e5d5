package accept

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
)

// failing is a listener whose first accepts fail with err.
type failing struct {
	net.Listener
	fails int
	err   error
}

func (l *failing) Accept() (net.Conn, error) {
	if l.fails > 0 {
		l.fails--
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", l.err)}
	}
	return l.Listener.Accept()
}

// TestServeOutOfDescriptors: accepts that fail for want of descriptors
// do not stop the server, which accepts and serves the next connection;
// another error stops it, and Serve returns it.
func TestServeOutOfDescriptors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, &failing{Listener: ln, fails: 4, err: syscall.EMFILE}, func(c net.Conn) {
			io.Copy(c, c)
		})
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 4)
	if _, err := io.ReadFull(c, b); err != nil || string(b) != "ping" {
		t.Fatalf("echo after 4 accepts out of descriptors: %q, %v; want ping", b, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve = %v once its context ended; want nil", err)
	}

	ln2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln2.Close()
	err = Serve(context.Background(), &failing{Listener: ln2, fails: 1, err: syscall.EINVAL}, func(net.Conn) {})
	if !errors.Is(err, syscall.EINVAL) {
		t.Errorf("Serve = %v after an accept failed with EINVAL; want that error", err)
	}
}

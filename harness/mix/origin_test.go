package mix

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"

	"bench/scenarios"
)

// serveOrigin runs Serve on a fresh port of 127.0.0.1 until the test ends.
func serveOrigin(t *testing.T) string {
	t.Helper()
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// TestServeHalfClosed: the origin writes the largest answer whole to a
// client that shut its sending side right after the request, as nginx
// does not.
func TestServeHalfClosed(t *testing.T) {
	addr := serveOrigin(t)
	answers := scenarios.MixAnswers()
	big := answers[len(answers)-1]
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Two kept-alive exchanges, then one half-closed, by absolute URI as
	// an HTTP proxy would not send but a relay may.
	req := "GET " + answers[0].Path + " HTTP/1.1\r\nHost: o\r\n\r\n" +
		"POST " + big.Path + " HTTP/1.1\r\nHost: o\r\nContent-Length: 5\r\n\r\nhello" +
		"GET http://" + addr + big.Path + " HTTP/1.1\r\nHost: o\r\nConnection: close\r\n\r\n"
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	for i, a := range []scenarios.MixAnswer{answers[0], big, big} {
		_, closing, n, err := readAnswerHead(r)
		if err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil || !bytes.Equal(body, scenarios.OriginAnswer(a.Size)) {
			t.Fatalf("answer %d: %d bytes, %v; want the %d of %s", i, n, err, a.Size, a.Path)
		}
		if closing != (i == 2) {
			t.Errorf("answer %d: Connection: close %v", i, closing)
		}
	}
	if rest, err := io.ReadAll(r); err != nil || len(rest) > 0 {
		t.Errorf("after the last answer: %q, %v; want the end", rest, err)
	}
}

// readAnswerHead reads an answer's head as the origin reads a request's.
func readAnswerHead(r *bufio.Reader) (status string, closing bool, body int, err error) {
	var q request
	if err := q.read(r); err != nil {
		return "", false, 0, err
	}
	if !bytes.HasPrefix(q.path, []byte("200")) {
		return "", false, 0, io.ErrUnexpectedEOF
	}
	return string(q.path), q.closing, q.body, nil
}

// TestServeMix: the engine straight to the origin, as the no-proxy
// baseline runs it, half-closes included: no error.
func TestServeMix(t *testing.T) {
	addr := serveOrigin(t)
	r := run(t, config(Relay, addr, addr))
	if r.Errors != (scenarios.MixErrors{}) || r.Exchanges < 300 || r.HalfClosed == 0 {
		t.Errorf("%d exchanges, %d half-closed, errors %+v; want hundreds, some and none", r.Exchanges, r.HalfClosed, r.Errors)
	}
}

// TestRequestRead: the origin reads a request's path, by absolute URI
// too, its Connection: close and its body's length, and refuses a bad
// request line or length.
func TestRequestRead(t *testing.T) {
	for _, c := range []struct {
		head    string
		path    string
		closing bool
		body    int
		bad     bool
	}{
		// the mix's keep-alive request
		{head: "GET /mix/1k HTTP/1.1\r\nHost: o\r\n\r\n", path: "/mix/1k"},
		// a half-closed one, as an HTTP proxy passes it on
		{head: "GET /mix/8k HTTP/1.1\r\nHost: o\r\nconnection:  Close \r\n\r\n", path: "/mix/8k", closing: true},
		// an absolute URI, as a relay passes an HTTP proxy's request on
		{head: "GET http://10.0.2.2:8080/mix/32k HTTP/1.1\r\n\r\n", path: "/mix/32k"},
		// a body to skip
		{head: "POST /mix/64k HTTP/1.1\r\nContent-Length: 2048\r\n\r\n", path: "/mix/64k", body: 2048},
		// bare line ends, and tabs between the fields
		{head: "GET\t/mix/1k  HTTP/1.1\nHost: o\n\n", path: "/mix/1k"},
		// two fields
		{head: "GET /mix/1k\r\n\r\n", bad: true},
		// four
		{head: "GET /mix/1k HTTP/1.1 x\r\n\r\n", bad: true},
		// a signed length
		{head: "POST /mix/1k HTTP/1.1\r\nContent-Length: -5\r\n\r\n", bad: true},
		// an empty one
		{head: "POST /mix/1k HTTP/1.1\r\nContent-Length:\r\n\r\n", bad: true},
		// nothing but the end of a head
		{head: "\r\n", bad: true},
	} {
		var q request
		err := q.read(bufio.NewReader(strings.NewReader(c.head)))
		if got := string(q.path); (err != nil) != c.bad || !c.bad && (got != c.path || q.closing != c.closing || q.body != c.body) {
			t.Errorf("request.read(%q) = %q, %v, %d, %v; want %q, %v, %d, bad %v", c.head, got, q.closing, q.body, err, c.path, c.closing, c.body, c.bad)
		}
	}
}

// TestRequestReadAllocs: reading the mix's requests allocates nothing
// once a connection's request has its room.
func TestRequestReadAllocs(t *testing.T) {
	reqs := strings.Repeat("GET http://10.0.2.2/mix/256k HTTP/1.1\r\nHost: 10.0.2.2\r\nConnection: close\r\n\r\n", 200)
	r := bufio.NewReader(strings.NewReader(reqs))
	var q request
	if a := testing.AllocsPerRun(100, func() {
		if err := q.read(r); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("%v allocations a request; want none", a)
	}
}

// TestListenNoKeepAlive: the connections the origin's listener accepts
// send no keep-alive probes.
func TestListenNoKeepAlive(t *testing.T) {
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	raw, err := a.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var on int
	var serr error
	if err := raw.Control(func(fd uintptr) { on, serr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_KEEPALIVE) }); err != nil || serr != nil {
		t.Fatal(err, serr)
	}
	if on != 0 {
		t.Errorf("SO_KEEPALIVE %d on an accepted connection; want 0", on)
	}
}

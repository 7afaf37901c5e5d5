package mix

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"testing"

	"bench/scenarios"
)

// serveOrigin runs Serve on a fresh port of 127.0.0.1 until the test ends.
func serveOrigin(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
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

// readAnswerHead reads an answer's head as ReadRequest reads a request's.
func readAnswerHead(r *bufio.Reader) (status string, closing bool, body int, err error) {
	status, closing, body, err = ReadRequest(r)
	if err == nil && !strings.HasPrefix(status, "200") {
		err = io.ErrUnexpectedEOF
	}
	return
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

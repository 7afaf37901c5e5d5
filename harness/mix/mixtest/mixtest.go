// Package mixtest has small servers on 127.0.0.1 for testing bench mix:
// an origin serving the mix's answers that counts what it sends, with
// faults to order, and the four kinds of proxy (HTTP with absolute URIs,
// CONNECT, SOCKSv5 without authentication, a TCP relay).
package mixtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"bench/internal/accept"
	"bench/internal/nettest"
	"bench/scenarios"
)

// Fault is what the origin does wrong.
type Fault int

// The origin's faults.
const (
	None     Fault = iota
	Truncate       // sends half of each body, then closes
	Corrupt        // changes the last byte of each body
)

// Origin serves the mix's answers over HTTP/1.1 keep-alive.
type Origin struct {
	Addr  string
	Fault Fault
	// Bytes and Answers count the bodies sent whole (counted before
	// they are written, so they are up to date once a client has read
	// them).
	Bytes, Answers atomic.Int64
	HalfClosed     atomic.Int64 // requests with Connection: close
	stall          atomic.Int64 // unix nanoseconds until which answers wait
	bodies         map[string][]byte
}

// Stall holds every answer until d from now.
func (o *Origin) Stall(d time.Duration) { o.stall.Store(time.Now().Add(d).UnixNano()) }

// StartOrigin serves the mix's answers on a fresh port of 127.0.0.1
// until the test ends.
func StartOrigin(t testing.TB, f Fault) *Origin {
	o := &Origin{Fault: f, bodies: map[string][]byte{}}
	for _, a := range scenarios.MixAnswers() {
		o.bodies[a.Path] = scenarios.OriginAnswer(a.Size)
	}
	o.Addr = serve(t, o.serve)
	return o
}

// serve accepts connections on a fresh port of 127.0.0.1 and handles
// each with h until the test ends.
func serve(t testing.TB, h func(net.Conn)) string {
	t.Helper()
	return nettest.Serve(t, func(ctx context.Context, ln net.Listener) { accept.Serve(ctx, ln, h) })
}

// readHead reads an HTTP head: the request line and whether it says
// Connection: close.
func readHead(r *bufio.Reader) (line string, closing bool, err error) {
	for i := 0; ; i++ {
		l, err := r.ReadString('\n')
		if err != nil {
			return "", false, err
		}
		l = strings.TrimRight(l, "\r\n")
		if l == "" {
			return line, closing, nil
		}
		if i == 0 {
			line = l
		} else if strings.EqualFold(l, "Connection: close") {
			closing = true
		}
	}
}

func (o *Origin) serve(c net.Conn) {
	r := bufio.NewReader(c)
	for {
		line, closing, err := readHead(r)
		if err != nil {
			return
		}
		f := strings.Fields(line)
		body, found := []byte(nil), false
		if len(f) == 3 {
			body, found = o.bodies[f[1]]
		}
		if !found {
			io.WriteString(c, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
			continue
		}
		if until := time.Unix(0, o.stall.Load()); time.Now().Before(until) {
			time.Sleep(time.Until(until))
		}
		head := "HTTP/1.1 200 OK\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n"
		if closing {
			o.HalfClosed.Add(1)
			head += "Connection: close\r\n"
		}
		switch o.Fault {
		case Truncate:
			io.WriteString(c, head+"\r\n")
			c.Write(body[:len(body)/2])
			return
		case Corrupt:
			body = append(bytes.Clone(body[:len(body)-1]), body[len(body)-1]+1)
		}
		o.Bytes.Add(int64(len(body)))
		o.Answers.Add(1)
		bufs := net.Buffers{[]byte(head + "\r\n"), body}
		if _, err := bufs.WriteTo(c); err != nil || closing {
			return
		}
	}
}

// pipe relays between a and b both ways, passing on half-closes, until
// both directions have ended.
func pipe(a, b net.Conn) {
	done := make(chan struct{})
	go func() {
		io.Copy(b, a)
		b.(*net.TCPConn).CloseWrite()
		close(done)
	}()
	io.Copy(a, b)
	a.(*net.TCPConn).CloseWrite()
	<-done
}

// StartRelay relays every connection to target until the test ends.
func StartRelay(t testing.TB, target string) string {
	return serve(t, func(c net.Conn) {
		up, err := net.Dial("tcp", target)
		if err != nil {
			return
		}
		defer up.Close()
		pipe(c, up)
	})
}

// StartConnect is a CONNECT proxy until the test ends.
func StartConnect(t testing.TB) string {
	return serve(t, func(c net.Conn) {
		r := bufio.NewReader(c)
		line, _, err := readHead(r)
		f := strings.Fields(line)
		if err != nil || len(f) != 3 || f[0] != "CONNECT" {
			io.WriteString(c, "HTTP/1.1 400 Bad Request\r\n\r\n")
			return
		}
		up, err := net.Dial("tcp", f[1])
		if err != nil {
			io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\n\r\n")
			return
		}
		defer up.Close()
		io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
		pipe(c, up)
	})
}

// StartSocks is a SOCKSv5 proxy without authentication until the test
// ends.
func StartSocks(t testing.TB) string {
	return serve(t, func(c net.Conn) {
		var b [262]byte
		if _, err := io.ReadFull(c, b[:2]); err != nil || b[0] != 5 {
			return
		}
		if _, err := io.ReadFull(c, b[:b[1]]); err != nil {
			return
		}
		c.Write([]byte{5, 0})
		if _, err := io.ReadFull(c, b[:4]); err != nil || b[1] != 1 {
			return
		}
		var host string
		switch b[3] {
		case 1:
			io.ReadFull(c, b[:4])
			host = net.IP(b[:4]).String()
		case 3:
			io.ReadFull(c, b[:1])
			n := int(b[0])
			io.ReadFull(c, b[:n])
			host = string(b[:n])
		default:
			return
		}
		if _, err := io.ReadFull(c, b[:2]); err != nil {
			return
		}
		up, err := net.Dial("tcp", net.JoinHostPort(host, strconv.Itoa(int(binary.BigEndian.Uint16(b[:2])))))
		if err != nil {
			c.Write([]byte{5, 5, 0, 1, 0, 0, 0, 0, 0, 0})
			return
		}
		defer up.Close()
		c.Write([]byte{5, 0, 0, 1, 127, 0, 0, 1, 0, 0})
		pipe(c, up)
	})
}

// StartHTTPProxy is an HTTP proxy for absolute URIs until the test
// ends: one connection to the origin per client connection, each
// request's line rewritten to the origin's form, answers copied back.
func StartHTTPProxy(t testing.TB) string {
	return serve(t, func(c net.Conn) {
		r := bufio.NewReader(c)
		var up net.Conn
		defer func() {
			if up != nil {
				up.Close()
			}
		}()
		done := make(chan struct{})
		for {
			line, closing, err := readHead(r)
			if err != nil {
				break
			}
			f := strings.Fields(line)
			if len(f) != 3 || !strings.HasPrefix(f[1], "http://") {
				io.WriteString(c, "HTTP/1.1 400 Bad Request\r\n\r\n")
				return
			}
			host, path, _ := strings.Cut(strings.TrimPrefix(f[1], "http://"), "/")
			if up == nil {
				if up, err = net.Dial("tcp", host); err != nil {
					io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\n\r\n")
					return
				}
				go func() {
					io.Copy(c, up)
					c.(*net.TCPConn).CloseWrite()
					close(done)
				}()
			}
			req := fmt.Sprintf("%s /%s %s\r\nHost: %s\r\n", f[0], path, f[2], host)
			if closing {
				req += "Connection: close\r\n"
			}
			if _, err := io.WriteString(up, req+"\r\n"); err != nil {
				break
			}
		}
		if up != nil {
			up.(*net.TCPConn).CloseWrite()
			<-done
		}
	})
}

// ClosedPort is a port of 127.0.0.1 nothing listens on.
func ClosedPort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

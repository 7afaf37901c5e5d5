// Package mixtest has small servers on 127.0.0.1 for testing bench mix:
// an origin serving the mix's answers that counts what it sends, with
// faults to order, the four kinds of proxy (HTTP with absolute URIs,
// CONNECT, SOCKSv5 without authentication, a TCP relay), and a proxy
// that answers nothing.
package mixtest

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"bench/internal/accept"
	"bench/internal/nettest"
	"bench/scenarios"

	"github.com/HdrHistogram/hdrhistogram-go"
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
	// Arrived records when each request's head was read, Ended when
	// each answer was written whole.
	Arrived, Ended Times
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

// Agrees checks a closed loop's figures, run without a warm-up, against
// what the origin sent: it answered the window's exchanges and those
// still running at its end, and nothing else.
func (o *Origin) Agrees(t testing.TB, r scenarios.MixResult) {
	t.Helper()
	if got, sent := r.Exchanges+r.Unfinished, o.Answers.Load(); got != sent {
		t.Errorf("exchanges %d and %d unfinished; the origin answered %d", r.Exchanges, r.Unfinished, sent)
	}
	if r.Unfinished > int64(r.Active) {
		t.Errorf("%d exchanges unfinished; want at most the %d running at a time", r.Unfinished, r.Active)
	}
	if got, sent := r.Bytes, o.Bytes.Load(); got > sent || sent-got > r.Unfinished*256<<10 {
		t.Errorf("bytes %d; the origin sent %d, and %d exchanges were unfinished", got, sent, r.Unfinished)
	}
	if got, sent := r.HalfClosed, o.HalfClosed.Load(); got > sent || sent-got > r.Unfinished {
		t.Errorf("half-closed exchanges %d; the origin saw %d (want as many but the unfinished)", got, sent)
	}
	if n := histCount(t, r.Histogram); n != r.Exchanges+r.Unfinished || n != r.Due {
		t.Errorf("histogram holds %d latencies (due %d); want one per exchange and unfinished one, %d", n, r.Due, r.Exchanges+r.Unfinished)
	}
}

// histCount is the number of latencies in an encoded histogram.
func histCount(t testing.TB, enc string) int64 {
	t.Helper()
	h, err := hdrhistogram.Decode([]byte(enc))
	if err != nil {
		t.Fatal(err)
	}
	return h.TotalCount()
}

// serve accepts connections on a fresh port of 127.0.0.1 and handles
// each with h until the test ends.
func serve(t testing.TB, h func(net.Conn)) string {
	t.Helper()
	return nettest.Serve(t, func(ctx context.Context, ln net.Listener) { accept.Serve(ctx, ln, h) })
}

// head is an HTTP head as read: its bytes, its first line, whether it
// says Connection: close, and its Content-Length (-1 without one).
type head struct {
	raw     []byte
	line    string
	closing bool
	length  int
}

// readHead reads an HTTP head.
func readHead(r *bufio.Reader) (h head, err error) {
	h.length = -1
	for i := 0; ; i++ {
		l, err := r.ReadString('\n')
		if err != nil {
			return head{}, err
		}
		h.raw = append(h.raw, l...)
		l = strings.TrimRight(l, "\r\n")
		name, value, _ := strings.Cut(l, ":")
		value = strings.TrimSpace(value)
		switch {
		case l == "":
			return h, nil
		case i == 0:
			h.line = l
		case strings.EqualFold(name, "Connection") && strings.EqualFold(value, "close"):
			h.closing = true
		case strings.EqualFold(name, "Content-Length"):
			if h.length, err = strconv.Atoi(value); err != nil {
				return head{}, fmt.Errorf("Content-Length %q: %w", value, err)
			}
		}
	}
}

// Times records when things happened, safely from many goroutines.
type Times struct {
	mu sync.Mutex
	ts []time.Time
}

func (ts *Times) add(t time.Time) {
	ts.mu.Lock()
	ts.ts = append(ts.ts, t)
	ts.mu.Unlock()
}

// All returns the times recorded, in order.
func (ts *Times) All() []time.Time {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	out := slices.Clone(ts.ts)
	slices.SortFunc(out, time.Time.Compare)
	return out
}

// In counts the times recorded in [from, to].
func (ts *Times) In(from, to time.Time) int {
	n := 0
	for _, t := range ts.All() {
		if !t.Before(from) && !t.After(to) {
			n++
		}
	}
	return n
}

func (o *Origin) serve(c net.Conn) {
	r := bufio.NewReader(c)
	for {
		h, err := readHead(r)
		if err != nil {
			return
		}
		o.Arrived.add(time.Now())
		closing := h.closing
		f := strings.Fields(h.line)
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
		_, err = bufs.WriteTo(c)
		if err == nil {
			o.Ended.add(time.Now())
		}
		if err != nil || closing {
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
func StartConnect(t testing.TB) string { return serve(t, connect) }

// StartConnectThenHold is a CONNECT proxy for the first n connections;
// it never answers the CONNECT of any later one, so that opening one
// waits for the client's timeout.
func StartConnectThenHold(t testing.TB, n int64) string {
	var seen atomic.Int64
	return serve(t, func(c net.Conn) {
		if seen.Add(1) > n {
			io.Copy(io.Discard, c)
			return
		}
		connect(c)
	})
}

// connect serves one connection of a CONNECT proxy.
func connect(c net.Conn) {
	r := bufio.NewReader(c)
	h, err := readHead(r)
	f := strings.Fields(h.line)
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
			h, err := readHead(r)
			if err != nil {
				break
			}
			closing := h.closing
			f := strings.Fields(h.line)
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

// Faults are what a Holder does to the answers it passes on.
type Faults struct {
	// HoldEvery: every HoldEvery-th answer is held for Hold before it is
	// passed on (0: none).
	HoldEvery int
	Hold      time.Duration
	// ResetEvery: of the answers longer than ResetAfter bytes (head
	// included), every ResetEvery-th is passed on for its first
	// ResetAfter bytes, then the client's connection is reset (0: none).
	ResetEvery, ResetAfter int
	// CloseEvery: after every CloseEvery-th answer on a kept-alive
	// connection the client's connection is closed without a word, as
	// tinyproxy does (0: none).
	CloseEvery int
	// Capacity is how many exchanges a second the holder passes on, a
	// token bucket over all its connections (0: no limit): beyond it a
	// request waits for its turn before it goes on, so that the
	// exchanges queue and their latency grows through a window.
	Capacity float64
	// HoldOver, with a Capacity, holds a request that comes when the
	// bucket is empty for HoldOver and then passes it on, instead of
	// queueing it: the share of the exchanges held is what the rate asks
	// beyond the capacity, 1 - Capacity/rate.
	HoldOver time.Duration
	// Burst is how far ahead of its turn the token bucket lets a
	// request go, the idle time it saves: Capacity x Burst exchanges may
	// pass at once after a pause (0: bucketBurst). A burst longer than a
	// stall of the machine lets the exchanges a stall bunched up pass as
	// at their turn; it lets a window pass above the capacity by as much
	// as its tokens: Burst over the window's length and warm-up.
	Burst time.Duration
}

// bucketBurst is how far ahead of its turn the token bucket lets a
// request go by default: the bursts of a schedule kept to a millisecond
// or two by the machine's timers pass, a rate above the capacity does
// not, nor the exchanges a stall of the machine over about 20 ms bunched
// up.
const bucketBurst = 20 * time.Millisecond

// bucket is a token bucket of rate tokens a second (GCRA): next is the
// time the next token is due, and a request may take it up to burst
// before then.
type bucket struct {
	mu    sync.Mutex
	per   time.Duration
	burst time.Duration
	next  time.Time
}

// queue takes a token, waiting for its turn.
func (b *bucket) queue() {
	b.mu.Lock()
	at := b.turn(time.Now())
	b.next = b.next.Add(b.per)
	b.mu.Unlock()
	time.Sleep(time.Until(at))
}

// take takes a token if one is there now, saying whether it took one.
func (b *bucket) take() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	if b.turn(now).After(now) {
		return false
	}
	b.next = b.next.Add(b.per)
	return true
}

// turn is when the next token is there, now or later; b.mu is held.
func (b *bucket) turn(now time.Time) time.Time {
	if b.next.Before(now) {
		b.next = now
	}
	return b.next.Add(-b.burst)
}

// Holder is a relay to an origin that reads the HTTP/1.1 exchanges it
// passes on, so that it can hold answers, cut them, close connections
// after them, and say when each happened.
type Holder struct {
	Addr   string
	origin string
	f      Faults
	// Ended records when each answer was passed on whole, Held when a
	// held one was, Resets when an answer was cut, Closes when a
	// connection was closed after an answer without a word.
	Ended, Held, Resets, Closes Times
	answers, long               atomic.Int64
	// HeldOver counts the requests held for want of a token (HoldOver).
	HeldOver atomic.Int64
	bucket   *bucket // nil without a capacity
}

// StartHolder relays every connection to origin with the faults f until
// the test ends.
func StartHolder(t testing.TB, origin string, f Faults) *Holder {
	h := &Holder{origin: origin, f: f}
	if f.Capacity > 0 {
		h.bucket = &bucket{per: time.Duration(float64(time.Second) / f.Capacity), burst: cmp.Or(f.Burst, bucketBurst)}
	}
	h.Addr = serve(t, h.serve)
	return h
}

// limit holds a request to the capacity: its turn in the bucket, or its
// hold for want of a token.
func (h *Holder) limit() {
	switch {
	case h.bucket == nil:
	case h.f.HoldOver == 0:
		h.bucket.queue()
	case !h.bucket.take():
		h.HeldOver.Add(1)
		time.Sleep(h.f.HoldOver)
	}
}

// every says whether the n-th of something is one of every k-th.
func every(n int64, k int) bool { return k > 0 && n%int64(k) == 0 }

func (h *Holder) serve(c net.Conn) {
	up, err := net.Dial("tcp", h.origin)
	if err != nil {
		return
	}
	defer up.Close()
	cr, ur := bufio.NewReader(c), bufio.NewReader(up)
	for {
		req, err := readHead(cr)
		if err != nil {
			return
		}
		h.limit()
		if _, err := up.Write(req.raw); err != nil {
			return
		}
		ans, err := readHead(ur)
		if err != nil || ans.length < 0 {
			return
		}
		n := h.answers.Add(1)
		held := every(n, h.f.HoldEvery)
		if held {
			time.Sleep(h.f.Hold)
		}
		if len(ans.raw)+ans.length > h.f.ResetAfter && every(h.long.Add(1), h.f.ResetEvery) {
			c.Write(ans.raw)
			io.CopyN(c, ur, int64(h.f.ResetAfter-len(ans.raw)))
			// Let the client read what came, then reset.
			time.Sleep(10 * time.Millisecond)
			h.Resets.add(time.Now())
			c.(*net.TCPConn).SetLinger(0)
			return
		}
		if _, err := c.Write(ans.raw); err != nil {
			return
		}
		if _, err := io.CopyN(c, ur, int64(ans.length)); err != nil {
			return
		}
		now := time.Now()
		h.Ended.add(now)
		if held {
			h.Held.add(now)
		}
		if req.closing || ans.closing {
			c.(*net.TCPConn).CloseWrite()
			io.Copy(io.Discard, cr)
			return
		}
		if every(n, h.f.CloseEvery) {
			h.Closes.add(time.Now())
			return
		}
	}
}

// StartSilent is a proxy that answers nothing until the test ends: it
// accepts every connection and reads what comes, never writing a byte,
// and keeps it open until the client closes it or the test ends, also
// once the client has shut its sending side.
func StartSilent(t testing.TB) string {
	ended := make(chan struct{})
	addr := serve(t, func(c net.Conn) {
		if _, err := io.Copy(io.Discard, c); err == nil {
			<-ended // a half-close: keep the connection, and still say nothing
		}
	})
	t.Cleanup(func() { close(ended) }) // before serve's cleanup waits for the handlers
	return addr
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

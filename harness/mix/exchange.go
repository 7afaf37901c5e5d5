package mix

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"syscall"
	"time"

	"bench/harness/tlswrap"
	"bench/scenarios"
)

// work is what an exchange does beyond asking for its answer and
// reading it by its length. A mix does all of it (fullWork); only
// BenchmarkMixVsWrk leaves parts out, to compare bench mix with wrk on
// the work wrk does, which neither half-closes nor looks at the content.
type work uint8

const (
	halfClose    work = 1 << iota // one exchange in scenarios.MixHalfCloseEvery half-closes
	checkContent                  // every byte of the answer is compared with the known content
	fullWork     = halfClose | checkContent
)

// exchange runs one exchange on s, scheduled at sched (zero: now, in a
// closed loop), adds it to the window's figures when it is the window's,
// and gives s back: at once if its connection may be used again, once
// reopened otherwise.
func (m *Mix) exchange(s *slot, sched time.Time) {
	x := s.rng.Uint64()
	a := &m.answers[m.pick[x%scenarios.MixWeights]]
	e := outcome{
		half:  x/scenarios.MixWeights%scenarios.MixHalfCloseEvery == 0 && m.work&halfClose != 0,
		sched: sched,
		start: time.Now(),
	}
	if e.sched.IsZero() {
		e.sched = e.start
	}
	bp := m.bufs.Get().(*[]byte)
	var keep bool
	e.k, keep, e.retried = m.try(s, a, &e, *bp)
	m.bufs.Put(bp)
	e.done = time.Now()
	// Counted before s is given back: until then its latencies are this
	// exchange's alone.
	m.count(s, a, e)
	if e.k == ok && keep {
		m.idle <- s
	} else {
		m.reopen(s)
	}
}

// outcome is what came of an exchange: ok or what went wrong, whether it
// half-closed and was retried on a new connection, and when it was due,
// began and ended.
type outcome struct {
	k                  kind
	half, retried      bool
	sched, start, done time.Time
}

// count adds e, an exchange on s that asked for a, to the window's
// figures when it is the window's.
func (m *Mix) count(s *slot, a *answer, e outcome) {
	latency := e.done.Sub(e.sched)
	if e.k == timedOut {
		latency = m.unanswered(e.sched, e.done)
	}
	switch {
	case m.cfg.Rate > 0 && e.sched.Before(m.window):
		return // scheduled in the warm-up
	case m.cfg.Rate == 0 && e.done.Before(m.window):
		return // ended in the warm-up
	case m.cfg.Rate == 0 && e.done.After(m.end):
		// Still running at the window's end: in the latency alone.
		m.unfinished.Add(1)
		m.recordOn(s, latency, noAnswer)
		return
	}
	if e.retried {
		m.reconnects.Add(1)
	}
	if e.k != ok {
		m.errs[e.k].Add(1)
		if e.half {
			m.halfCloseFailed.Add(1)
		}
		m.recordOn(s, latency, noAnswer)
		return
	}
	m.bytes.Add(int64(len(a.body)))
	sec := m.second(e.sched, e.done)
	sec.bytes.Add(int64(len(a.body)))
	if e.start.Sub(e.sched) > m.cfg.Timeout {
		m.late.Add(1)
		m.recordOn(s, latency, noAnswer)
		return
	}
	m.exchanges.Add(1)
	sec.exchanges.Add(1)
	if e.half {
		m.halfClosed.Add(1)
	}
	m.recordOn(s, latency, gotAnswer)
}

// second is the second of the window an exchange of the window counts
// in: the one it was scheduled in at a fixed rate, the one it ended in
// in a closed loop, as the window's figures count it.
func (m *Mix) second(sched, done time.Time) *perSecond {
	at := done
	if m.cfg.Rate > 0 {
		at = sched
	}
	i := int(at.Sub(m.window) / time.Second)
	return &m.seconds[max(0, min(i, len(m.seconds)-1))]
}

// reopen closes s's connection and opens it again, outside any
// exchange's timing, then gives s back; a failure to open is left to s's
// next exchange, which counts it. After the window's end s is given back
// closed.
//
// It opens it in the exchange's goroutine where that goroutine has
// nothing else to do: at a fixed rate, where each exchange has its own,
// and in a closed loop with a worker for each connection, where no other
// connection is idle for the worker to take. With fewer workers than
// connections a worker must not wait for the dial, so it is made in a
// goroutine of its own. Opened inline, a reconnection took 36 to 51 us
// of the client's CPU in BenchmarkMixVsWrk, against 55 the same day in a
// goroutine of its own (no goroutine to start, no stack to grow again).
func (m *Mix) reopen(s *slot) {
	if s.conn != nil {
		s.conn.Close()
		s.conn = nil
	}
	if !time.Now().Before(m.end) {
		m.idle <- s
		return
	}
	if m.cfg.Rate > 0 || m.cfg.Active >= len(m.slots) {
		m.redial(s)
		return
	}
	m.reopening.Add(1)
	go func() {
		defer m.reopening.Done()
		m.redial(s)
	}()
}

// redial opens s's connection again and gives s back.
func (m *Mix) redial(s *slot) {
	bp := m.bufs.Get().(*[]byte)
	if c, k := m.dial(context.Background(), *bp); k == ok {
		s.conn = c
	}
	m.bufs.Put(bp)
	m.idle <- s
}

// try sends the request for a on s (half-closing it where e says so,
// by the deadline of e's start), opening s first if it is closed,
// and reads and checks the answer. keep is false when the connection
// must not be used again.
//
// A kept-alive connection the proxy closed after its last answer, without
// saying so, fails before the first byte of the next answer: then, and
// only then, the exchange is tried once more on a new connection, as HTTP
// clients do (retried). Once a byte of the answer has come, a reset is
// the exchange's failure: the proxy cut the answer.
func (m *Mix) try(s *slot, a *answer, e *outcome, buf []byte) (k kind, keep, retried bool) {
	reused := s.conn != nil
	k, keep, read := m.tryOn(s, a, e, buf)
	if k != reset || !reused || read {
		return k, keep, false
	}
	if s.conn != nil {
		s.conn.Close()
		s.conn = nil
	}
	k, keep, _ = m.tryOn(s, a, e, buf)
	return k, keep, true
}

// tryOn is one try of an exchange on s, opening s first if it is closed;
// read says whether any of the answer came.
func (m *Mix) tryOn(s *slot, a *answer, e *outcome, buf []byte) (k kind, keep, read bool) {
	if s.conn == nil {
		c, k := m.dial(context.Background(), buf)
		if k != ok {
			return k, false, false
		}
		s.conn = c
	}
	c := s.conn
	if err := c.SetDeadline(e.start.Add(m.cfg.Timeout)); err != nil {
		return reset, false, false
	}
	req := a.req
	if e.half {
		req = a.reqClose
	}
	if _, err := c.Write(req); err != nil {
		return ioKind(err), false, false
	}
	if e.half {
		if err := tlswrap.CloseWrite(c); err != nil {
			return ioKind(err), false, false
		}
	}
	k, closing, read := readAnswer(c, a.body, buf, m.work)
	return k, k == ok && !e.half && !closing, read
}

// dial opens a connection to the origin through the proxy, with the
// mode's handshake, within the timeout.
func (m *Mix) dial(ctx context.Context, buf []byte) (net.Conn, kind) {
	c, err := m.dialer.DialContext(ctx, "tcp", m.cfg.Proxy)
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) || isTimeout(err) {
			return nil, timedOut
		}
		return nil, refused
	}
	if err := c.SetDeadline(time.Now().Add(m.cfg.Timeout)); err != nil {
		c.Close()
		return nil, reset
	}
	if m.cfg.TLS != nil {
		tc := tls.Client(c, m.cfg.TLS)
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, handshakeKind(err)
		}
		c = tc
	}
	k := ok
	switch m.cfg.Mode {
	case Connect:
		k = m.handshakeConnect(c, buf)
	case Socks:
		k = m.handshakeSocks(c, buf)
	}
	if k != ok {
		c.Close()
		return nil, k
	}
	return c, ok
}

// handshakeKind is what a failed TLS handshake was: out of time, cut
// (reset, or closed before it ended), or a wrong answer (an alert, or a
// certificate that does not verify).
func handshakeKind(err error) kind {
	var alert tls.AlertError
	var verify *tls.CertificateVerificationError
	if errors.As(err, &alert) || errors.As(err, &verify) {
		return wrong
	}
	if k := ioKind(err); k == timedOut {
		return k
	}
	return reset
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// handshakeConnect asks the proxy for a tunnel to the origin: any 2xx
// opens it, another status is a refusal.
func (m *Mix) handshakeConnect(c net.Conn, buf []byte) kind {
	if _, err := c.Write(m.connect); err != nil {
		return ioKind(err)
	}
	head, rest, _, k := readHead(c, buf)
	switch {
	case k != ok:
		return k
	case len(rest) > 0:
		return wrong // the tunnel spoke first
	case len(head) < 12 || !bytes.HasPrefix(head, []byte("HTTP/1.")) || head[9] != '2':
		return refused
	}
	return ok
}

// socksRequest is the SOCKSv5 CONNECT request for addr (RFC 1928), by
// address when addr's host is an IP, by name otherwise.
func socksRequest(addr string) ([]byte, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("origin port %q: %w", p, err)
	}
	req := []byte{5, 1, 0}
	ip := net.ParseIP(host)
	switch {
	case ip.To4() != nil:
		req = append(append(req, 1), ip.To4()...)
	case ip != nil:
		req = append(append(req, 4), ip.To16()...)
	case len(host) > 255:
		return nil, fmt.Errorf("origin host %q is too long for SOCKS", host)
	default:
		req = append(append(req, 3, byte(len(host))), host...)
	}
	return binary.BigEndian.AppendUint16(req, uint16(port)), nil
}

// handshakeSocks opens a SOCKSv5 tunnel to the origin without
// authentication.
func (m *Mix) handshakeSocks(c net.Conn, buf []byte) kind {
	if _, err := c.Write([]byte{5, 1, 0}); err != nil {
		return ioKind(err)
	}
	if _, err := io.ReadFull(c, buf[:2]); err != nil {
		return ioKind(err)
	}
	if buf[0] != 5 || buf[1] != 0 {
		return refused // no method without authentication
	}
	if _, err := c.Write(m.socks); err != nil {
		return ioKind(err)
	}
	if _, err := io.ReadFull(c, buf[:5]); err != nil {
		return ioKind(err)
	}
	if buf[0] != 5 || buf[1] != 0 {
		return refused
	}
	// The bound address: 4 or 16 bytes, or a name of buf[4] bytes, and a
	// port; its first byte is read already.
	var left int
	switch buf[3] {
	case 1:
		left = 4 - 1 + 2
	case 4:
		left = 16 - 1 + 2
	case 3:
		left = int(buf[4]) + 2
	default:
		return wrong
	}
	if _, err := io.ReadFull(c, buf[:left]); err != nil {
		return answerKind(err)
	}
	return ok
}

var endOfHead = []byte("\r\n\r\n")

// readHead reads an HTTP head into buf; rest is what came after it, got
// how many bytes came in all.
func readHead(c io.Reader, buf []byte) (head, rest []byte, got int, k kind) {
	for {
		n, err := c.Read(buf[got:])
		if n > 0 {
			from := max(0, got-3)
			got += n
			if i := bytes.Index(buf[from:got], endOfHead); i >= 0 {
				e := from + i + len(endOfHead)
				return buf[:e], buf[e:got], got, ok
			}
			if got == len(buf) {
				return nil, nil, got, wrong
			}
		}
		if err != nil {
			if got > 0 {
				return nil, nil, got, answerKind(err)
			}
			return nil, nil, got, ioKind(err)
		}
	}
}

// readAnswer reads an answer whose body must be want, comparing it as
// it comes in when w checks the content. closing is true when the answer says the connection ends
// with it; read when any of it came. Once the head has come, an answer
// that ends or is reset before its length is short.
func readAnswer(c io.Reader, want, buf []byte, w work) (k kind, closing, read bool) {
	head, rest, got, k := readHead(c, buf)
	if k != ok {
		return k, false, got > 0
	}
	check := w&checkContent != 0
	length, closing, good := parseHead(head)
	if !good || length != len(want) || len(rest) > len(want) || check && !bytes.Equal(rest, want[:len(rest)]) {
		return wrong, closing, true
	}
	off := len(rest)
	for off < len(want) {
		n, err := c.Read(buf[:min(len(buf), len(want)-off)])
		if check && !bytes.Equal(buf[:n], want[off:off+n]) {
			return wrong, closing, true
		}
		off += n
		if err != nil && off < len(want) {
			if k := answerKind(err); k != reset {
				return k, closing, true
			}
			return short, closing, true
		}
	}
	return ok, closing, true
}

// parseHead reads an answer's head: good when its status is 200 and it
// gives a Content-Length; closing when it says "Connection: close".
func parseHead(head []byte) (length int, closing, good bool) {
	line, headers, _ := bytes.Cut(head, []byte("\r\n"))
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || string(line[8:12]) != " 200" || len(line) > 12 && line[12] != ' ' {
		return 0, false, false
	}
	length = -1
	for len(headers) > 0 {
		var h []byte
		h, headers, _ = bytes.Cut(headers, []byte("\r\n"))
		name, value, found := bytes.Cut(h, []byte(":"))
		if !found {
			continue
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, lengthHeader):
			var good bool
			if length, good = parseLength(value); !good {
				return 0, false, false
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			return 0, false, false
		case bytes.EqualFold(name, []byte("Connection")):
			closing = closing || bytes.EqualFold(value, []byte("close"))
		}
	}
	return length, closing, length >= 0
}

// parseLength reads a Content-Length's value: decimal digits, no more
// than a terabyte's.
func parseLength(v []byte) (n int, good bool) {
	if len(v) == 0 {
		return 0, false
	}
	for _, d := range v {
		if d < '0' || d > '9' || n > 1<<40 {
			return 0, false
		}
		n = n*10 + int(d-'0')
	}
	return n, true
}

// ioKind says what a read or write error before any of the answer
// came means: a missed deadline is a timeout, a refused connection
// refused, anything else (an end of the stream, a reset) a lost
// connection.
func ioKind(err error) kind {
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded) || isTimeout(err):
		return timedOut
	case errors.Is(err, syscall.ECONNREFUSED):
		return refused
	}
	return reset
}

// answerKind says what a read error after some of the answer came
// means: an end of the stream is a short answer, the others as ioKind.
func answerKind(err error) kind {
	if k := ioKind(err); k != reset || !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return k
	}
	return short
}

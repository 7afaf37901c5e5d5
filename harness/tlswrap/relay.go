package tlswrap

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// bufSize is what the wrapper reads from a socket at most in one call:
// 16 TLS records of the largest size.
const bufSize = 256 << 10

// maxRecord is the most plaintext one TLS record holds.
const maxRecord = 16 << 10

// relay copies plain to TLS and TLS to plain until both directions have
// ended, passing a half-close on: the end of one direction's data is
// sent on (close_notify and a TCP FIN, or a FIN) while the other goes on.
// rc is the TLS side after crypto/tls's handshake, read and write its
// protections. It returns the first failure of either direction, nil
// when both ended as they should.
func relay(plain net.Conn, rc *rawConn, read, write *protection) error {
	var owed atomic.Bool // a KeyUpdate asked for one in return
	b := &breaker{plain: plain, raw: rc.Conn}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		encrypt(plain, rc.Conn, write, &owed, b)
	}()
	decrypt(rc, plain, read, &owed, b)
	wg.Wait()
	return b.err
}

// breaker ends a relay that failed: both of its connections reset, so
// that neither side takes a broken stream for one that ended (a FIN
// alone passes for an end here, after data between records), and the
// first failure kept.
type breaker struct {
	once       sync.Once
	err        error
	plain, raw net.Conn
	// plainShut and rawShut: the relay has sent its end on that
	// connection (see wasReset)
	plainShut, rawShut atomic.Bool
}

func (b *breaker) fail(err error) {
	b.once.Do(func() {
		b.err = err
		for _, c := range []net.Conn{b.plain, b.raw} {
			if t, ok := c.(*net.TCPConn); ok {
				_ = t.SetLinger(0) // a close sends a reset
			}
			c.Close()
		}
	})
}

// encrypt reads plain in batches and sends each batch as records in one
// write.
func encrypt(plain, raw net.Conn, p *protection, owed *atomic.Bool, b *breaker) {
	in := make([]byte, bufSize+1) // one more: sealData borrows the byte after the data
	out := make([]byte, 0, bufSize+(bufSize/maxRecord+3)*recordOverhead)
	for {
		n, err := plain.Read(in[:bufSize])
		out = out[:0]
		if owed.Swap(false) {
			// Answer with our own, before our next data.
			out = p.seal(out, keyUpdate(updateNotRequested))
			if uerr := p.update(); uerr != nil {
				b.fail(uerr)
				return
			}
		}
		out = p.sealData(out, in[:n])
		if errors.Is(err, io.EOF) && wasReset(plain, &b.plainShut) {
			err = syscall.ECONNRESET // the write the other way was told
		}
		if err != nil && !errors.Is(err, io.EOF) {
			// Not an end but a failure: no close_notify, which would
			// say that the data is whole.
			b.fail(fmt.Errorf("read the plain side: %w", err))
			return
		}
		if err != nil {
			// The client's data ended: tell the far side, with
			// close_notify and then a FIN.
			out = p.seal(out, closeNotify)
		}
		if len(out) > 0 {
			if _, werr := raw.Write(out); werr != nil {
				b.fail(fmt.Errorf("write the TLS side: %w", werr))
				return
			}
		}
		if err != nil {
			b.rawShut.Store(true)
			_ = CloseWrite(raw)
			return
		}
	}
}

// decrypt reads records, as many as have arrived, opens them where they
// lie and sends their plaintext on in one gathered write.
func decrypt(rc *rawConn, plain net.Conn, p *protection, owed *atomic.Bool, b *breaker) {
	r := records{inbuf: rc.inbuf, p: p, owed: owed}
	for {
		data, done, err := r.openAll()
		if err == nil && len(data) > 0 {
			if _, werr := data.WriteTo(plain); werr != nil {
				err = fmt.Errorf("write the plain side: %w", werr)
			}
		}
		if err == nil && !done {
			err = r.fill(rc.Conn)
		}
		if errors.Is(err, io.EOF) && wasReset(rc.Conn, &b.rawShut) {
			err = fmt.Errorf("read the TLS side: %w", syscall.ECONNRESET)
		}
		switch {
		case done || errors.Is(err, io.EOF) && r.start == r.end:
			// The peer's close_notify, or its FIN between records
			// (some shut their side without close_notify).
			b.plainShut.Store(true)
			_ = CloseWrite(plain)
			return
		case errors.Is(err, io.EOF):
			b.fail(fmt.Errorf("the TLS side ended inside a record, %d bytes of it read", r.end-r.start))
			return
		case err != nil:
			b.fail(err)
			return
		}
	}
}

// wasReset says whether a connection whose read returned the end was
// reset rather than ended by a FIN; shut says the relay sent its own end
// on it. The kernel reports a reset once, to whichever direction asks
// first: the other direction's read then returns the end as after a FIN,
// and would pass a broken stream on as a whole one. A reset leaves the
// connection closed; so does a close both sides made, the relay's end
// first (the socket closes as its TIME_WAIT begins), and only then. A
// FIN that came first leaves it half-open.
func wasReset(c net.Conn, shut *atomic.Bool) bool {
	t, ok := c.(*net.TCPConn)
	if !ok || shut.Load() {
		return false
	}
	rc, err := t.SyscallConn()
	if err != nil {
		return true
	}
	state := uint8(unix.BPF_TCP_CLOSE)
	if cerr := rc.Control(func(fd uintptr) {
		if info, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO); err == nil {
			state = info.State
		}
	}); cerr != nil {
		return true
	}
	return state == unix.BPF_TCP_CLOSE
}

// records are the records read from the TLS side and not yet opened,
// whole ones and the start of one more.
type records struct {
	inbuf
	p    *protection
	owed *atomic.Bool
	hs   []byte      // post-handshake messages not yet whole
	data net.Buffers // the plaintext of the last openAll
}

// openAll opens every whole record in the buffer and returns their data;
// done says the peer's close_notify came.
func (r *records) openAll() (net.Buffers, bool, error) {
	r.data = r.data[:0]
	for r.end-r.start >= headerLen {
		n := int(binary.BigEndian.Uint16(r.buf[r.start+3:]))
		if n > maxCiphertext {
			return nil, false, fmt.Errorf("a record of %d bytes, more than TLS allows", n)
		}
		if r.end-r.start < headerLen+n {
			break
		}
		rec := r.buf[r.start : r.start+headerLen+n]
		r.start += len(rec)
		content, typ, err := r.p.open(rec)
		if err != nil {
			return nil, false, err
		}
		if typ != recordHandshake && len(r.hs) > 0 {
			return nil, false, errors.New("a handshake message broken by a record of another type")
		}
		switch typ {
		case recordApplicationData:
			if len(content) > 0 {
				r.data = append(r.data, content)
			}
		case recordHandshake:
			if err := r.handshake(content); err != nil {
				return nil, false, err
			}
		case recordAlert:
			if len(content) != 2 {
				return nil, false, errors.New("a malformed alert")
			}
			switch content[1] {
			case 0: // close_notify
				return r.data, true, nil
			case 90: // user_canceled: a close_notify follows
			default:
				return nil, false, fmt.Errorf("the peer sent alert %d", content[1])
			}
		default:
			return nil, false, fmt.Errorf("a record of content type %d", typ)
		}
	}
	return r.data, false, nil
}

// maxPostHandshake bounds a post-handshake message: a session ticket is
// a few hundred bytes.
const maxPostHandshake = 64 << 10

// handshake takes the post-handshake messages of a record: session
// tickets, which the wrapper does not keep, and KeyUpdate.
func (r *records) handshake(content []byte) error {
	r.hs = append(r.hs, content...)
	for len(r.hs) >= 4 {
		n := int(r.hs[1])<<16 | int(r.hs[2])<<8 | int(r.hs[3])
		if n > maxPostHandshake {
			return fmt.Errorf("a post-handshake message of %d bytes", n)
		}
		if len(r.hs) < 4+n {
			break
		}
		typ, body := r.hs[0], r.hs[4:4+n]
		r.hs = r.hs[4+n:]
		switch typ {
		case handshakeNewSessionTicket:
		case handshakeKeyUpdate:
			if len(body) != 1 || body[0] > 1 {
				return errors.New("a malformed KeyUpdate")
			}
			if len(r.hs) > 0 {
				// The next keys begin with the next record.
				return errors.New("a KeyUpdate not at the end of its record")
			}
			if err := r.p.update(); err != nil {
				return err
			}
			if body[0] == 1 {
				r.owed.Store(true)
			}
		default:
			return fmt.Errorf("handshake message %d after the handshake", typ)
		}
	}
	if len(r.hs) == 0 {
		r.hs = nil
	}
	return nil
}

// inbuf is what was read from the TLS side and not yet used:
// buf[start:end].
type inbuf struct {
	buf        []byte
	start, end int
}

// fill reads from c into the room after the data, first moving the data
// to the front when that room could not hold a whole record.
func (b *inbuf) fill(c net.Conn) error {
	if b.start == b.end {
		b.start, b.end = 0, 0
	} else if len(b.buf)-b.end < headerLen+maxCiphertext {
		b.end = copy(b.buf, b.buf[b.start:b.end])
		b.start = 0
	}
	n, err := c.Read(b.buf[b.end:])
	b.end += n
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// rawConn is the TLS side's socket as crypto/tls sees it during the
// handshake. It reads ahead, bufSize at a time, but hands crypto/tls no
// more than the record it is reading, so that the records after the
// handshake stay in its buffer for the wrapper's record layer.
type rawConn struct {
	net.Conn
	inbuf
	left int // bytes of the current record not yet handed out
}

func newRawConn(c net.Conn) *rawConn {
	return &rawConn{Conn: c, inbuf: inbuf{buf: make([]byte, bufSize)}}
}

func (c *rawConn) Read(p []byte) (int, error) {
	if c.left == 0 { // a record starts here: know its length
		for c.end-c.start < headerLen {
			if err := c.fill(c.Conn); err != nil {
				return 0, err
			}
		}
		c.left = headerLen + int(binary.BigEndian.Uint16(c.buf[c.start+3:]))
	}
	if c.start == c.end {
		if err := c.fill(c.Conn); err != nil {
			return 0, err
		}
	}
	n := copy(p[:min(len(p), c.left)], c.buf[c.start:c.end])
	c.start += n
	c.left -= n
	return n, nil
}

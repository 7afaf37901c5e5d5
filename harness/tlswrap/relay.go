package tlswrap

import (
	"crypto/tls"
	"errors"
	"net"
	"sync"
)

// bufSize is what the wrapper reads from a socket at most in one call,
// and sends at most in one: 16 TLS records of the largest size.
const bufSize = 256 << 10

// maxRecord is the most plaintext one TLS record holds.
const maxRecord = 16 << 10

// relay copies plain to TLS and TLS to plain until both directions have
// ended, passing a half-close on: the end of one direction's data is
// sent on (close_notify and a TCP FIN, or a FIN) while the other goes on.
func relay(plain net.Conn, tc *tls.Conn, rc *rawConn) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		encrypt(plain, tc, rc)
	}()
	decrypt(tc, rc, plain)
	wg.Wait()
}

// encrypt reads plain in batches and writes each batch as TLS records
// gathered into one write.
func encrypt(plain net.Conn, tc *tls.Conn, rc *rawConn) {
	buf := make([]byte, bufSize)
	for {
		n, err := plain.Read(buf)
		if n > 0 {
			rc.hold()
			_, werr := tc.Write(buf[:n])
			if ferr := rc.release(); werr == nil {
				werr = ferr
			}
			if werr != nil {
				plain.Close()
				rc.Close()
				return
			}
		}
		if err != nil {
			// The client's data ended: tell the far side, with
			// close_notify and then a FIN.
			_ = tc.CloseWrite()
			closeWrite(rc.Conn)
			return
		}
	}
}

// decrypt reads TLS records and writes their plaintext to plain, as many
// records at a time as have arrived.
func decrypt(tc *tls.Conn, rc *rawConn, plain net.Conn) {
	buf := make([]byte, bufSize)
	for {
		n, err := tc.Read(buf)
		// Take the records that are already in, without waiting.
		for err == nil && n+maxRecord <= len(buf) && rc.buffered() {
			rc.noWait = true
			m, e := tc.Read(buf[n:])
			rc.noWait = false
			n += m
			if e != nil && !errors.Is(e, errWouldWait) {
				err = e
			}
			if e != nil {
				break
			}
		}
		if n > 0 {
			if _, werr := plain.Write(buf[:n]); werr != nil {
				plain.Close()
				rc.Close()
				return
			}
		}
		if err != nil {
			closeWrite(plain)
			return
		}
	}
}

// errWouldWait is what rawConn's Read returns in noWait mode when it has
// nothing buffered: crypto/tls takes it as a temporary error, keeps what
// it read of a record, and hands it up from its own Read.
var errWouldWait = wouldWait{}

type wouldWait struct{}

func (wouldWait) Error() string   { return "no data buffered" }
func (wouldWait) Timeout() bool   { return true }
func (wouldWait) Temporary() bool { return true }

// rawConn is the TLS side's socket as crypto/tls sees it. It reads ahead,
// bufSize at a time, so that one system call brings in many records; and
// while held it gathers the records crypto/tls writes, one at a time, to
// send them in one call.
type rawConn struct {
	net.Conn
	rbuf       []byte
	rpos, rend int
	noWait     bool // Read returns errWouldWait rather than wait for the socket

	wmu     sync.Mutex
	holding bool
	wbuf    []byte
}

func newRawConn(c net.Conn) *rawConn {
	return &rawConn{Conn: c, rbuf: make([]byte, bufSize), wbuf: make([]byte, 0, bufSize+bufSize/16)}
}

// buffered reports whether data read ahead is waiting.
func (c *rawConn) buffered() bool { return c.rpos < c.rend }

func (c *rawConn) Read(p []byte) (int, error) {
	if c.rpos == c.rend {
		if c.noWait {
			return 0, errWouldWait
		}
		n, err := c.Conn.Read(c.rbuf)
		if n <= 0 {
			return 0, err
		}
		c.rpos, c.rend = 0, n
	}
	n := copy(p, c.rbuf[c.rpos:c.rend])
	c.rpos += n
	return n, nil
}

// hold gathers what is written until release.
func (c *rawConn) hold() {
	c.wmu.Lock()
	c.holding = true
	c.wmu.Unlock()
}

// release sends what was gathered and writes straight through again.
func (c *rawConn) release() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.holding = false
	if len(c.wbuf) == 0 {
		return nil
	}
	_, err := c.Conn.Write(c.wbuf)
	c.wbuf = c.wbuf[:0]
	return err
}

func (c *rawConn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.holding {
		c.wbuf = append(c.wbuf, p...)
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// Package tlswrap is the engine of `bench mix tls`, the TLS stream
// wrapper of the stream loads in the TLS modes: on the client side it
// accepts plain TCP (from iperf3) and speaks TLS 1.3 to the proxy, so that
// the proxy ends TLS; on the origin side it accepts TLS and speaks plain
// TCP (to iperf3's server), so that the proxy begins TLS. Two of them
// face to face are a tunnel, as two stunnels are.
//
// It must not set the pace of the stream it wraps: each direction of a
// connection is a goroutine of its own, so that its work spreads over the
// CPUs it may run on; it reads and writes in large batches, many TLS
// records per system call, where stunnel makes two or three calls a
// record; and after crypto/tls's handshake it seals and opens the records
// itself, in place, so that no byte is copied in user space (record.go).
package tlswrap

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"bench/internal/accept"
)

// Side says which side of the wrapper speaks TLS.
type Side string

// The sides.
const (
	// Client accepts plain TCP and speaks TLS to the address it connects to.
	Client Side = "client"
	// Server accepts TLS and speaks plain TCP to the address it connects to.
	Server Side = "server"
)

// Config is one wrapper.
type Config struct {
	Side    Side
	Connect string // host:port the wrapper connects to for each connection it accepts
	// CA is the PEM file of the CA the client verifies the server's
	// certificate with; Name the name or address it checks there ("":
	// the host of Connect).
	CA, Name string
	// Cert and Key are the PEM files of the certificate (its chain) and
	// key the server presents.
	Cert, Key string
	// Suite, when not 0, is the TLS 1.3 cipher suite the connections
	// must have negotiated; a connection that negotiated another fails.
	Suite uint16
}

// SuiteID returns the ID of the TLS 1.3 cipher suite named as the IANA
// names it ("TLS_AES_128_GCM_SHA256").
func SuiteID(name string) (uint16, error) {
	var known []string
	for _, s := range tls.CipherSuites() {
		if !tlsVersionIn(s.SupportedVersions, tls.VersionTLS13) {
			continue
		}
		if s.Name == name {
			return s.ID, nil
		}
		known = append(known, s.Name)
	}
	return 0, fmt.Errorf("no TLS 1.3 cipher suite %q (known: %s)", name, strings.Join(known, ", "))
}

func tlsVersionIn(vs []uint16, v uint16) bool {
	for _, x := range vs {
		if x == v {
			return true
		}
	}
	return false
}

// tlsConfig builds the crypto/tls configuration of c: TLS 1.3 only, and
// no session tickets from the server side, since after the handshake the
// records are the wrapper's own.
func (c Config) tlsConfig() (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS13, SessionTicketsDisabled: true}
	switch c.Side {
	case Client:
		cc, err := ClientConfig(c.CA, c.Name, c.Connect)
		if err != nil {
			return nil, err
		}
		cc.SessionTicketsDisabled = true
		return cc, nil
	case Server:
		if c.Cert == "" || c.Key == "" {
			return nil, errors.New("the server side needs a certificate and its key")
		}
		cert, err := tls.LoadX509KeyPair(c.Cert, c.Key)
		if err != nil {
			return nil, fmt.Errorf("certificate: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	default:
		return nil, fmt.Errorf("side %q: want client or server", c.Side)
	}
	return tc, nil
}

// ClientConfig is the TLS of a client of the harness's TLS ends (the
// wrapper's client side, bench mix in TLS): TLS 1.3 only, the server's
// certificate verified with the CA in the PEM file ca, for name ("": the
// host of connect, the host:port it connects to), and no session kept
// to resume.
func ClientConfig(ca, name, connect string) (*tls.Config, error) {
	if ca == "" {
		return nil, errors.New("the client side needs the CA to verify the server with")
	}
	pem, err := os.ReadFile(ca)
	if err != nil {
		return nil, fmt.Errorf("CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("CA %s: no PEM certificate in it", ca)
	}
	if name == "" {
		host, _, err := net.SplitHostPort(connect)
		if err != nil {
			return nil, fmt.Errorf("connect address %q: %w", connect, err)
		}
		name = host
	}
	return &tls.Config{MinVersion: tls.VersionTLS13, RootCAs: pool, ServerName: name}, nil
}

// CloseWrite ends the sending side of c, a TCP connection or a TLS
// client's over one: a FIN, after close_notify in TLS, as a client that
// half-closes a TLS connection sends them (crypto/tls's CloseWrite sends
// close_notify alone).
func CloseWrite(c net.Conn) error {
	if tc, ok := c.(*tls.Conn); ok {
		if err := tc.CloseWrite(); err != nil {
			return err
		}
		c = tc.NetConn()
	}
	t, ok := c.(interface{ CloseWrite() error })
	if !ok {
		return fmt.Errorf("close the sending side of a %T: not a TCP connection", c)
	}
	return t.CloseWrite()
}

// Wrapper relays the connections accepted on a listener.
type Wrapper struct {
	cfg Config
	tls *tls.Config

	mu       sync.Mutex
	failed   int   // connections that failed to connect or handshake
	firstErr error // the first of them
	conns    int   // connections relayed
	broken   int   // relayed connections that broke: reset, or a record that did not open
	brokeErr error // the first of them
}

// New checks c and loads its certificates.
func New(c Config) (*Wrapper, error) {
	if c.Connect == "" {
		return nil, errors.New("no address to connect to")
	}
	tc, err := c.tlsConfig()
	if err != nil {
		return nil, err
	}
	return &Wrapper{cfg: c, tls: tc}, nil
}

// Failed returns how many connections failed before any byte was relayed
// (the connection to the far side, the handshake, the suite) and the
// first of their errors.
func (w *Wrapper) Failed() (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.failed, w.firstErr
}

// Broken returns how many connections broke while relaying (a reset, a
// write that failed, a record that did not open, the TLS side's end
// inside a record), each passed on as a reset, and the first of their
// errors.
func (w *Wrapper) Broken() (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.broken, w.brokeErr
}

func (w *Wrapper) fail(err error) {
	w.mu.Lock()
	w.failed++
	if w.firstErr == nil {
		w.firstErr = err
	}
	w.mu.Unlock()
}

// Serve relays every connection ln accepts until ctx ends, and returns
// once they are all closed. onFail, when not nil, is told of each
// connection that failed.
func (w *Wrapper) Serve(ctx context.Context, ln net.Listener, onFail func(error)) error {
	return accept.Serve(ctx, ln, func(c net.Conn) {
		if err := w.handle(ctx, c); err != nil {
			w.fail(err)
			if onFail != nil {
				onFail(err)
			}
		}
	})
}

// handshakeTimeout bounds connecting to the far side and the handshake.
const handshakeTimeout = 10 * time.Second

// handle relays one accepted connection; it returns an error only when
// the connection failed before relaying. The server side handshakes
// before it connects on, so that a connection that never speaks TLS (a
// readiness probe) reaches nothing behind it.
func (w *Wrapper) handle(ctx context.Context, accepted net.Conn) error {
	defer accepted.Close()
	dial := func() (net.Conn, error) {
		d := net.Dialer{Timeout: handshakeTimeout}
		c, err := d.DialContext(ctx, "tcp", w.cfg.Connect)
		if err != nil {
			return nil, fmt.Errorf("connect to %s: %w", w.cfg.Connect, err)
		}
		setNoDelay(c)
		return c, nil
	}
	setNoDelay(accepted)
	var (
		plain, raw net.Conn
		tc         *tls.Conn
		rc         *rawConn
		err        error
	)
	secrets := new(trafficSecrets)
	cfg := w.tls.Clone()
	cfg.KeyLogWriter = secrets
	if w.cfg.Side == Client {
		if raw, err = dial(); err != nil {
			return err
		}
		defer raw.Close()
		defer context.AfterFunc(ctx, func() { raw.Close() })() // closed as the accepted one is when the wrapper stops
		plain, rc = accepted, newRawConn(raw)
		tc = tls.Client(rc, cfg)
	} else {
		raw, rc = accepted, newRawConn(accepted)
		tc = tls.Server(rc, cfg)
	}
	hctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	err = tc.HandshakeContext(hctx)
	cancel()
	if err != nil {
		return fmt.Errorf("TLS handshake with %s: %w", raw.RemoteAddr(), err)
	}
	st := tc.ConnectionState()
	if w.cfg.Suite != 0 && st.CipherSuite != w.cfg.Suite {
		return fmt.Errorf("TLS with %s negotiated %s, not %s as asked", raw.RemoteAddr(),
			tls.CipherSuiteName(st.CipherSuite), tls.CipherSuiteName(w.cfg.Suite))
	}
	if rc.left != 0 {
		return fmt.Errorf("TLS with %s: the handshake ended inside a record", raw.RemoteAddr())
	}
	read, write, err := secrets.protections(w.cfg.Side, st.CipherSuite)
	if err != nil {
		return fmt.Errorf("TLS with %s: %w", raw.RemoteAddr(), err)
	}
	if w.cfg.Side == Server {
		if plain, err = dial(); err != nil {
			return err
		}
		defer plain.Close()
		defer context.AfterFunc(ctx, func() { plain.Close() })()
	}
	w.mu.Lock()
	w.conns++
	w.mu.Unlock()
	if err := relay(plain, rc, read, write); err != nil {
		w.mu.Lock()
		w.broken++
		if w.brokeErr == nil {
			w.brokeErr = fmt.Errorf("TLS with %s: %w", raw.RemoteAddr(), err)
		}
		w.mu.Unlock()
	}
	return nil
}

func setNoDelay(c net.Conn) {
	if t, ok := c.(*net.TCPConn); ok {
		_ = t.SetNoDelay(true)
	}
}

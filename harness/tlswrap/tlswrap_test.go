package tlswrap

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"bench/internal/accept"
	"bench/internal/nettest"
	"bench/proxies"
)

// pki writes a CA and a certificate it signed for 127.0.0.1 into a
// temporary directory: ca.pem, cert.pem, key.pem.
func pki(t testing.TB) string {
	t.Helper()
	p, err := proxies.GeneratePKI([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, data := range map[string][]byte{"ca.pem": p.CACert, "cert.pem": p.ServerCert, "key.pem": p.ServerKey} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// serve starts w on a loopback listener until the test ends and returns
// its address.
func serve(t testing.TB, w *Wrapper) string {
	t.Helper()
	return nettest.Serve(t, func(ctx context.Context, ln net.Listener) { w.Serve(ctx, ln, nil) })
}

// echo is a plain TCP server that sends back what it reads, and shuts
// its sending side when the client has shut its own.
func echo(t testing.TB) string {
	t.Helper()
	return nettest.Serve(t, func(ctx context.Context, ln net.Listener) { accept.Serve(ctx, ln, nettest.Echo) })
}

// tunnel is client wrapper -> server wrapper -> to, as two stunnels are.
func tunnel(t testing.TB, dir, to string, clientSuite uint16) (entry string, client, server *Wrapper) {
	t.Helper()
	server, err := New(Config{Side: Server, Connect: to, Cert: filepath.Join(dir, "cert.pem"), Key: filepath.Join(dir, "key.pem")})
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, server)
	client, err = New(Config{Side: Client, Connect: srv, CA: filepath.Join(dir, "ca.pem"), Suite: clientSuite})
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, client), client, server
}

// TestTunnelEcho sends 8 MB through a tunnel of two wrappers to an echo
// server, shuts the sending side, and checks that every byte came back
// and the end was passed on both ways.
func TestTunnelEcho(t *testing.T) {
	dir := pki(t)
	entry, client, server := tunnel(t, dir, echo(t), 0)
	for i := 0; i < 3; i++ {
		c, err := net.Dial("tcp", entry)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(20 * time.Second))
		want := make([]byte, 8<<20)
		rand.Read(want)
		go func() {
			c.Write(want)
			c.(*net.TCPConn).CloseWrite()
		}()
		got, err := io.ReadAll(c)
		c.Close()
		if err != nil || !bytes.Equal(got, want) {
			time.Sleep(100 * time.Millisecond) // the wrappers' count of a break
			relayedWhole(t, client, server)
			t.Fatalf("got %d bytes back, want the %d sent: %v", len(got), len(want), err)
		}
	}
	relayedWhole(t, client, server)
}

// relayedWhole checks that no connection through ws failed or broke.
func relayedWhole(t *testing.T, ws ...*Wrapper) {
	t.Helper()
	for _, w := range ws {
		if n, err := w.Failed(); n > 0 {
			t.Errorf("%s side: %d failed: %v", w.cfg.Side, n, err)
		}
		if n, err := w.Broken(); n > 0 {
			t.Errorf("%s side: %d broke: %v", w.cfg.Side, n, err)
		}
	}
}

// TestResetPassedOn: an origin that resets its connection in the middle
// of a stream breaks it on both wrappers, and the client sees a reset,
// not an end that would pass for the whole stream.
func TestResetPassedOn(t *testing.T) {
	dir := pki(t)
	back := nettest.Serve(t, func(ctx context.Context, ln net.Listener) {
		accept.Serve(ctx, ln, func(c net.Conn) {
			io.CopyN(io.Discard, c, 1<<20)
			c.(*net.TCPConn).SetLinger(0)
			c.Close()
		})
	})
	entry, client, server := tunnel(t, dir, back, 0)
	c, err := net.Dial("tcp", entry)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	wrote := make(chan error, 1)
	go func() {
		_, err := c.Write(make([]byte, 8<<20))
		wrote <- err
	}()
	// The kernel tells of a reset once, to the read or the write that
	// asks first.
	_, rerr := io.ReadAll(c)
	if werr := <-wrote; !errors.Is(rerr, syscall.ECONNRESET) && !errors.Is(werr, syscall.ECONNRESET) {
		t.Fatalf("the client read %v and wrote %v; want a reset", rerr, werr)
	}
	for _, w := range []*Wrapper{server, client} {
		deadline := time.Now().Add(5 * time.Second)
		for n, _ := w.Broken(); n != 1; n, _ = w.Broken() {
			if time.Now().After(deadline) {
				t.Fatalf("%s side: %d connections broke, want 1", w.cfg.Side, n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if _, err := server.Broken(); !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, syscall.EPIPE) {
		t.Errorf("server side broke with %v; want the origin's reset", err)
	}
}

// TestWrongCertificate: a server whose certificate the client's CA did
// not sign fails the client's connection, with the reason.
func TestWrongCertificate(t *testing.T) {
	dir, other := pki(t), pki(t)
	server, err := New(Config{Side: Server, Connect: echo(t), Cert: filepath.Join(other, "cert.pem"), Key: filepath.Join(other, "key.pem")})
	if err != nil {
		t.Fatal(err)
	}
	client, err := New(Config{Side: Client, Connect: serve(t, server), CA: filepath.Join(dir, "ca.pem")})
	if err != nil {
		t.Fatal(err)
	}
	checkFails(t, client, serve(t, client), "certificate signed by unknown authority")
}

// TestSuiteChecked: a connection that did not negotiate the suite asked
// for fails, naming both.
func TestSuiteChecked(t *testing.T) {
	// Go's client offers every suite and its server picks; asking for
	// one it will not pick here is asking for ChaCha20 on a CPU with AES
	// instructions, or AES on one without: ask for whichever of the two
	// it does not choose.
	dir := pki(t)
	entry, client, _ := tunnel(t, dir, echo(t), 0)
	c, err := net.Dial("tcp", entry)
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("x"))
	b := make([]byte, 1)
	io.ReadFull(c, b)
	c.Close()
	chosen := negotiated(t)
	other := tls.TLS_CHACHA20_POLY1305_SHA256
	if chosen == other {
		other = tls.TLS_AES_128_GCM_SHA256
	}
	entry, client, _ = tunnel(t, dir, echo(t), other)
	checkFails(t, client, entry, "not "+tls.CipherSuiteName(other)+" as asked")
}

// negotiated is the suite Go's client and server negotiate here, found
// with a handshake of their own.
func negotiated(t *testing.T) uint16 {
	t.Helper()
	dir := pki(t)
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	srv := tls.Server(a, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13})
	go srv.Handshake()
	cl := tls.Client(b, &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13})
	if err := cl.Handshake(); err != nil {
		t.Fatal(err)
	}
	return cl.ConnectionState().CipherSuite
}

// checkFails connects through entry and expects the wrapper to count the
// connection as failed with an error that says want.
func checkFails(t *testing.T, w *Wrapper, entry, want string) {
	t.Helper()
	c, err := net.Dial("tcp", entry)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	c.Write([]byte("hello"))
	io.ReadAll(c) // closed by the wrapper
	c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		n, err := w.Failed()
		if n > 0 {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("failed with %v; want an error saying %q", err, want)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no connection failed; want one failing with %q", want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSuiteID knows the TLS 1.3 suites by their IANA names.
func TestSuiteID(t *testing.T) {
	for name, id := range map[string]uint16{
		"TLS_AES_128_GCM_SHA256":       tls.TLS_AES_128_GCM_SHA256,
		"TLS_AES_256_GCM_SHA384":       tls.TLS_AES_256_GCM_SHA384,
		"TLS_CHACHA20_POLY1305_SHA256": tls.TLS_CHACHA20_POLY1305_SHA256,
	} {
		if got, err := SuiteID(name); err != nil || got != id {
			t.Errorf("SuiteID(%s) = %#x, %v; want %#x", name, got, err, id)
		}
	}
	if _, err := SuiteID("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"); err == nil {
		t.Errorf("SuiteID of a TLS 1.2 suite: want an error")
	}
}

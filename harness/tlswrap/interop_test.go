package tlswrap

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"bench/internal/nettest"
	"bench/internal/testenv"

	"bench/internal/child"
)

var tls13Suites = []string{"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"}

// stunnelConf writes a stunnel configuration of one service speaking
// TLS 1.3 with only the suite given, and returns its path.
func stunnelConf(t testing.TB, dir, name, suite, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	conf := "foreground = yes\npid =\nsyslog = no\ndebug = err\noutput = " + p + ".log\n[t]\nsslVersionMin = TLSv1.3\nciphersuites = " + suite + "\n" + body
	if err := os.WriteFile(p, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// echoThrough sends 8 MB through entry and checks that every byte came
// back; then it shuts the sending side and checks that the end was
// passed on, both ways. It does not shut its side while data is still
// coming back: stunnel 5.68 drops what it has not read from its socket
// when it sees the socket hang up after a half-close (its log, "TLS
// closed (SSL_read)", "Read socket closed (HUP)", "8357888 byte(s) sent
// to TLS, 8388731 byte(s) sent to socket"), which a half-close with data
// in flight through stunnel's server would fail on. TestTunnelEcho
// checks that case through the wrapper's two sides. When a byte is
// missing it says whether a wrapper of ws broke.
func echoThrough(t *testing.T, entry string, ws ...*Wrapper) {
	t.Helper()
	c, err := net.Dial("tcp", entry)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	want := make([]byte, 8<<20+123)
	rand.Read(want)
	go c.Write(want)
	got := make([]byte, len(want))
	if n, err := io.ReadFull(c, got); err != nil {
		relayedWhole(t, ws...)
		t.Fatalf("read back %d of the %d bytes sent: %v", n, len(want), err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("the bytes read back are not the bytes sent")
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if rest, err := io.ReadAll(c); err != nil || len(rest) > 0 {
		t.Fatalf("after the echo and a half-close: %d bytes more, %v; want the end", len(rest), err)
	}
}

// TestStunnelPeers: the wrapper's record layer with OpenSSL's on the
// other end, for each TLS 1.3 suite: the client side through a stunnel
// server (which sends session tickets after the handshake), and a
// stunnel client through the server side.
func TestStunnelPeers(t *testing.T) {
	testenv.NeedProgram(t, "stunnel")
	dir := pki(t)
	for _, name := range tls13Suites {
		t.Run(name, func(t *testing.T) {
			id, err := SuiteID(name)
			if err != nil {
				t.Fatal(err)
			}
			back := echo(t)

			sSrv := freeAddr(t)
			start(t, "stunnel", stunnelConf(t, dir, name+"-server.conf", name, fmt.Sprintf("accept = %s\nconnect = %s\ncert = %s\nkey = %s\n",
				sSrv, back, filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"))))
			nettest.WaitAccepting(t, sSrv)
			client, err := New(Config{Side: Client, Connect: sSrv, CA: filepath.Join(dir, "ca.pem"), Suite: id})
			if err != nil {
				t.Fatal(err)
			}
			echoThrough(t, serve(t, client), client)

			server, err := New(Config{Side: Server, Connect: back, Cert: filepath.Join(dir, "cert.pem"), Key: filepath.Join(dir, "key.pem")})
			if err != nil {
				t.Fatal(err)
			}
			wSrv := serve(t, server)
			sCli := freeAddr(t)
			start(t, "stunnel", stunnelConf(t, dir, name+"-client.conf", name, fmt.Sprintf("client = yes\naccept = %s\nconnect = %s\nCAfile = %s\nverifyChain = yes\ncheckIP = 127.0.0.1\n",
				sCli, wSrv, filepath.Join(dir, "ca.pem"))))
			nettest.WaitAccepting(t, sCli)
			echoThrough(t, sCli, server)

			relayedWhole(t, client, server)
		})
	}
}

// TestKeyUpdate: openssl s_client asks the server side for a KeyUpdate
// in the middle of a connection; the wrapper takes the new keys, answers
// with a KeyUpdate of its own, and the data goes on both ways.
func TestKeyUpdate(t *testing.T) {
	testenv.NeedProgram(t, "openssl")
	dir := pki(t)
	server, err := New(Config{Side: Server, Connect: echo(t), Cert: filepath.Join(dir, "cert.pem"), Key: filepath.Join(dir, "key.pem")})
	if err != nil {
		t.Fatal(err)
	}
	entry := serve(t, server)
	cmd := exec.Command("openssl", "s_client", "-connect", entry, "-CAfile", filepath.Join(dir, "ca.pem"),
		"-tls1_3", "-msg", "-verify_return_error")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(cmd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	var (
		mu   sync.Mutex
		seen strings.Builder
	)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			mu.Lock()
			seen.WriteString(sc.Text() + "\n")
			mu.Unlock()
		}
	}()
	// waitFor waits until openssl has printed s after the part of its
	// output already read.
	from := 0
	waitFor := func(s string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			mu.Lock()
			out := seen.String()
			mu.Unlock()
			if i := strings.Index(out[from:], s); i >= 0 {
				from += i + len(s)
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("openssl s_client never printed %q:\n%s", s, out)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	io.WriteString(stdin, "before\n")
	waitFor("\nbefore\n")
	io.WriteString(stdin, "K\n")
	waitFor(">>> TLS 1.3, Handshake [length 0005], KeyUpdate")
	io.WriteString(stdin, "after\n")
	// The answer came before the echo: openssl read it with the keys
	// that the wrapper's KeyUpdate announced.
	waitFor("<<< TLS 1.3, Handshake [length 0005], KeyUpdate")
	waitFor("\nafter\n")
	stdin.Close()
	relayedWhole(t, server)
}

// TestRecordSizes: data of every length around a record's boundaries
// comes through a tunnel of two wrappers whole, in writes that end
// anywhere.
func TestRecordSizes(t *testing.T) {
	dir := pki(t)
	entry, _, _ := tunnel(t, dir, echo(t), tls.TLS_AES_128_GCM_SHA256)
	for _, n := range []int{1, maxRecord - 1, maxRecord, maxRecord + 1, bufSize - 1, bufSize, bufSize + 1, 3*bufSize + 7} {
		c, err := net.Dial("tcp", entry)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		want := make([]byte, n)
		rand.Read(want)
		go func() {
			for rest := want; len(rest) > 0; {
				k := min(len(rest), 1+len(rest)%5000)
				c.Write(rest[:k])
				rest = rest[k:]
			}
			c.(*net.TCPConn).CloseWrite()
		}()
		got, err := io.ReadAll(c)
		c.Close()
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%d bytes: got %d back (%v)", n, len(got), err)
		}
	}
}

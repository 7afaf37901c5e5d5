package scenarios

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"bench/internal/nettest"
	"bench/internal/testenv"

	"bench/internal/child"
)

var capture = flag.Bool("capture", false, "run wrk, iperf3 and proxychains4 on loopback and save their output under testdata/captured")

// captured is where the real tools' outputs are kept for the parser tests.
const captured = "testdata/captured"

// startTinyproxy runs tinyproxy on a fresh loopback address as the
// tunnels' and absolute URIs' proxy and returns its address.
func startTinyproxy(t *testing.T) string {
	t.Helper()
	testenv.NeedProgram(t, "tinyproxy")
	addr := loopback()
	conf := filepath.Join(t.TempDir(), "tinyproxy.conf")
	data := fmt.Sprintf("Port %d\nListen %s\nTimeout 600\nLogLevel Critical\nMaxClients 4000\nAllow 127.0.0.0/8\nDisableViaHeader Yes\n", PortHTTPProxy, addr)
	if err := os.WriteFile(conf, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	start(t, "tinyproxy", "-d", "-c", conf)
	nettest.WaitAccepting(t, net.JoinHostPort(addr, fmt.Sprint(PortHTTPProxy)))
	return addr
}

// slowServer answers every request a little later than late, for
// wrk's timeouts: wrk 4 counts an answer that came after --timeout as a
// timeout, and never counts a request left unanswered. It returns its
// host:port.
func slowServer(t *testing.T, late time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", loopback()+":0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	serve := func(c net.Conn) {
		defer c.Close()
		r := bufio.NewReader(c)
		for {
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if line == "\r\n" {
					break
				}
			}
			time.Sleep(late + 200*time.Millisecond)
			if _, err := io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"); err != nil {
				return
			}
		}
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
	return ln.Addr().String()
}

// TestCapture runs the tools as the parser tests' captured outputs were
// made, and checks that what they print now reads the same way: a parse
// that failed fails, one that gave requests, timeouts or errors gives
// them. With -capture it records the outputs the parser tests read:
//
//	go test ./scenarios -run TestCapture -capture
func TestCapture(t *testing.T) {
	testenv.NeedProgram(t, ToolWrk)
	testenv.NeedProgram(t, ToolProxychains)
	origin := startOrigin(t)
	proxy := startTinyproxy(t)
	viaProxy := Target{Proxy: net.JoinHostPort(proxy, fmt.Sprint(PortHTTPProxy)), ProxyHost: proxy, Origin: origin}
	direct := Target{Direct: true, Origin: origin}
	window := time.Second
	dest := t.TempDir()
	if *capture {
		window, dest = 2*time.Second, captured
	}
	scenario := func(name string) Scenario {
		s, ok := byName(name)
		if !ok {
			t.Fatalf("no scenario %s", name)
		}
		return s
	}
	missing := scenario("http-ka-1k")
	missing.Load.Path = "/missing"
	slow := scenario("http-ka-1k")
	slow.Load.Timeout = time.Second
	cases := []struct {
		file   string
		s      Scenario
		t      Target
		window time.Duration // 0 for window
	}{
		{"wrk-ka-1k.out", scenario("http-ka-1k"), direct, 0},
		{"wrk-ka-1m.out", scenario("http-ka-1m"), direct, 0},
		{"wrk-ka-2k-50k-2000.out", scenario("http-ka-2k-50k-2000"), direct, 0},
		{"wrk-close-1k.out", scenario("http-close-1k"), direct, 0},
		{"wrk-http-proxy-ka-1k.out", scenario("http-ka-1k"), viaProxy, 0},
		{"wrk-connect-ka-1k.out", scenario("connect-ka-1k"), viaProxy, 0},
		{"wrk-connect-close-1k.out", scenario("connect-close-1k"), viaProxy, 0},
		{"wrk-404.out", missing, direct, 0},
		{"wrk-refused.out", scenario("http-ka-1k"), Target{Direct: true, Origin: loopback()}, 0},
		// Answers come 1.2 s after their requests, after the timeout
		// of 1 s: a window of 3 s leaves 1.8 s for the first of them to
		// come in it on a loaded machine (2 s, as the capture's, left
		// 0.8).
		{"wrk-timeout.out", slow, Target{Direct: true, Origin: slowServer(t, slow.Load.Timeout)}, 3 * time.Second},
		{"wrk-connect-refused.out", scenario("connect-ka-1k"), Target{Proxy: loopback() + ":3128", Origin: origin}, 0},
		{"iperf3-stream1.out", scenario("relay-stream1"), direct, 0},
		{"iperf3-stream1-down.out", scenario("relay-stream1-down"), direct, 0},
		{"iperf3-stream16.out", scenario("relay-stream16"), direct, 0},
		{"iperf3-connect-stream16.out", scenario("connect-stream16"), viaProxy, 0},
		{"iperf3-refused.out", scenario("relay-stream1"), Target{Direct: true, Origin: loopback()}, 0},
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		dir := t.TempDir()
		w := window
		if c.window > 0 {
			w = c.window
		}
		inv, _, err := Build(c.s, c.t, w, dir)
		if err != nil {
			t.Fatal(err)
		}
		out := runTool(t, inv, dir, w)
		t.Logf("%s: %s", c.file, strings.Join(inv.Argv, " "))
		if err := os.WriteFile(filepath.Join(dest, c.file), out, 0o644); err != nil {
			t.Fatal(err)
		}
		if !*capture {
			sameReading(t, c.file, out, readCaptured(t, c.file))
		}
	}
	if !*capture {
		return
	}
	var versions []string
	for _, argv := range [][]string{{"wrk", "-v"}, {"iperf3", "--version"}, {"proxychains4", "--version"}, {"tinyproxy", "-v"}, {"nginx", "-v"}} {
		out, _ := child.CombinedOutput(exec.Command(argv[0], argv[1:]...))
		versions = append(versions, "$ "+strings.Join(argv, " "), firstLines(string(out), 2))
	}
	if err := os.WriteFile(filepath.Join(captured, "VERSIONS"), []byte(strings.Join(versions, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// sameReading checks that a fresh output of a tool parses as the
// captured one did: with or without an error, requests and bytes as
// they were, and timeouts where the capture had them (the slow server
// makes them whatever the machine). A fresh output may have timeouts
// where the capture had none: a request over wrk's 2 s is the machine's
// that minute (2000 connections on 2 CPUs beside other work), not the
// parser's.
func sameReading(t *testing.T, file string, fresh, old []byte) {
	t.Helper()
	var d Driver = Wrk{}
	if strings.HasPrefix(file, "iperf3") {
		d = Iperf3{}
	}
	mf, errf := d.Parse(fresh)
	mo, erro := d.Parse(old)
	if (errf == nil) != (erro == nil) {
		t.Errorf("%s: the tool's output now parses with error %v; the captured one with %v\n%s", file, errf, erro, fresh)
		return
	}
	if errf != nil {
		return
	}
	has := func(m Measurement) string {
		return fmt.Sprintf("requests %t, bytes %t", m.Requests > 0, m.Bytes > 0)
	}
	if has(mf) != has(mo) {
		t.Errorf("%s: the tool's output now reads %s; the captured one %s\n%s", file, has(mf), has(mo), fresh)
	}
	if mo.Timeouts > 0 && mf.Timeouts == 0 {
		t.Errorf("%s: the tool's output now reads no timeouts; the captured one %d\n%s", file, mo.Timeouts, fresh)
	}
}

// firstLines returns the first n lines of s.
func firstLines(s string, n int) string {
	lines := strings.SplitN(strings.TrimSpace(s), "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

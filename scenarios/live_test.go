package scenarios

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"bench/internal/nettest"
	"bench/internal/testenv"

	"bench/internal/child"
)

// loopback returns a random 127.x.y.z address, so that parallel runs of
// the tests bind different addresses on the same ports.
func loopback() string {
	return fmt.Sprintf("127.%d.%d.%d", 1+rand.IntN(254), rand.IntN(256), 1+rand.IntN(254))
}

// writeFiles writes the origin's files below dir.
func writeOrigin(t *testing.T, dir string, p OriginSetup) {
	t.Helper()
	for _, f := range p.Files {
		name := filepath.Join(dir, f.Path)
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// start runs argv in the background until the test ends; its output goes
// to the test's log when the test fails.
func start(t *testing.T, argv ...string) {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := child.Start(cmd); err != nil {
		t.Fatalf("start %s: %v", argv[0], err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("%s:\n%s", argv[0], out.String())
		}
	})
}

// startOrigin runs the origin's nginx and iperf3 on a fresh loopback
// address and returns that address.
func startOrigin(t *testing.T) string {
	t.Helper()
	testenv.NeedRoot(t, "binds the origin's ports 80 and 443 on loopback")
	testenv.NeedProgram(t, "nginx")
	testenv.NeedProgram(t, ToolIperf3)
	addr := loopback()
	dir := t.TempDir()
	p := Origin(dir, addr, 1, OriginTLS{})
	writeOrigin(t, dir, p)
	if out, err := child.CombinedOutput(exec.Command(p.Validate[0], p.Validate[1:]...)); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(p.Validate, " "), err, out)
	}
	// bench mix --serve is bench itself, which this test binary is not;
	// harness/mix tests that server, and the session test all of them.
	for _, s := range p.Servers {
		if s[0] != ToolBench {
			start(t, s...)
		}
	}
	nettest.WaitAccepting(t, slices.DeleteFunc(p.Ready, func(a string) bool {
		return slices.ContainsFunc([]int{PortMix, PortIperfTLS, PortMixTLS}, func(port int) bool {
			return strings.HasSuffix(a, fmt.Sprintf(":%d", port))
		})
	})...)
	return addr
}

// TestOriginServes runs the rendered origin config in a real nginx and
// fetches every answer, the POST of ka-2k-50k-2000 and one over HTTPS.
func TestOriginServes(t *testing.T) {
	addr := startOrigin(t)
	client := &http.Client{Timeout: 5 * time.Second}
	for _, a := range originAnswers {
		for _, post := range []bool{false, true} {
			url := "http://" + addr + a.Path
			var (
				resp *http.Response
				err  error
			)
			if post {
				resp, err = client.Post(url, "application/octet-stream", bytes.NewReader(make([]byte, 2048)))
			} else {
				resp, err = client.Get(url)
			}
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 200 || !bytes.Equal(body, OriginAnswer(a.Size)) {
				t.Errorf("POST=%v %s = %d, %d bytes; want 200, the %d bytes of OriginAnswer", post, url, resp.StatusCode, len(body), a.Size)
			}
		}
	}
	out, err := child.CombinedOutput(exec.Command("openssl", "s_client", "-connect", net.JoinHostPort(addr, "443"), "-brief"))
	if err != nil && !bytes.Contains(out, []byte("TLSv1.3")) {
		t.Errorf("openssl s_client to the origin: %v\n%s", err, out)
	}
}

// runTool runs an invocation as the harness would: its files written to
// dir, its standard output returned.
func runTool(t *testing.T, inv Invocation, dir string, window time.Duration) []byte {
	t.Helper()
	out, exit, err := toolOutput(inv, dir, window)
	if err != nil {
		t.Fatal(err)
	}
	if exit != nil {
		t.Log(exit)
	}
	return out
}

// toolOutput is runTool's work, its failures returned: the tool's exit
// with an error apart (exit), as what it printed still counts.
func toolOutput(inv Invocation, dir string, window time.Duration) (out []byte, exit, err error) {
	for name, data := range inv.Files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return nil, nil, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), window+inv.Grace+5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, inv.Argv[0], inv.Argv[1:]...)
	cmd.Env = append(os.Environ(), inv.Env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = child.Run(cmd)
	if ctx.Err() != nil {
		return nil, nil, fmt.Errorf("%s: still running after %v", strings.Join(inv.Argv, " "), window+inv.Grace)
	}
	if err != nil {
		exit = fmt.Errorf("%s: %v\n%s", strings.Join(inv.Argv, " "), err, stderr.String())
	}
	return stdout.Bytes(), exit, nil
}

// TestDirectRuns runs each tool through Build against a real origin and
// parses what it printed.
func TestDirectRuns(t *testing.T) {
	testenv.NeedProgram(t, ToolWrk)
	addr := startOrigin(t)
	runScenarios(t, Target{Direct: true, Origin: addr}, "http-ka-1k", "http-ka-2k-50k-2000", "http-close-1k", "relay-stream1-down")
}

// TestTunnelRuns runs the tools under proxychains4 through tinyproxy's
// CONNECT, and wrk with absolute URIs to it.
func TestTunnelRuns(t *testing.T) {
	testenv.NeedProgram(t, ToolWrk)
	testenv.NeedProgram(t, ToolProxychains)
	origin := startOrigin(t)
	proxy := startTinyproxy(t)
	target := Target{Proxy: net.JoinHostPort(proxy, "3128"), ProxyHost: proxy, Origin: origin}
	runScenarios(t, target, "connect-ka-1k", "connect-close-1k", "connect-stream16")
}

// runScenarios runs the named scenarios for a second each against t and
// checks what their tools reported.
func runScenarios(t *testing.T, target Target, names ...string) {
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			s, ok := byName(name)
			if !ok {
				t.Fatalf("no scenario %s", name)
			}
			if s.Load.Conns > 100 {
				s.Load.Conns = 100 // the test shares the machine
			}
			dir := t.TempDir()
			inv, d, err := Build(s, target, time.Second, dir)
			if err != nil {
				t.Fatal(err)
			}
			out := runTool(t, inv, dir, time.Second)
			m, err := d.Parse(out)
			if err != nil {
				t.Fatalf("Parse(%q) error: %v", out, err)
			}
			// A new tunnel per request loses one now and then (a
			// connect error through proxychains), every proxy alike;
			// more than 1% is a fault.
			if m.Bytes <= 0 || m.Seconds <= 0 || m.Errors*100 > m.Requests {
				t.Errorf("Parse(%q) = %+v; want bytes and seconds, errors under 1%% of requests", out, m)
			}
			if s.Load.Tool == ToolWrk && (m.Requests <= 0 || !m.HasLatency) {
				t.Errorf("Parse(%q) = %+v; want requests and latency", out, m)
			}
		})
	}
}

// TestWrkSharesMerge: http-ka-1k split over two wrk, as over two client
// hosts, run at once against the origin, their start file holding a
// start ahead: neither starts before it, each writes its histogram
// whole, its percentiles wrk's own (Parse checks them), and the merge
// has both's exchanges, its latency every bucket of both.
func TestWrkSharesMerge(t *testing.T) {
	testenv.NeedProgram(t, ToolWrk)
	addr := startOrigin(t)
	s, ok := byName("http-ka-1k")
	if !ok {
		t.Fatal("no scenario http-ka-1k")
	}
	s.Load.Conns = 21 // the test shares the machine; 11 and 10
	shares := make([]Scenario, 2)
	ms := make([]Measurement, 2)
	outs := make([][]byte, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	at := time.Now().Add(300 * time.Millisecond)
	for i := range shares {
		var err error
		if shares[i], err = ShareOf(s, i, 2); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		inv, d, err := Build(shares[i], Target{Direct: true, Origin: addr}, time.Second, dir)
		if err != nil {
			t.Fatal(err)
		}
		// the start there from the first: the script says it is ready
		// and waits for the time it holds
		if err := os.WriteFile(filepath.Join(dir, ShareStartFile), []byte(strconv.FormatInt(at.UnixNano(), 10)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			out, exit, err := toolOutput(inv, dir, time.Second)
			outs[i] = out
			if err = errors.Join(err, exit); err == nil {
				ms[i], err = d.Parse(out)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	var want, buckets int64
	for i, m := range ms {
		if errs[i] != nil || m.Requests == 0 || len(m.Latencies) == 0 || !strings.HasPrefix(string(outs[i]), ShareReady+"\n") ||
			time.Since(m.Started) > time.Minute || m.Started.Before(at) {
			t.Fatalf("share %d: %+v, %v; want exchanges, its start said (not before %v) and the histogram whole", i+1, m, errs[i], at)
		}
		for _, b := range m.Latencies {
			want += b.Count
		}
		buckets += int64(len(m.Latencies))
	}
	got, err := MergeShares(shares, ms)
	if err != nil {
		t.Fatal(err)
	}
	var count int64
	for _, b := range got.Latencies {
		count += b.Count
	}
	if got.Requests != ms[0].Requests+ms[1].Requests || count != want || int64(len(got.Latencies)) > buckets ||
		!got.HasLatency || got.P50Ms > got.P99Ms || got.P99Ms < min(ms[0].P99Ms, ms[1].P99Ms) || got.P99Ms > max(ms[0].P99Ms, ms[1].P99Ms) {
		t.Errorf("merged %d and %d exchanges into %d, %d latencies into %d, p50 %.3f ms and p99 %.3f ms (the shares' p99 %.3f and %.3f); want the sums and a p99 between",
			ms[0].Requests, ms[1].Requests, got.Requests, want, count, got.P50Ms, got.P99Ms, ms[0].P99Ms, ms[1].P99Ms)
	}
}

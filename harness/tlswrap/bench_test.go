package tlswrap

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"bench/internal/nettest"
	"bench/internal/testenv"

	"bench/internal/child"
)

// wrapperEnv makes the test binary run as one wrapper (its arguments as
// bench mix tls's), so that the benchmark pins it to a CPU of its own as
// it pins each stunnel.
const wrapperEnv = "BENCH_TLSWRAP_SIDE"

func TestMain(m *testing.M) {
	if side := os.Getenv(wrapperEnv); side != "" {
		os.Exit(wrapperMain(Side(side), os.Args[1:]))
	}
	os.Exit(m.Run())
}

// wrapperMain is the wrapper of the benchmark: listen, connect, and the
// certificate files.
func wrapperMain(side Side, args []string) int {
	c := Config{Side: side, Connect: args[1]}
	if side == Client {
		c.CA = args[2]
		c.Suite, _ = SuiteID(args[3])
	} else {
		c.Cert, c.Key = args[2], args[3]
	}
	w, err := New(c)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ln, err := net.Listen("tcp", args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	w.Serve(context.Background(), ln, func(err error) { fmt.Fprintln(os.Stderr, err) })
	return 0
}

// BenchmarkTunnelVsStunnel measures one iperf3 stream, client to server,
// through two tunnels side by side: two bench mix tls wrappers, and two
// stunnels, each end of each tunnel alone on one CPU (the client ends on
// the first, the server ends on the second), TLS_AES_128_GCM_SHA256. The
// tunnels take turns, rounds of BENCH_TUNNEL_SECONDS (3) each, so that
// the machine's other load falls on both alike. It reports both medians
// in Gbit/s and the wrapper's over stunnel's.
func BenchmarkTunnelVsStunnel(b *testing.B) {
	testenv.NeedProgram(b, "stunnel")
	testenv.NeedProgram(b, "iperf3")
	testenv.NeedProgram(b, "taskset")
	cpus := []string{"0", "1"}
	dir := pki(b)
	const suite = "TLS_AES_128_GCM_SHA256"
	iperfAddr := freeAddr(b)
	start(b, "iperf3", "-s", "-B", "127.0.0.1", "-p", port(iperfAddr))

	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	wSrv, wCli := freeAddr(b), freeAddr(b)
	startEnv(b, []string{wrapperEnv + "=server"}, "taskset", "-c", cpus[1], self, wSrv, iperfAddr, filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"))
	startEnv(b, []string{wrapperEnv + "=client"}, "taskset", "-c", cpus[0], self, wCli, wSrv, filepath.Join(dir, "ca.pem"), suite)

	sSrv, sCli := freeAddr(b), freeAddr(b)
	conf := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("foreground = yes\npid =\nsyslog = no\ndebug = err\noutput = "+p+".log\n[t]\nsslVersionMin = TLSv1.3\nciphersuites = "+suite+"\n"+body), 0o644); err != nil {
			b.Fatal(err)
		}
		return p
	}
	start(b, "taskset", "-c", cpus[1], "stunnel", conf("server.conf", fmt.Sprintf("accept = %s\nconnect = %s\ncert = %s\nkey = %s\n",
		sSrv, iperfAddr, filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"))))
	start(b, "taskset", "-c", cpus[0], "stunnel", conf("client.conf", fmt.Sprintf("client = yes\naccept = %s\nconnect = %s\nCAfile = %s\nverifyChain = yes\ncheckIP = 127.0.0.1\n",
		sCli, sSrv, filepath.Join(dir, "ca.pem"))))
	nettest.WaitAccepting(b, wSrv, wCli, sSrv, sCli)

	secs := 3
	if s, err := strconv.Atoi(os.Getenv("BENCH_TUNNEL_SECONDS")); err == nil && s > 0 {
		secs = s
	}
	var wrap, stun []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		wrap = append(wrap, iperf(b, wCli, secs))
		stun = append(stun, iperf(b, sCli, secs))
	}
	b.StopTimer()
	w, s := median(wrap), median(stun)
	b.ReportMetric(w, "wrapper-Gbit/s")
	b.ReportMetric(s, "stunnel-Gbit/s")
	b.ReportMetric(w/s, "ratio")
	b.Logf("bench mix tls %v Gbit/s, stunnel %v Gbit/s", wrap, stun)
}

// iperf runs one upload stream through the tunnel entered at addr and
// returns what the server received, in Gbit/s.
func iperf(b *testing.B, addr string, secs int) float64 {
	host, p, _ := net.SplitHostPort(addr)
	out, err := child.Output(exec.Command("iperf3", "-c", host, "-p", p, "-t", strconv.Itoa(secs), "-J"))
	if err != nil {
		b.Fatalf("iperf3 through %s: %v\n%s", addr, err, out)
	}
	var r struct {
		End struct {
			SumReceived struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		b.Fatal(err)
	}
	return r.End.SumReceived.BitsPerSecond / 1e9
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func freeAddr(b testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func port(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

func start(b testing.TB, argv ...string) { startEnv(b, nil, argv...) }

// startEnv starts a program until the benchmark ends.
func startEnv(b testing.TB, env []string, argv ...string) {
	b.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	if err := child.Start(cmd); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
}

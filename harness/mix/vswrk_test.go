package mix

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"bench/harness/host"
	"bench/internal/testenv"
	"bench/report/changepoint"
	"bench/scenarios"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// roleEnv makes the test binary one side of BenchmarkMixVsWrk, so that
// the benchmark pins it to a CPU of its own: "origin" serves the mix on
// a fresh port of 127.0.0.1 and prints its address, "client ADDR WAY
// SECONDS" runs bench mix's exchanges against it one of the ways and
// prints the result.
const roleEnv = "BENCH_MIX_ROLE"

// profileEnv names a file for the client's CPU profile of its window:
// FILE.WAY, a file for each way.
const profileEnv = "BENCH_MIX_CPUPROFILE"

// way is one way of running bench mix, by its name.
type way struct {
	name string
	work work
}

// ways are the ways the benchmark runs bench mix: as a session runs it
// (one exchange in 10 half-closed, every byte checked), without the
// half-close, and without the half-close and the content check, which is
// wrk's work: wrk reads each answer by its length and looks at its
// status alone.
var ways = []way{
	{"mix", fullWork},
	{"mix-no-half-close", checkContent},
	{"mix-wrk-work", 0},
}

func TestMain(m *testing.M) {
	if role := os.Getenv(roleEnv); role != "" {
		if err := side(strings.Fields(role)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// vsConns are the benchmark's connections, all busy at once, as wrk
// keeps them.
const vsConns = 64

// side runs one side of the benchmark.
func side(args []string) error {
	if args[0] == "origin" {
		ln, err := Listen("127.0.0.1:0")
		if err != nil {
			return err
		}
		fmt.Println(ln.Addr())
		// Its CPU time for each line on the standard input, until the
		// benchmark closes it.
		ctx, stop := context.WithCancel(context.Background())
		go func() {
			defer stop()
			for in := bufio.NewScanner(os.Stdin); in.Scan(); {
				var u syscall.Rusage
				syscall.Getrusage(syscall.RUSAGE_SELF, &u)
				fmt.Println(u.Utime.Nano() + u.Stime.Nano())
			}
		}()
		return Serve(ctx, ln)
	}
	i := slices.IndexFunc(ways, func(w way) bool { return w.name == args[2] })
	if i < 0 {
		return fmt.Errorf("way %q: not one of the benchmark's", args[2])
	}
	secs, err := strconv.Atoi(args[3])
	if err != nil {
		return fmt.Errorf("seconds %q: %w", args[3], err)
	}
	m, err := New(Config{Mode: Relay, Proxy: args[1], Origin: args[1], Conns: vsConns, Active: vsConns,
		Duration: time.Duration(secs) * time.Second, Timeout: 2 * time.Second, OpenParallel: vsConns})
	if err != nil {
		return err
	}
	m.work = ways[i].work
	m.Open(context.Background())
	if p := os.Getenv(profileEnv); p != "" {
		f, err := os.Create(p + "." + args[2])
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	return json.NewEncoder(os.Stdout).Encode(m.Run(context.Background()))
}

// BenchmarkMixVsWrk runs bench mix and wrk side by side against bench
// mix's origin, for bench mix's own ceiling: the origin alone on CPU 0,
// the client alone on CPU 1 (taskset), 64 connections each with an
// exchange at all times, for BENCH_MIX_SECONDS (8) a run, in a network
// namespace of its own set up as a session's (ownNetwork; it needs
// root). Each round runs wrk, then bench mix each of the ways. It
// reports the medians in exchanges a second and bench mix's over wrk's,
// and logs every run's figures: the rate; the CPU the client and the
// origin used, in all and by the exchange; and the other load on the
// machine's CPUs meanwhile (other processes, soft interrupts charged to
// neither), which makes a run's figures meaningless when it is more than
// a few percent:
//
//	go test ./harness/mix -run XXX -bench MixVsWrk -benchtime 3x
//
// with BENCH_MIX_CPUPROFILE=FILE for the profiles of the client's
// windows, FILE.mix and so on.
//
// wrk asks for the mix's answers through a Lua script: its thread walks
// the mix's 100 weighted draws in one fixed shuffled order, so each 100
// requests ask for the mix's sizes in its exact proportions, which bench
// mix's draws give on average. wrk runs one thread, on the one CPU.
func BenchmarkMixVsWrk(b *testing.B) {
	testenv.NeedRoot(b, "the benchmark runs in a network namespace of its own")
	testenv.NeedProgram(b, "wrk")
	testenv.NeedProgram(b, "taskset")
	secs := 8
	if s, err := strconv.Atoi(os.Getenv("BENCH_MIX_SECONDS")); err == nil && s > 0 {
		secs = s
	}
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	ownNetwork(b)
	o := startOrigin(b, self)
	script := filepath.Join(b.TempDir(), "mix.lua")
	if err := os.WriteFile(script, wrkMixLua(), 0o644); err != nil {
		b.Fatal(err)
	}
	rates := make([][]float64, 1+len(ways))
	for b.Loop() {
		wrk := wrkRun(b, o, script, secs)
		rates[0] = append(rates[0], wrk.rate)
		line := "wrk " + wrk.String()
		for i, w := range ways {
			m := mixRun(b, o, self, w.name, secs)
			rates[i+1] = append(rates[i+1], m.rate)
			line += fmt.Sprintf(";\n%s %v, %.2f of wrk's", w.name, m, m.rate/wrk.rate)
		}
		b.Log(line)
	}
	wrk := changepoint.Median(rates[0])
	b.ReportMetric(wrk, "wrk-exchanges/s")
	for i, w := range ways {
		r := changepoint.Median(rates[i+1])
		b.ReportMetric(r, w.name+"-exchanges/s")
		b.ReportMetric(r/wrk, w.name+"/wrk")
	}
}

// ownNetwork moves the benchmark's thread for good into a network
// namespace of its own, its loopback up and its sysctls those of a
// session's namespaces (host.NamespaceSysctls: the whole ephemeral port
// range, ports in TIME_WAIT reused), so that the processes it starts run
// there, as a session runs bench mix: one exchange in 10 opens a new
// connection, and in the machine's own namespace with its range of 28000
// ports and the connections of everything else, finding a port nearly
// doubles what a connection costs. The thread is never unlocked:
// it ends with the benchmark, and the namespace with the processes.
func ownNetwork(b *testing.B) {
	runtime.LockOSThread()
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		b.Fatalf("a network namespace: %v", err)
	}
	lo, err := netlink.LinkByName("lo")
	if err == nil {
		err = netlink.LinkSetUp(lo)
	}
	if err != nil {
		b.Fatalf("loopback up: %v", err)
	}
	for k, v := range host.NamespaceSysctls {
		// /proc/sys/net shows the namespace of the thread that opens it.
		if err := os.WriteFile("/proc/sys/"+k, []byte(v), 0); err != nil {
			b.Fatal(err)
		}
	}
}

// benchOrigin is the benchmark's origin process.
type benchOrigin struct {
	addr string
	in   io.Writer
	out  *bufio.Reader
}

// startOrigin starts the benchmark's origin on CPU 0 until the
// benchmark ends.
func startOrigin(b *testing.B, self string) *benchOrigin {
	cmd := exec.Command("taskset", "-c", "0", self)
	cmd.Env = append(os.Environ(), roleEnv+"=origin")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		in.Close()
		if err := cmd.Wait(); err != nil {
			b.Errorf("origin: %v", err)
		}
	})
	o := &benchOrigin{in: in, out: bufio.NewReader(out)}
	addr, err := o.out.ReadString('\n')
	if err != nil {
		b.Fatalf("origin's address: %v", err)
	}
	o.addr = strings.TrimSpace(addr)
	return o
}

// cpu is the CPU time the origin has used so far.
func (o *benchOrigin) cpu(b *testing.B) time.Duration {
	var ns int64
	if _, err := fmt.Fprintln(o.in); err != nil {
		b.Fatalf("origin: %v", err)
	}
	if _, err := fmt.Fscanln(o.out, &ns); err != nil {
		b.Fatalf("origin's CPU time: %v", err)
	}
	return time.Duration(ns)
}

// measured is a run's exchanges a second, the CPU its client and the
// origin used, and the CPUs' other busy time meanwhile (other processes,
// and soft interrupts neither was charged with), as fractions of a CPU.
type measured struct{ rate, client, origin, others float64 }

// String gives the CPU also by the exchange, which other load on the
// CPUs changes less than the rate.
func (m measured) String() string {
	return fmt.Sprintf("%.0f/s (client %.0f%% of a CPU, %.1f µs an exchange; origin %.0f%%, %.1f µs; other load %.0f%%)",
		m.rate, 100*m.client, 1e6*m.client/m.rate, 100*m.origin, 1e6*m.origin/m.rate, 100*m.others)
}

// measure runs cmd, the client, and returns its figures, the rate from
// what its output says: its exchanges and seconds.
func measure(b *testing.B, o *benchOrigin, cmd *exec.Cmd, rate func(out []byte) (exchanges, seconds float64)) measured {
	origin0, busy0, start := o.cpu(b), busyCPU(b), time.Now()
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("%s: %v\n%s", cmd.Args[3:], err, out)
	}
	origin, busy, wall := o.cpu(b)-origin0, busyCPU(b)-busy0, time.Since(start)
	client := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	n, t := rate(out)
	return measured{rate: n / t, client: client.Seconds() / t, origin: origin.Seconds() / t,
		others: max(0, (busy-client-origin).Seconds()/wall.Seconds())}
}

// busyCPU is the time the machine's CPUs have been busy, from
// /proc/stat: all but idle and I/O wait, in USER_HZ (100) ticks.
func busyCPU(b *testing.B) time.Duration {
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		b.Fatal(err)
	}
	line, _, _ := strings.Cut(string(stat), "\n")
	f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal ...
	if len(f) < 9 {
		b.Fatalf("/proc/stat: %q: want 8 times", line)
	}
	var busy int64
	for i, v := range f[1:9] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			b.Fatalf("/proc/stat: %q: %v", line, err)
		}
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return time.Duration(busy) * time.Second / 100
}

// wrkMixLua is the script that makes wrk ask for the mix's answers.
func wrkMixLua() []byte {
	var paths []string
	for _, a := range scenarios.MixAnswers() {
		for range a.Weight {
			paths = append(paths, strconv.Quote(a.Path))
		}
	}
	r := rand.New(rand.NewPCG(answerStream, 0))
	r.Shuffle(len(paths), func(i, j int) { paths[i], paths[j] = paths[j], paths[i] })
	return []byte(`local paths = {` + strings.Join(paths, ", ") + `}
local reqs, i = {}, 0
init = function(args)
  for k, p in ipairs(paths) do reqs[k] = wrk.format("GET", p) end
end
request = function()
  i = i % #reqs + 1
  return reqs[i]
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("mix-vs-wrk: %d %d %d\n", summary.requests, summary.duration,
    e.connect + e.read + e.write + e.status + e.timeout))
end
`)
}

// wrkRun runs wrk on CPU 1 for secs.
func wrkRun(b *testing.B, o *benchOrigin, script string, secs int) measured {
	cmd := exec.Command("taskset", "-c", "1", "wrk", "-t", "1", "-c", strconv.Itoa(vsConns),
		"-d", strconv.Itoa(secs)+"s", "-s", script, "http://"+o.addr+"/")
	return measure(b, o, cmd, func(out []byte) (float64, float64) {
		_, line, found := strings.Cut(string(out), "mix-vs-wrk: ")
		var requests, us, errs int64
		if _, err := fmt.Sscan(line, &requests, &us, &errs); !found || err != nil || us <= 0 {
			b.Fatalf("wrk printed no summary (%v):\n%s", err, out)
		}
		if errs > 0 {
			b.Fatalf("wrk: %d errors:\n%s", errs, out)
		}
		return float64(requests), float64(us) / 1e6
	})
}

// mixRun runs bench mix's exchanges the way named on CPU 1 for secs.
func mixRun(b *testing.B, o *benchOrigin, self, way string, secs int) measured {
	cmd := exec.Command("taskset", "-c", "1", self)
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=client %s %s %d", roleEnv, o.addr, way, secs))
	return measure(b, o, cmd, func(out []byte) (float64, float64) {
		var r scenarios.MixResult
		if err := json.Unmarshal(out, &r); err != nil {
			b.Fatalf("bench mix's result %q: %v", out, err)
		}
		if r.Errors != (scenarios.MixErrors{}) {
			b.Fatalf("bench mix: errors %+v", r.Errors)
		}
		return float64(r.Exchanges), r.Seconds
	})
}

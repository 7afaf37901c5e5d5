package mix

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/netip"
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
	"bench/results"
	"bench/scenarios"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"bench/internal/child"
)

// roleEnv makes the test binary one side of BenchmarkMixVsWrk, so that
// the benchmark pins it to a CPU of its own: "origin" serves the mix on
// a fresh port of 127.0.0.1 and prints its address, "client ADDR WAY
// SECONDS" runs bench mix's exchanges against it one of the ways and
// prints the result, "floor ADDR SECONDS" runs them the bare way (floor)
// and prints its figures.
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
	if args[0] == "floor" {
		secs, err := strconv.Atoi(args[2])
		if err != nil {
			return fmt.Errorf("seconds %q: %w", args[2], err)
		}
		f, err := floor(args[1], time.Duration(secs)*time.Second)
		if err != nil {
			return err
		}
		return json.NewEncoder(os.Stdout).Encode(f)
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
// root). Each round runs wrk, then bench mix each of the ways, then the
// bare client (floor), whose figures bound what any client with the
// half-close can reach (bareFigures.bound). It reports the medians in
// exchanges a second, bench mix's over wrk's and the bound
// (half-close-bound/wrk), and logs every run's figures: the rate; the
// CPU the client and the origin used, in all and by the exchange; and
// the other load on the machine's CPUs meanwhile (other processes, soft
// interrupts charged to neither), which makes a run's figures
// meaningless when it is more than a few percent:
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
	var bounds []float64
	for b.Loop() {
		wrk := wrkRun(b, o, script, secs)
		rates[0] = append(rates[0], wrk.rate)
		line := "wrk " + wrk.String()
		var noHalfClose measured
		for i, w := range ways {
			m := mixRun(b, o, self, w.name, secs)
			rates[i+1] = append(rates[i+1], m.rate)
			line += fmt.Sprintf(";\n%s %v, %.2f of wrk's", w.name, m, m.rate/wrk.rate)
			if w.work == checkContent {
				noHalfClose = m
			}
		}
		f := floorRun(b, o, self, secs)
		bound := f.bound(wrk, noHalfClose)
		bounds = append(bounds, bound)
		line += fmt.Sprintf(";\nbare system calls: %v; at most %.2f of wrk's with the half-close", f, bound)
		b.Log(line)
	}
	wrk := results.Median(rates[0])
	b.ReportMetric(wrk, "wrk-exchanges/s")
	for i, w := range ways {
		r := results.Median(rates[i+1])
		b.ReportMetric(r, w.name+"-exchanges/s")
		b.ReportMetric(r/wrk, w.name+"/wrk")
	}
	b.ReportMetric(results.Median(bounds), "half-close-bound/wrk")
}

// bareFigures is what floor measured: the CPU time, in µs, of the
// system calls that open a connection (socket, setsockopt, connect),
// half-close it and close it, by the connection, and theirs by the
// exchange.
type bareFigures struct {
	Open, Shutdown, Close float64 // µs a connection
	PerExchange           float64 // µs an exchange
}

func (f bareFigures) String() string {
	return fmt.Sprintf("a half-closed exchange's connection takes %.1f µs of CPU in the system calls that open it, %.1f µs to shut its sending side, %.1f µs to close it: %.2f µs an exchange",
		f.Open, f.Shutdown, f.Close, f.PerExchange)
}

// bound is the most of wrk's rate bench mix can reach with the half-close
// were its new connections to cost it nothing but floor's system calls:
// wrk's CPU an exchange over the no-half-close way's plus those calls',
// the client's CPU being the limit of both.
func (f bareFigures) bound(wrk, noHalfClose measured) float64 {
	return (wrk.client / wrk.rate) / (noHalfClose.client/noHalfClose.rate + f.PerExchange/1e6)
}

// floor runs the mix's exchanges to addr as a session does (one in 10
// half-closed, its connection then opened again) the barest way there
// is, blocking system calls on one thread, one connection at a time,
// every answer read and checked by readAnswer, for d. It times, on the
// thread's CPU clock, the system calls any client must make for a
// half-closed exchange's connection: those that open it, half-close it
// and close it, with what the kernel does for the origin's side of the
// handshake meanwhile (on loopback, the CPU that sends a packet takes
// it in). Their figures leave out the rest of what a new connection
// costs (its first answers come in more, smaller reads, its windows
// being small), so they are a floor.
func floor(addr string, d time.Duration) (bareFigures, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || !ap.Addr().Is4() {
		return bareFigures{}, fmt.Errorf("address %q: want an IPv4 address and port", addr)
	}
	sa := &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	m, err := New(Config{Mode: Relay, Proxy: addr, Origin: addr, Conns: 1, Active: 1,
		Duration: d, Timeout: 2 * time.Second, OpenParallel: 1})
	if err != nil {
		return bareFigures{}, err
	}
	runtime.LockOSThread()
	// What reading the clock twice takes, left out of each call's time.
	const reads = 1000
	c0 := threadCPU()
	for range reads {
		threadCPU()
	}
	clock := (threadCPU() - c0) / reads
	timed := func(sum *int64, call func() error) error {
		t0 := threadCPU()
		err := call()
		*sum += threadCPU() - t0 - clock
		return err
	}
	buf := make([]byte, bufSize)
	rng := m.slots[0].rng
	fd := -1
	defer func() {
		if fd >= 0 {
			unix.Close(fd)
		}
	}()
	var open, shut, closing int64
	var n, conns int
	for start := time.Now(); time.Since(start) < d; n++ {
		x := rng.Uint64()
		a := &m.answers[m.pick[x%scenarios.MixWeights]]
		half := x/scenarios.MixWeights%scenarios.MixHalfCloseEvery == 0
		if fd < 0 {
			if err := timed(&open, func() (err error) { fd, err = dialBlocking(sa); return err }); err != nil {
				return bareFigures{}, err
			}
		}
		req := a.req
		if half {
			req = a.reqClose
		}
		if err := writeAll(fd, req); err != nil {
			return bareFigures{}, err
		}
		if half {
			if err := timed(&shut, func() error { return unix.Shutdown(fd, unix.SHUT_WR) }); err != nil {
				return bareFigures{}, err
			}
		}
		if k, _, _ := readAnswer(fdReader(fd), a.body, buf, fullWork); k != ok {
			return bareFigures{}, fmt.Errorf("exchange %d: %v", n, k)
		}
		if half {
			timed(&closing, func() error { return unix.Close(fd) })
			fd = -1
			conns++
		}
	}
	if conns == 0 {
		return bareFigures{}, fmt.Errorf("no exchange half-closed in %d", n)
	}
	us := func(ns int64, per int) float64 { return float64(ns) / 1e3 / float64(per) }
	return bareFigures{Open: us(open, conns), Shutdown: us(shut, conns), Close: us(closing, conns),
		PerExchange: us(open+shut+closing, n)}, nil
}

// dialBlocking opens a blocking TCP connection to sa, without delay as
// Go's are.
func dialBlocking(sa unix.Sockaddr) (int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err == nil {
		err = unix.Connect(fd, sa)
	}
	if err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

func writeAll(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err != nil && err != unix.EINTR {
			return err
		}
		b = b[max(n, 0):]
	}
	return nil
}

// fdReader reads a blocking socket; its end is io.EOF.
type fdReader int

func (f fdReader) Read(p []byte) (int, error) {
	for {
		n, err := unix.Read(int(f), p)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return 0, err
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// threadCPU is the CPU time the calling thread has used, in ns.
func threadCPU() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return ts.Nano()
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
	if err := child.Start(cmd); err != nil {
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
	out, err := child.Output(cmd)
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

// floorRun runs floor on CPU 1 for secs.
func floorRun(b *testing.B, o *benchOrigin, self string, secs int) bareFigures {
	cmd := exec.Command("taskset", "-c", "1", self)
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=floor %s %d", roleEnv, o.addr, secs))
	cmd.Stderr = os.Stderr
	out, err := child.Output(cmd)
	if err != nil {
		b.Fatalf("the bare client: %v\n%s", err, out)
	}
	var f bareFigures
	if err := json.Unmarshal(out, &f); err != nil {
		b.Fatalf("the bare client's figures %q: %v", out, err)
	}
	return f
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

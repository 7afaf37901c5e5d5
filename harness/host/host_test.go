package host

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"bench/internal/child"
	"bench/internal/testenv"
)

// TestMain first cleans up after the test binaries that were killed; a
// helper process cleans nothing.
func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "" {
		testenv.CleanKilled(CleanKilled)
	}
	os.Exit(m.Run())
}

// testPrefix returns a prefix no other run shares.
// Its lock file, which the harness keeps, goes when the test ends.
func testPrefix(t testing.TB) string {
	prefix := testenv.Prefix(t)
	t.Cleanup(func() { os.Remove(lockPath(prefix)) })
	return prefix
}

// testLayout is the layout the tests use: the default of this machine.
func testLayout(t testing.TB) Layout {
	online, err := OnlineCPUs()
	if err != nil {
		t.Fatal(err)
	}
	l, err := DefaultLayout(online)
	if err != nil {
		testenv.Skip(t, "needs 2 CPUs or more: %v", err)
	}
	return l
}

// newTestHost makes a host with a random prefix and closes it when the
// test ends, failed or not.
func newTestHost(t testing.TB) *Host {
	t.Helper()
	return newTestHostQuota(t, 0)
}

// newTestHostQuota is newTestHost with a CPU quota of quota CPUs on the
// proxy (0 for none).
func newTestHostQuota(t testing.TB, quota float64) *Host {
	t.Helper()
	testenv.NeedRoot(t, "makes network namespaces and cgroups")
	h, err := New(Config{Prefix: testPrefix(t), Layout: testLayout(t), ProxyCPUQuota: quota})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return h
}

// helperEnv marks a run of the test binary as a helper process.
const helperEnv = "BENCH_TEST_HELPER"

// helperArgv returns the command that runs the test binary as a helper
// doing mode.
func helperArgv(mode string, args ...string) []string {
	return append([]string{os.Args[0], "-test.run=^TestHelperProcess$", "--", mode}, args...)
}

// TestHelperProcess is not a test: it is what the tests start in the
// namespaces and cgroups.
func TestHelperProcess(t *testing.T) {
	if os.Getenv(helperEnv) == "" {
		return
	}
	args := os.Args
	for len(args) > 0 && args[0] != "--" {
		args = args[1:]
	}
	args = args[1:]
	switch args[0] {
	case "echo": // accept on args[1] and echo what arrives
		ln, err := net.Listen("tcp", args[1])
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		for {
			c, err := ln.Accept()
			if err != nil {
				os.Exit(1)
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	case "alloc": // allocate and touch args[1] MB, then wait
		n, _ := strconv.Atoi(args[1])
		b := make([]byte, n<<20)
		for i := range b {
			b[i] = byte(i)
		}
		fmt.Println("ready")
		time.Sleep(time.Hour)
		runtime.KeepAlive(b)
	case "sleep":
		fmt.Println("ready")
		time.Sleep(time.Hour)
	case "zombie": // a spinning child it never waits for: once killed, a zombie until this process ends
		if err := child.Start(exec.Command(spinArgv[3], spinArgv[4:]...)); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		fmt.Println("ready")
		time.Sleep(time.Hour)
	case "threads": // args[1] threads, each holding two sockets, as a proxy of a thread a connection does
		n, _ := strconv.Atoi(args[1])
		for i := 0; i < n; i++ {
			fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
			if err != nil {
				fmt.Println(err)
				os.Exit(1)
			}
			go func() {
				runtime.LockOSThread()
				var b [1]byte
				syscall.Read(fds[0], b[:]) // blocks its thread for good
			}()
		}
		fmt.Println("ready")
		time.Sleep(time.Hour)
	case "pipes": // args[1] pipes, one end of the first also at descriptor 5000, and as many socket pairs
		n, _ := strconv.Atoi(args[1])
		for i := 0; i < n; i++ {
			var p [2]int
			if err := syscall.Pipe(p[:]); err != nil {
				fmt.Println(err)
				os.Exit(1)
			}
			if i == 0 {
				syscall.Dup2(p[0], 5000)
			}
			if _, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0); err != nil {
				fmt.Println(err)
				os.Exit(1)
			}
		}
		fmt.Println("ready")
		time.Sleep(time.Hour)
	case "session": // a session that is then killed: host up, a process in each role, forked by a shell
		h, err := New(Config{Prefix: args[1], Layout: testLayout(t)})
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		for _, r := range roles {
			// The shell dies with the session; what it forked stays,
			// as a proxy's workers may.
			argv := append([]string{"sh", "-c", `"$0" "$@" & wait`}, helperArgv("sleep")...)
			if _, err := h.Start(r, ProcSpec{Argv: argv, Env: []string{helperEnv + "=1"}}); err != nil {
				fmt.Println(err)
				os.Exit(1)
			}
		}
		// As the origin's files are.
		www := filepath.Join(h.RunDir(), "origin", "www")
		if err := os.MkdirAll(www, 0o755); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		if err := syscall.Mount("tmpfs", www, "tmpfs", 0, "size=1m"); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		for _, r := range roles { // each shell has forked
			for deadline := time.Now().Add(10 * time.Second); len(h.PIDs(r)) < 2; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					fmt.Printf("%s holds %v after 10 s; want a shell and what it forked\n", r, h.PIDs(r))
					os.Exit(1)
				}
			}
		}
		fmt.Println("up " + h.RunDir())
		time.Sleep(time.Hour)
	}
	os.Exit(0)
}

// spinArgv is a process of one thread that keeps its CPU busy (a shell:
// a Go program's runtime would preempt and move the spinning goroutine).
// At nice -20 it outweighs 80 ordinary processes on its CPU, so that what
// else the machine runs there takes little of the window.
var spinArgv = []string{"nice", "-n", "-20", "sh", "-c", "echo ready; while :; do :; done"}

// loadArgv is a spinner at the ordinary priority, as a load tool or an
// origin runs: on the CPUs it shares with the harness, the sampler's
// thread waits for the CPU beside it.
var loadArgv = spinArgv[3:]

// startHelper starts a helper in role r and waits until it says ready.
func startHelper(t *testing.T, h *Host, r Role, mode string, args ...string) *Proc {
	t.Helper()
	argv := helperArgv(mode, args...)
	switch mode {
	case "spin":
		argv = spinArgv
	case "load":
		argv = loadArgv
	}
	pr, pw := io.Pipe()
	p, err := h.Start(r, ProcSpec{Argv: argv, Env: []string{helperEnv + "=1"}, Stdout: pw})
	if err != nil {
		t.Fatalf("Start(%s, %s): %v", r, mode, err)
	}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if sc.Text() == "ready" {
				ready <- true
			}
		}
	}()
	t.Cleanup(func() { p.Stop(time.Second); pw.Close() })
	select {
	case <-ready:
	case <-p.Done():
		t.Fatalf("%s helper exited: %v\n%s", mode, p.Err(), p.LogTail(10))
	case <-time.After(30 * time.Second):
		t.Fatalf("%s helper not ready after 30 s\n%s", mode, p.LogTail(10))
	}
	return p
}

func TestHostUp(t *testing.T) {
	h := newTestHost(t)
	origin := net.JoinHostPort(OriginAddr, "8080")
	p, err := h.Start(RoleOrigin, ProcSpec{Argv: helperArgv("echo", origin), Env: []string{helperEnv + "=1"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// The proxy namespace reaches the origin directly.
	if err := h.WaitReady(ctx, RoleProxy, []string{origin}, 20*time.Second); err != nil {
		t.Fatalf("origin not ready from the proxy namespace: %v\n%s", err, p.LogTail(10))
	}
	// Without forwarding the client does not reach the origin.
	if err := h.SetForwarding(false); err != nil {
		t.Fatal(err)
	}
	if err := h.WaitReady(ctx, RoleClient, []string{origin}, 300*time.Millisecond); err == nil {
		t.Errorf("client reached the origin with forwarding off")
	}
	// With it, it does, and the bytes come back.
	if err := h.SetForwarding(true); err != nil {
		t.Fatal(err)
	}
	if err := h.WaitReady(ctx, RoleClient, []string{origin}, 5*time.Second); err != nil {
		t.Fatalf("client does not reach the origin with forwarding on: %v", err)
	}
	var got string
	err = inNamespace(h.Namespace(RoleClient), func() error {
		c, err := net.DialTimeout("tcp", origin, 5*time.Second)
		if err != nil {
			return err
		}
		defer c.Close()
		if local := c.LocalAddr().(*net.TCPAddr).IP.String(); local != ClientAddr {
			return fmt.Errorf("client's source address %s; want %s", local, ClientAddr)
		}
		fmt.Fprint(c, "through the proxy namespace\n")
		got, err = bufio.NewReader(c).ReadString('\n')
		return err
	})
	if err != nil || got != "through the proxy namespace\n" {
		t.Errorf("echo through the proxy namespace = %q, %v", got, err)
	}
	// RPS masks read back as set, each steering to the receiving role.
	for _, pr := range topologyPairs(h.prefix) {
		for _, e := range []end{pr.a, pr.b} {
			mask, err := readRPSMask(h.Namespace(e.role), e.name)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := maskValue(t, mask), maskValue(t, CPUMask(h.Layout().cpus(e.role))); got != want {
				t.Errorf("rps_cpus of %s in %s = %s; want %x (%s's CPUs)", e.name, e.role, mask, want, e.role)
			}
		}
	}
	// The sysctls of every namespace read back as set.
	for _, r := range roles {
		for k, want := range NamespaceSysctls {
			got, err := readSysctl(h.Namespace(r), k)
			if err != nil || strings.Join(strings.Fields(got), " ") != strings.Join(strings.Fields(want), " ") {
				t.Errorf("%s in %s = %q, %v; want %q", k, r, got, err, want)
			}
		}
	}
	// MTU and the descriptor limit of a started process.
	for _, pr := range topologyPairs(h.prefix) {
		err := inNamespace(h.Namespace(pr.a.role), func() error {
			l, err := netlink.LinkByName(pr.a.name)
			if err != nil {
				return err
			}
			if l.Attrs().MTU != linkMTU {
				t.Errorf("MTU of %s = %d; want %d", pr.a.name, l.Attrs().MTU, linkMTU)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var hard syscall.Rlimit
	syscall.Getrlimit(syscall.RLIMIT_NOFILE, &hard)
	limits, _ := os.ReadFile(fmt.Sprintf("/proc/%d/limits", p.PID()))
	if !strings.Contains(string(limits), fmt.Sprintf("Max open files            %-21d", hard.Max)) {
		t.Errorf("descriptor limit of a started process is not the hard limit %d:\n%s", hard.Max, limits)
	}
}

// maskValue reads a kernel CPU mask ("00000000,00000010" or "10").
func maskValue(t *testing.T, mask string) uint64 {
	v, err := strconv.ParseUint(strings.ReplaceAll(mask, ",", ""), 16, 64)
	if err != nil {
		t.Fatalf("mask %q: %v", mask, err)
	}
	return v
}

func TestProcessPlacement(t *testing.T) {
	h := newTestHost(t)
	p := startHelper(t, h, RoleProxy, "sleep")
	// Its namespace is the proxy's.
	var nsSt, pSt syscall.Stat_t
	syscall.Stat(filepath.Join(netnsDir, h.Namespace(RoleProxy)), &nsSt)
	syscall.Stat(fmt.Sprintf("/proc/%d/ns/net", p.PID()), &pSt)
	if nsSt.Ino != pSt.Ino {
		t.Errorf("process %d is not in namespace %s", p.PID(), h.Namespace(RoleProxy))
	}
	// It is in the proxy's cgroup, and only there.
	if !slices.Contains(h.PIDs(RoleProxy), p.PID()) || slices.Contains(h.PIDs(RoleClient), p.PID()) {
		t.Errorf("PIDs(proxy) = %v, PIDs(client) = %v; want %d in the proxy's only", h.PIDs(RoleProxy), h.PIDs(RoleClient), p.PID())
	}
	// Stop ends it and its group, and Err says how.
	if err := p.Stop(time.Second); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	default:
		t.Fatal("Done not closed after Stop")
	}
	if p.Err() == nil {
		t.Errorf("Err() = nil after SIGTERM; want the signal")
	}
	if processAlive(p.PID()) {
		t.Errorf("process %d alive after Stop", p.PID())
	}
	// Run reports a failing command, and a missing one before it starts.
	if err := h.Run(context.Background(), RoleClient, ProcSpec{Argv: []string{"false"}}); err == nil {
		t.Errorf("Run(false) = nil; want the exit status")
	}
	if err := h.Run(context.Background(), RoleClient, ProcSpec{Argv: []string{"no-such-command-here"}}); err == nil {
		t.Errorf("Run(no-such-command-here) = nil; want not found")
	}
	// The run directory is private.
	if fi, err := os.Stat(h.RunDir()); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("run directory %s: %v, %v; want mode 0700", h.RunDir(), fi.Mode(), err)
	}
}

func TestSecondHostRefused(t *testing.T) {
	h := newTestHost(t)
	_, err := New(Config{Prefix: h.prefix, Layout: h.Layout()})
	if err == nil || !strings.Contains(err.Error(), "is running") {
		t.Fatalf("second New with prefix %s: %v; want a refusal", h.prefix, err)
	}
	// The first is untouched by the refusal.
	if !namespaceExists(h.Namespace(RoleProxy)) {
		t.Errorf("namespace %s gone after a refused second host", h.Namespace(RoleProxy))
	}
}

// state is what the harness could leave behind for one prefix.
type state struct {
	Namespaces, Links, Cgroups, RunDirs []string
	Children                            []int
}

// snapshot lists the namespaces, host links, cgroups and run directories
// of a prefix, and this process's children.
func snapshot(t *testing.T, prefix string) state {
	var s state
	s.Namespaces, _ = filepath.Glob(filepath.Join(netnsDir, prefix+"*"))
	links, err := netlink.LinkList()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range links {
		if strings.HasPrefix(l.Attrs().Name, prefix) {
			s.Links = append(s.Links, l.Attrs().Name)
		}
	}
	own, _ := ownCgroups()
	for _, c := range []string{"cpuset", "cpu", "memory"} {
		found, _ := filepath.Glob(filepath.Join(cgroupRoot, c, own[c], prefix+"*"))
		s.Cgroups = append(s.Cgroups, found...)
	}
	found, _ := filepath.Glob(filepath.Join(cgroupRoot, "unified", own[""], prefix+"*"))
	s.Cgroups = append(s.Cgroups, found...)
	// The lock file stays (cleared): see clearLock.
	runs, _ := filepath.Glob(filepath.Join(runBase, prefix+"*"))
	for _, p := range runs {
		if p != lockPath(prefix) {
			s.RunDirs = append(s.RunDirs, p)
		}
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(os.Getpid()) && f[0] != "Z" {
			pid, _ := strconv.Atoi(e.Name())
			s.Children = append(s.Children, pid)
		}
	}
	return s
}

func TestTeardownLeavesNothing(t *testing.T) {
	testenv.NeedRoot(t, "makes network namespaces and cgroups")
	prefix := testPrefix(t)
	before := snapshot(t, prefix)
	h, err := New(Config{Prefix: prefix, Layout: testLayout(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	for _, r := range roles {
		startHelper(t, h, r, "sleep")
	}
	during := snapshot(t, prefix)
	if len(during.Namespaces) != 3 || len(during.Cgroups) < 4 || len(during.Children) < 3 {
		t.Errorf("while up: %+v; want 3 namespaces, a cgroup per role and the memory one, 3 processes", during)
	}
	if err := h.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := h.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if after := snapshot(t, prefix); !reflect.DeepEqual(after, before) {
		t.Errorf("after Close: %+v; before: %+v", after, before)
	}
}

// TestTeardownAfterIPNetnsAdd: a namespace another program adds with
// iproute2 while a host is up (a lab's, a user's) leaves the host's
// teardown whole: the session shared netnsDir as ip does before making
// its own, so ip mounts nothing over them.
func TestTeardownAfterIPNetnsAdd(t *testing.T) {
	testenv.NeedRoot(t, "makes network namespaces")
	testenv.NeedProgram(t, "ip")
	prefix := testPrefix(t)
	before := snapshot(t, prefix)
	h, err := New(Config{Prefix: prefix, Layout: testLayout(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	other := fmt.Sprintf("iplab%d", os.Getpid()) // none of the host's
	if out, err := exec.Command("ip", "netns", "add", other).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", other).Run() })
	if err := h.Close(); err != nil {
		t.Fatalf("Close after ip netns add: %v", err)
	}
	if after := snapshot(t, prefix); !reflect.DeepEqual(after.Namespaces, before.Namespaces) {
		t.Errorf("after Close: namespaces %v; before: %v", after.Namespaces, before.Namespaces)
	}
	// this thread's mounts: the process's main thread may have been
	// left in a mount namespace of its own by another test (withSysfs)
	runtime.LockOSThread()
	mounts, err := os.ReadFile("/proc/thread-self/mountinfo")
	runtime.UnlockOSThread()
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^\S+ \S+ \S+ \S+ ` + netnsDir + ` .* shared:`).Match(mounts) {
		t.Errorf("%s is no shared mount point:\n%s", netnsDir, mounts)
	}
}

func TestFailedNewLeavesNothing(t *testing.T) {
	testenv.NeedRoot(t, "makes network namespaces and cgroups")
	prefix := testPrefix(t)
	before := snapshot(t, prefix)
	fail := newHooks{afterLinks: func() error { return fmt.Errorf("injected failure") }}
	h, err := newHost(Config{Prefix: prefix, Layout: testLayout(t)}, fail)
	if err == nil {
		h.Close()
		t.Fatal("New did not fail")
	}
	if after := snapshot(t, prefix); !reflect.DeepEqual(after, before) {
		t.Errorf("after a failed New (%v): %+v; before: %+v", err, after, before)
	}
}

// killedSession starts a session with prefix in a helper process, a
// process in each role and the origin's tmpfs mounted, kills the helper,
// waits until what it started itself is gone, leaving one process in
// each role that they forked, and returns the session's run directory.
func killedSession(t *testing.T, prefix string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "--", "session", prefix)
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := child.Start(cmd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); Clean(prefix) })
	line, _ := bufio.NewReader(out).ReadString('\n')
	runDir, ok := strings.CutPrefix(strings.TrimSpace(line), "up ")
	if !ok {
		t.Fatalf("session helper: %q", line)
	}
	www := filepath.Join(runDir, "origin", "www")
	t.Cleanup(func() { syscall.Unmount(www, syscall.MNT_DETACH) })
	cmd.Process.Kill()
	cmd.Wait()
	for _, r := range roles {
		for deadline := time.Now().Add(10 * time.Second); len(namespacePIDs(prefix+string(r))) != 1; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s holds %v 10 s after the session was killed; want the one process its shell forked", r, namespacePIDs(prefix+string(r)))
			}
		}
	}
	return runDir
}

func TestCleanAfterKill(t *testing.T) {
	testenv.NeedRoot(t, "makes network namespaces and cgroups")
	prefix := testPrefix(t)
	before := snapshot(t, prefix)
	runDir := killedSession(t, prefix)
	www := filepath.Join(runDir, "origin", "www")
	left := snapshot(t, prefix)
	if len(left.Namespaces) != 3 {
		t.Fatalf("a killed session left %+v; want its namespaces at least", left)
	}
	if m := mountsBelow(t, runDir); len(m) != 1 || m[0] != www {
		t.Fatalf("mounts under %s after the kill: %v; want the tmpfs at %s", runDir, m, www)
	}
	removed, err := Clean(prefix)
	if err != nil {
		t.Fatalf("Clean: %v", err)
	}
	var procs int
	for _, r := range removed {
		if strings.HasPrefix(r, "process ") {
			procs++
		}
	}
	if procs != 3 {
		t.Errorf("Clean removed %d processes (%v); want the 3 its processes forked", procs, removed)
	}
	if after := snapshot(t, prefix); !reflect.DeepEqual(after, before) {
		t.Errorf("after Clean: %+v; before: %+v", after, before)
	}
	if m := mountsBelow(t, runDir); len(m) > 0 {
		t.Errorf("mounts under %s after Clean: %v", runDir, m)
	}
	if !slices.Contains(removed, "mount "+www) {
		t.Errorf("Clean removed %v; want mount %s among them", removed, www)
	}
	// Clean finds nothing more.
	if again, err := Clean(prefix); err != nil || len(again) != 0 {
		t.Errorf("second Clean = %v, %v; want nothing", again, err)
	}
}

// CleanKilled cleans up after a killed session of a prefix with the
// start given, and forgets the prefix, once its lock is older than the
// age given; a live session's prefix it leaves alone.
func TestCleanKilled(t *testing.T) {
	testenv.NeedRoot(t, "makes network namespaces and cgroups")
	start := testPrefix(t) // the two prefixes below start with it, and no other's does
	killed, live := start+"k-", start+"l-"
	t.Cleanup(func() { os.Remove(lockPath(killed)); os.Remove(lockPath(live)) })
	before := snapshot(t, killed)
	killedSession(t, killed)
	h, err := New(Config{Prefix: live, Layout: testLayout(t)})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { h.Close() })
	if left := snapshot(t, killed); len(left.Namespaces) != 3 {
		t.Fatalf("a killed session left %+v; want its namespaces at least", left)
	}

	// Too young: left.
	if removed, err := CleanKilled(start, time.Hour); err != nil || len(removed) > 0 {
		t.Fatalf("CleanKilled(%q, 1h) = %v, %v; want nothing removed", start, removed, err)
	}
	if left := snapshot(t, killed); len(left.Namespaces) != 3 {
		t.Fatalf("CleanKilled with a lock younger than its age removed the namespaces: %+v left", left)
	}

	removed, err := CleanKilled(start, 0)
	if err != nil {
		t.Fatalf("CleanKilled: %v", err)
	}
	t.Logf("removed %v", removed)
	if !slices.Contains(removed, "lock "+lockPath(killed)) || !slices.Contains(removed, "namespace "+killed+string(RoleProxy)) {
		t.Errorf("CleanKilled removed %v; want the killed session's namespaces and its lock", removed)
	}
	if after := snapshot(t, killed); !reflect.DeepEqual(after, before) {
		t.Errorf("after CleanKilled: %+v; before: %+v", after, before)
	}
	if _, err := os.Stat(lockPath(killed)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the killed session's lock: %v; want it gone", err)
	}
	for _, r := range removed {
		if strings.Contains(r, live) {
			t.Errorf("CleanKilled removed %s of a live session", r)
		}
	}
	if got := snapshot(t, live); len(got.Namespaces) != 3 {
		t.Errorf("the live session has %v left; want its 3 namespaces", got.Namespaces)
	}
	if _, err := os.Stat(lockPath(live)); err != nil {
		t.Errorf("the live session's lock: %v", err)
	}
}

func TestNewBadInput(t *testing.T) {
	prefix := testPrefix(t)
	before := snapshot(t, prefix)
	online, _ := OnlineCPUs()
	top := online[len(online)-1]
	tests := []struct {
		name    string
		cfg     Config
		euid    int
		wantErr string
	}{
		{"offline CPU", Config{Prefix: prefix, Layout: Layout{Client: []int{0}, Proxy: []int{top + 1}, Origin: []int{0}}}, 0, "is not online"},
		{"overlap", Config{Prefix: prefix, Layout: Layout{Client: []int{0}, Proxy: []int{0}, Origin: []int{0}}}, 0, "the proxy needs CPUs of its own"},
		{"not root", Config{Prefix: prefix}, 1000, "not root"},
		{"bad prefix", Config{Prefix: "Bench_"}, 0, "prefix"},
		{"quota", Config{Prefix: prefix, ProxyCPUQuota: 5}, 0, "quota"},
	}
	for _, tt := range tests {
		h, err := newHost(tt.cfg, newHooks{geteuid: func() int { return tt.euid }})
		if err == nil {
			h.Close()
		}
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%s: New = %v; want an error containing %q", tt.name, err, tt.wantErr)
		}
	}
	if after := snapshot(t, prefix); !reflect.DeepEqual(after, before) {
		t.Errorf("bad input created %+v", after)
	}
}

// mountsBelow returns the mount points at dir or beneath it.
func mountsBelow(t *testing.T, dir string) []string {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b, err := os.ReadFile("/proc/thread-self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && (f[4] == dir || strings.HasPrefix(f[4], dir+"/")) {
			out = append(out, f[4])
		}
	}
	return out
}

func TestMountsUnder(t *testing.T) {
	info := `22 1 0:21 / /run rw,nosuid shared:5 - tmpfs tmpfs rw
100 22 0:50 / /run/bench-run-1/origin/www rw - tmpfs tmpfs rw
101 100 0:51 / /run/bench-run-1/origin/www/deep rw - tmpfs tmpfs rw
102 22 0:52 / /run/bench-run-10/x rw - tmpfs tmpfs rw
103 22 0:53 / /run/bench-run-1/with\040space rw - tmpfs tmpfs rw
104 22 0:54 / /run/bench-run-1 rw - tmpfs tmpfs rw
`
	got := MountsUnder(info, "/run/bench-run-1")
	// Deepest first; the run directory itself too; not a sibling whose
	// name starts alike.
	want := []string{"/run/bench-run-1/origin/www/deep", "/run/bench-run-1/origin/www", "/run/bench-run-1/with space", "/run/bench-run-1"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("MountsUnder = %q; want %q", got, want)
	}
}

// The lock file is never removed, so that no two processes ever lock
// different files of the same name: Close and Clean clear it.
func TestLockKeptAndCleared(t *testing.T) {
	testenv.NeedRoot(t, "makes network namespaces and cgroups")
	prefix := testPrefix(t)
	h, err := New(Config{Prefix: prefix, Layout: testLayout(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	var held syscall.Stat_t
	if err := syscall.Stat(lockPath(prefix), &held); err != nil {
		t.Fatal(err)
	}
	if st, err := readLockState(lockPath(prefix)); err != nil || st.PID != os.Getpid() {
		t.Errorf("lock state while up = %+v, %v; want this process's", st, err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	for _, step := range []string{"Close", "Clean"} {
		if step == "Clean" {
			if removed, err := Clean(prefix); err != nil || len(removed) > 0 {
				t.Errorf("Clean after Close = %v, %v; want nothing", removed, err)
			}
		}
		var after syscall.Stat_t
		if err := syscall.Stat(lockPath(prefix), &after); err != nil {
			t.Fatalf("lock after %s: %v; want it kept", step, err)
		}
		if after.Ino != held.Ino || after.Size != 0 {
			t.Errorf("lock after %s: inode %d, %d bytes; want the same inode %d, empty", step, after.Ino, after.Size, held.Ino)
		}
	}
	// An empty lock means nothing recorded: a new host starts cleanly.
	h2, err := New(Config{Prefix: prefix, Layout: testLayout(t)})
	if err != nil {
		t.Fatalf("New after Close: %v", err)
	}
	if len(h2.stale) > 0 {
		t.Errorf("New after a clean Close found %v left", h2.stale)
	}
	if err := h2.Close(); err != nil {
		t.Fatal(err)
	}
}

// Stop after the process exited signals no group by its ID (it may have
// been given to another process), yet ends the group's workers that
// outlived the leader; the host forgets reaped processes.
func TestStopAfterExit(t *testing.T) {
	h := newTestHost(t)
	var mu sync.Mutex
	var groups []int
	h.kill = func(pid int, sig syscall.Signal) error {
		if pid < 0 {
			mu.Lock()
			groups = append(groups, -pid)
			mu.Unlock()
		}
		return syscall.Kill(pid, sig)
	}
	if err := h.Run(context.Background(), RoleClient, ProcSpec{Argv: []string{"true"}}); err != nil {
		t.Fatal(err)
	}
	// A leader that leaves a worker of its group behind.
	var out strings.Builder
	p, err := h.Start(RoleProxy, ProcSpec{Argv: []string{"sh", "-c", "sleep 1000 >/dev/null 2>&1 & echo $!"}, Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	<-p.Done()
	worker, err := strconv.Atoi(strings.TrimSpace(out.String()))
	if err != nil {
		t.Fatalf("worker's PID: %q", out.String())
	}
	t.Cleanup(func() { syscall.Kill(worker, syscall.SIGKILL) })
	if !processAlive(worker) || processGroup(worker) != p.PID() {
		t.Fatalf("worker %d: alive %v, group %d; want alive in group %d", worker, processAlive(worker), processGroup(worker), p.PID())
	}
	h.procsMu.Lock()
	left := len(h.procs)
	h.procsMu.Unlock()
	if left != 0 {
		t.Errorf("host follows %d processes after both were reaped; want none", left)
	}
	if err := p.Stop(time.Second); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(groups) > 0 {
		t.Errorf("Stop after the leader was reaped signalled groups %v by ID", groups)
	}
	mu.Unlock()
	for end := time.Now().Add(5 * time.Second); processAlive(worker) && time.Now().Before(end); {
		time.Sleep(5 * time.Millisecond)
	}
	if processAlive(worker) {
		t.Errorf("worker %d of the stopped group is alive", worker)
	}
}

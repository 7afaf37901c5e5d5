package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"bench/harness/host"
	"bench/internal/hostlab"
	"bench/internal/testenv"
	"bench/scenarios"

	"golang.org/x/sys/unix"
)

// TestAgentOnLabHost: a session's hold on a host of its own, through the
// lab's sshd: bench copied by its hash, a role placed on the CPUs named
// and a process started there in the host's own network, files written
// and read back beneath the run directory only, the host's clock, and
// at Close nothing left: no process, cgroup, run directory or copy.
func TestAgentOnLabHost(t *testing.T) {
	testenv.NeedRoot(t, "the hosts' lab: network namespaces and sshd")
	testenv.NeedProgram(t, hostlab.Sshd)
	lab := hostlab.New(t, hostlab.Option{})
	h := lab.Hosts[0]
	prefix := testenv.Prefix(t)
	t.Cleanup(func() { forget(prefix) })
	ctx := context.Background()
	r, err := host.Deploy(ctx, host.SSH{Dest: host.Destination{Host: h.Addr}, Config: lab.Config}, prefix)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	self, _ := os.Executable()
	if same(t, self, filepath.Join(r.Dir, "bench")); !strings.HasPrefix(filepath.Base(r.Dir), prefix+"agent.") {
		t.Errorf("the agent's folder %s is not named by the session's prefix %s", r.Dir, prefix)
	}
	online, _ := host.OnlineCPUs()
	cpu := online[len(online)-1]
	var runDir string
	if err := r.Call(ctx, "Open", host.AgentOpen{Prefix: prefix, Layout: host.Layout{Proxy: []int{cpu}}}, &runDir); err != nil {
		t.Fatal(err)
	}
	var id int
	if err := r.Call(ctx, "Start", host.AgentStart{Role: host.RoleProxy, Argv: []string{"sleep", "600"}}, &id); err != nil {
		t.Fatal(err)
	}
	if err := r.Call(ctx, "Start", host.AgentStart{Role: host.RoleClient, Argv: []string{"sleep", "600"}}, &id); err == nil || !strings.Contains(err.Error(), "holds no client") {
		t.Errorf("a process in a role the host does not hold: %v; want it refused", err)
	}
	procs := h.Processes()
	sleep := -1
	for _, pid := range procs {
		if cmdline(pid) == "sleep 600" {
			sleep = pid
		}
	}
	if sleep < 0 {
		t.Fatalf("no sleep among the lab host's processes %v", procs)
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(sleep, &set); err != nil || set.Count() != 1 || !set.IsSet(cpu) {
		t.Errorf("the proxy's process may run on %d CPUs (%v); want only CPU %d", set.Count(), err, cpu)
	}
	// files beneath the run directory only
	file := filepath.Join(runDir, "conf", "proxy.cfg")
	if err := r.Call(ctx, "Put", host.AgentFiles{Files: []host.AgentFile{{Path: file, Data: []byte("listen 1\n")}}}, nil); err != nil {
		t.Fatal(err)
	}
	var got host.AgentFiles
	if err := r.Call(ctx, "Get", host.AgentFiles{Files: []host.AgentFile{{Path: file}}}, &got); err != nil || len(got.Files) != 1 || string(got.Files[0].Data) != "listen 1\n" {
		t.Errorf("the file read back: %v, %+v", err, got)
	}
	for _, p := range []string{"/etc/passwd", runDir + "/../x", "conf/proxy.cfg"} {
		if err := r.Call(ctx, "Get", host.AgentFiles{Files: []host.AgentFile{{Path: p}}}, &got); err == nil {
			t.Errorf("Get %s outside the run directory: no error", p)
		}
	}
	// a link a process planted in the run directory leads nowhere out
	// of it (the host's /run is a folder of the lab's)
	planted := filepath.Join(h.Run(), filepath.Base(runDir), "evil")
	if err := os.Symlink("/etc", planted); err != nil {
		t.Fatal(err)
	}
	if err := r.Call(ctx, "Put", host.AgentFiles{Files: []host.AgentFile{{Path: runDir + "/evil/bench-test", Data: []byte("x")}}}, nil); err == nil {
		t.Errorf("Put through a link to /etc: no error")
	}
	var through host.AgentFiles
	r.Call(ctx, "Get", host.AgentFiles{Files: []host.AgentFile{{Path: runDir + "/evil/hostname"}}}, &through)
	if _, err := os.Stat("/etc/bench-test"); err == nil || len(through.Files) > 0 {
		t.Errorf("a link out of the run directory was followed: /etc/bench-test %v, read %d files", err, len(through.Files))
	}
	// its interface on the data path, as its own namespace has it
	var nic host.NICFacts
	if err := r.Call(ctx, "NIC", host.AgentNIC{Data: h.Data}, &nic); err != nil || nic.Name != hostlab.DataNIC || nic.Driver != "veth" ||
		nic.MTU != 1500 || !slices.Contains(nic.Queues, "rx-0 rps none") {
		t.Errorf("the lab host's data interface: %+v, %v; want %s, veth, MTU 1500, its rx queue without RPS", nic, err, hostlab.DataNIC)
	}
	// the host's clock is this machine's: the offset measured is within
	// half the round trip it was read in
	offset, rtt, err := r.Clock(ctx, 5)
	if err != nil || offset.Abs() > rtt/2 || rtt <= 0 {
		t.Errorf("the lab host's clock: offset %v, round trip %v, %v; want |offset| <= rtt/2", offset, rtt, err)
	}
	if err := r.Close(); err != nil {
		t.Error(err)
	}
	waitNothingLeft(t, lab, prefix)
}

// same fails the test unless files a and b hold the same bytes.
func same(t *testing.T, a, b string) {
	t.Helper()
	da, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	db, err := os.ReadFile(b)
	if err != nil || !bytes.Equal(da, db) {
		t.Errorf("the copy %s is not %s (%v)", b, a, err)
	}
}

// cmdline is a process's command line, its arguments joined by spaces.
func cmdline(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
}

// labLeftovers lists what sessions with prefix have on the lab's hosts: the
// processes in their namespaces but their sshd listeners, the agents'
// folders, the cgroups and the run directories of the prefix.
func labLeftovers(lab *hostlab.Lab, prefix string) []string {
	var left []string
	for _, h := range lab.Hosts {
		for _, pid := range h.Processes() {
			left = append(left, fmt.Sprintf("%s: process %d %q", h.Name, pid, cmdline(pid)))
		}
	}
	for _, h := range lab.Hosts {
		folders, _ := filepath.Glob(filepath.Join(h.Tmp(), prefix+"agent.*"))
		runs, _ := filepath.Glob(filepath.Join(h.Run(), prefix+"run-*"))
		left = append(append(left, folders...), runs...)
	}
	filepath.WalkDir("/sys/fs/cgroup", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if strings.HasPrefix(d.Name(), prefix) {
			left = append(left, "cgroup "+p)
			return filepath.SkipDir
		}
		return nil
	})
	return left
}

// waitNothingLeft waits until sessions with prefix have nothing left on
// the lab's hosts, and fails the test with what stays where something
// does: an agent whose session is gone tears down within AgentIdle and
// its own grace.
func waitNothingLeft(t *testing.T, lab *hostlab.Lab, prefix string) {
	t.Helper()
	deadline := time.Now().Add(3 * (host.AgentIdle + 5*time.Second))
	for {
		left := labLeftovers(lab, prefix)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("left on the lab's hosts:\n%s", strings.Join(left, "\n"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// orchestrateEnv runs the test binary as bench run across the lab's
// hosts (orchestrate): its value is the prefix, the lab's ssh config,
// the hosts file, the session's folder and, optionally, the column and
// the repetitions (nginx, 3).
const orchestrateEnv = "BENCH_TEST_ORCHESTRATE"

// orchestrate runs a session of http-ka-1k through nginx (or the column
// spec names), three runs (or as many as it names), across the hosts of
// the file spec names, and exits with its status.
func orchestrate(spec string) {
	f := append(strings.Fields(spec), "nginx", "3")
	err := dispatch(os.Stdout, os.Stderr, []string{"run", "--scenario", "http-ka-1k", "--proxy", f[4], "--reps", f[5],
		"--duration", "2s", "--warmup", "1s", "--prefix", f[0], "--ssh-config", f[1], "--hosts", f[2], "--out", f[3], "--machine", "lab"})
	os.Exit(exitStatus(err, os.Stderr))
}

// TestSessionKilled: a session across three lab hosts killed with
// SIGKILL at a random moment (while it checks the hosts, copies bench,
// places the roles, validates, starts the origin or runs), five times:
// each time nothing is left on any host (no process, folder, cgroup or
// run directory). Then one stopped (SIGSTOP: its connections open, no
// call on them): its agents tear down by themselves. Then bench clean
// --hosts removes what agents killed outright left (their cgroups and
// run directories).
func TestSessionKilled(t *testing.T) {
	testenv.NeedRoot(t, "the hosts' lab: network namespaces and sshd")
	testenv.NeedProgram(t, hostlab.Sshd)
	testenv.NeedProgram(t, scenarios.ToolWrk)
	testenv.NeedProgram(t, "nginx")
	lab := hostlab.New(t, hostlab.Option{}, hostlab.Option{}, hostlab.Option{})
	prefix := testenv.Prefix(t)
	t.Cleanup(func() { forget(prefix) })
	hosts := labHosts(t, lab)
	self, _ := os.Executable()
	// start starts the session; ran is closed once its first run ended
	start := func() (*exec.Cmd, <-chan struct{}) {
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), orchestrateEnv+"="+strings.Join([]string{prefix, lab.Config, hosts, t.TempDir()}, " "))
		progress, _ := cmd.StderrPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ran := make(chan struct{})
		go func() {
			sc, once := bufio.NewScanner(progress), false
			for sc.Scan() {
				if strings.HasPrefix(sc.Text(), "[1/3]") && !once {
					close(ran)
					once = true
				}
			}
		}()
		return cmd, ran
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	for range 5 {
		cmd, ran := start()
		// the hosts checked and placed, the first run done in about 6 s
		// here: a moment within 8 s finds the session at any of its steps
		after := time.Duration(rng.Int64N(int64(8 * time.Second)))
		time.Sleep(after)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		select {
		case <-ran:
			t.Logf("killed after %v, its first run done", after.Round(time.Millisecond))
		default:
			t.Logf("killed after %v, before its first run ended", after.Round(time.Millisecond))
		}
		waitNothingLeft(t, lab, prefix)
	}
	// stopped, its connections open: the agents hear nothing
	cmd, ran := start()
	<-ran
	cmd.Process.Signal(syscall.SIGSTOP)
	waitNothingLeft(t, lab, prefix)
	cmd.Process.Kill()
	cmd.Wait()
	// agents killed outright leave their cgroups and run directories
	// (their processes die with them, their shells remove their folders)
	cmd, ran = start()
	<-ran
	for _, h := range lab.Hosts {
		for _, pid := range h.Processes() {
			if strings.Contains(cmdline(pid), "/bench agent /") {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	var stdout, stderr bytes.Buffer
	err := dispatch(&stdout, &stderr, []string{"clean", "--hosts", hosts, "--ssh-config", lab.Config, "--prefix", prefix})
	cmd.Process.Kill()
	cmd.Wait()
	if err != nil {
		t.Fatalf("bench clean --hosts: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	for _, h := range lab.Hosts {
		if !slices.ContainsFunc(strings.Split(stdout.String(), "\n"), func(l string) bool { return strings.HasPrefix(l, h.Addr+": removed ") }) {
			t.Errorf("bench clean --hosts removed nothing on %s:\n%s", h.Addr, stdout.String())
		}
	}
	waitNothingLeft(t, lab, prefix)
}

// forget removes what a session of prefix left on this machine (a
// killed one's run directory) and its lock file.
func forget(prefix string) {
	host.Clean(prefix)
	host.ForgetPrefix(prefix)
}

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
	t.Cleanup(func() { host.ForgetPrefix(prefix) })
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

// orchestrateEnv runs the test binary as a session that places a role on
// each of the lab's hosts and holds them (orchestrate): its value is the
// prefix, the lab's ssh config and the hosts' addresses.
const orchestrateEnv = "BENCH_TEST_ORCHESTRATE"

// orchestrate deploys to each host, opens its proxy role on its last CPU
// and starts a process in it, says so on stdout a line a host, then waits
// to be killed.
func orchestrate(spec string) {
	f := strings.Fields(spec)
	prefix, config := f[0], f[1]
	online, _ := host.OnlineCPUs()
	ctx := context.Background()
	for _, addr := range f[2:] {
		r, err := host.Deploy(ctx, host.SSH{Dest: host.Destination{Host: addr}, Config: config}, prefix)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		var runDir string
		var id int
		if err := r.Call(ctx, "Open", host.AgentOpen{Prefix: prefix, Layout: host.Layout{Proxy: online[len(online)-1:]}}, &runDir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := r.Call(ctx, "Start", host.AgentStart{Role: host.RoleProxy, Argv: []string{"sleep", "600"}}, &id); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("placed", addr)
	}
	select {}
}

// TestAgentsOrchestratorKilled: a session holding roles on three lab
// hosts, killed with SIGKILL at a random moment (while it copies bench,
// starts an agent, places a role or holds them), five times: each time
// nothing is left on any host. Then one stopped (SIGSTOP: its
// connections open, no call on them): its agents tear down by
// themselves. Then bench clean --hosts removes what an agent killed
// outright left (its folder, cgroups and run directory).
func TestAgentsOrchestratorKilled(t *testing.T) {
	testenv.NeedRoot(t, "the hosts' lab: network namespaces and sshd")
	testenv.NeedProgram(t, hostlab.Sshd)
	lab := hostlab.New(t, hostlab.Option{}, hostlab.Option{}, hostlab.Option{})
	prefix := testenv.Prefix(t)
	t.Cleanup(func() { host.ForgetPrefix(prefix) })
	spec := prefix + " " + lab.Config
	for _, h := range lab.Hosts {
		spec += " " + h.Addr
	}
	self, _ := os.Executable()
	start := func() (*exec.Cmd, *bufio.Scanner) {
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), orchestrateEnv+"="+spec)
		out, _ := cmd.StdoutPipe()
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, bufio.NewScanner(out)
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	for range 5 {
		cmd, out := start()
		// the whole placement takes a second or so here: a moment
		// within 4 s finds it at any of its steps, or holding them
		after := time.Duration(rng.Int64N(int64(4 * time.Second)))
		time.Sleep(after)
		cmd.Process.Signal(syscall.SIGKILL)
		placed := 0
		for out.Scan() {
			placed++
		}
		cmd.Wait()
		t.Logf("killed after %v, %d of %d hosts placed", after.Round(time.Millisecond), placed, len(lab.Hosts))
		waitNothingLeft(t, lab, prefix)
	}
	// stopped, its connections open: the agents hear nothing
	cmd, out := start()
	for range lab.Hosts {
		if !out.Scan() {
			t.Fatalf("the session did not place its roles")
		}
	}
	cmd.Process.Signal(syscall.SIGSTOP)
	waitNothingLeft(t, lab, prefix)
	cmd.Process.Kill()
	cmd.Wait()
	// an agent killed outright (SIGKILL) leaves its cgroups and run
	// directory, and its shell the folder until it sees it end: bench
	// clean --hosts removes them
	cmd, out = start()
	for range lab.Hosts {
		if !out.Scan() {
			t.Fatalf("the session did not place its roles")
		}
	}
	for _, h := range lab.Hosts {
		for _, pid := range h.Processes() {
			if strings.Contains(cmdline(pid), "/bench agent /") {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	hosts := filepath.Join(lab.Dir, "hosts")
	var lines []string
	for i, h := range lab.Hosts {
		lines = append(lines, fmt.Sprintf("%s %s data=10.1.0.%d", []string{"client", "proxy", "origin"}[i], h.Addr, i+1))
	}
	if err := os.WriteFile(hosts, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
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

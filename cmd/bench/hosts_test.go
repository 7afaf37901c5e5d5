package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"bench/harness/host"
	"bench/internal/hostlab"
	"bench/internal/testenv"
	"bench/results"
	"bench/scenarios"
)

// TestCheckHosts: bench check --hosts on the lab's hosts, each a network
// namespace with its own sshd: hosts that have what their roles need
// pass; a host whose key known_hosts has not, one without wrk and one
// where nothing listens are each refused by name, exit 2, before any
// session; and a hosts file that cannot be read says its line.
func TestCheckHosts(t *testing.T) {
	testenv.NeedRoot(t, "the hosts' lab: network namespaces and sshd")
	testenv.NeedProgram(t, hostlab.Sshd)
	testenv.NeedProgram(t, scenarios.ToolWrk)
	lab := hostlab.New(t, hostlab.Option{}, hostlab.Option{Hide: []string{scenarios.ToolWrk}}, hostlab.Option{Unknown: true}, hostlab.Option{Down: true})
	good, noWrk, unknown, down := lab.Hosts[0], lab.Hosts[1], lab.Hosts[2], lab.Hosts[3]
	write := func(name, text string) string {
		p := filepath.Join(lab.Dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	check := func(file string, more ...string) (int, string, string) {
		var stdout, cmdErr, stderr bytes.Buffer
		status := exitStatus(dispatch(&stdout, &cmdErr, append([]string{"check", "--hosts", file, "--ssh-config", lab.Config}, more...)), &stderr)
		return status, stdout.String(), stderr.String()
	}
	// one host with the three roles, and the same with two client hosts
	ok := write("ok", fmt.Sprintf("client %s data=10.1.0.1 cpus=0\nproxy %s data=10.1.0.1\norigin %s data=10.1.0.1\n", good.Addr, good.Addr, good.Addr))
	if status, out, says := check(ok); status != exitOK || !regexp.MustCompile(`(?m)^`+regexp.QuoteMeta(good.Addr)+` +ok +reached: Linux`).MatchString(out) {
		t.Errorf("a host with every role: exit %d, %s\n%s; want 0, the host reached", status, says, out)
	} else if m := host.DescribeMachine(); !strings.Contains(out, good.Addr+": "+host.MachineItem) || m.CPUModel != "" && !strings.Contains(out, host.ModelLabel(m.CPUModel, "")) {
		// the lab's hosts are this machine: the label its CPU model's
		t.Errorf("a host with every role: its machine not said, or not by its CPU model %q:\n%s", m.CPUModel, out)
	}
	bad := write("bad", fmt.Sprintf("client %s data=10.1.0.2\nproxy %s data=10.1.0.3\norigin %s data=10.1.0.4 # down\n", noWrk.Addr, unknown.Addr, down.Addr))
	status, out, says := check(bad)
	if status != exitUsage {
		t.Errorf("hosts that lack: exit %d; want %d", status, exitUsage)
	}
	for _, want := range []string{
		noWrk.Addr + ": wrk", "missing", // the host without wrk, by name
		unknown.Addr, "its host key is not in known_hosts", "--accept-new-host-keys", // the unknown key
		down.Addr, "it cannot be reached", // nothing listening
	} {
		if !strings.Contains(out, want) {
			t.Errorf("hosts that lack: %q not in\n%s", want, out)
		}
	}
	for _, want := range []string{"bad: a session cannot use these hosts: ", noWrk.Addr + ": wrk", unknown.Addr, down.Addr} {
		if !strings.Contains(says, want) {
			t.Errorf("hosts that lack: %q not in %q", want, says)
		}
	}
	// CPUs the host has not
	cpus := write("cpus", fmt.Sprintf("client %s data=10.1.0.1 cpus=0,8190\nproxy %s data=10.1.0.1\norigin %s data=10.1.0.1\n", good.Addr, good.Addr, good.Addr))
	if status, out, _ := check(cpus); status != exitUsage || !strings.Contains(out, "cpus, line 1: cpus=0,8190 names CPUs it does not have: 8190") {
		t.Errorf("CPUs it has not: exit %d\n%s; want 2, the line named", status, out)
	}
	// a file that cannot be read: its line, before any host is asked
	broken := write("broken", "client "+good.Addr+" data=10.1.0.1\nproxy "+good.Addr+"\n")
	if status, out, says := check(broken); status != exitUsage || out != "" || !strings.Contains(says, "broken:2: \"proxy "+good.Addr+"\": want ROLE DESTINATION data=ADDRESS") {
		t.Errorf("a broken file: exit %d, %q, %q; want 2 and its line", status, out, says)
	}
}

// TestRunRefusesHosts: bench run --hosts refuses, before its first run
// and by name, exit 2, a host whose key known_hosts has not, one without
// wrk and one where nothing listens.
func TestRunRefusesHosts(t *testing.T) {
	testenv.NeedRoot(t, "the hosts' lab: network namespaces and sshd")
	testenv.NeedProgram(t, hostlab.Sshd)
	testenv.NeedProgram(t, scenarios.ToolWrk)
	lab := hostlab.New(t, hostlab.Option{Hide: []string{scenarios.ToolWrk}}, hostlab.Option{Unknown: true}, hostlab.Option{Down: true})
	noWrk, unknown, down := lab.Hosts[0], lab.Hosts[1], lab.Hosts[2]
	hosts := filepath.Join(lab.Dir, "hosts")
	text := fmt.Sprintf("client %s data=%s\nproxy %s data=%s\norigin %s data=%s\n", noWrk.Addr, noWrk.Data, unknown.Addr, unknown.Data, down.Addr, down.Data)
	if err := os.WriteFile(hosts, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	err := dispatch(&stdout, &stderr, []string{"run", "--scenario", "http-ka-1k", "--proxy", "nginx", "--out", out, "--session", "refused",
		"--prefix", testenv.Prefix(t), "--hosts", hosts, "--ssh-config", lab.Config})
	var says bytes.Buffer
	if status := exitStatus(err, &says); status != exitUsage {
		t.Fatalf("bench run on hosts that lack: exit %d, %v; want 2", status, err)
	}
	for _, want := range []string{noWrk.Addr + ": wrk", unknown.Addr, "its host key is not in known_hosts", down.Addr, "it cannot be reached"} {
		if !strings.Contains(says.String(), want) {
			t.Errorf("%q not in what bench run said:\n%s", want, says.String())
		}
	}
	if strings.Contains(stderr.String(), "[1/") {
		t.Errorf("a run began:\n%s", stderr.String())
	}
	if csvs, _ := filepath.Glob(filepath.Join(out, "*.csv")); len(csvs) > 0 {
		t.Errorf("a session file was written: %v", csvs)
	}
}

// A load the client hosts cannot share (iperf3's streams, one test at a
// time at the origin; openssl's handshakes) is refused before any host
// is reached, naming it, exit 2.
func TestRunRefusesUnsharedLoads(t *testing.T) {
	hosts := filepath.Join(t.TempDir(), "hosts")
	text := "client a data=192.0.2.1\nclient b data=192.0.2.2\nproxy c data=192.0.2.3\norigin d data=192.0.2.4\n"
	if err := os.WriteFile(hosts, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	err := dispatch(&stdout, &stderr, []string{"run", "--scenario", "http-ka-1k,relay-stream1,relay-stream16,tls-handshake-full", "--proxy", "nginx", "--out", t.TempDir(),
		"--prefix", testenv.Prefix(t), "--hosts", hosts, "--dry-run"})
	var says bytes.Buffer
	if status := exitStatus(err, &says); status != exitUsage {
		t.Fatalf("bench run of streams over two client hosts: exit %d, %v; want 2", status, err)
	}
	for _, want := range []string{"relay-stream1: its iperf3 streams (1) cannot be split over 2 client hosts",
		"tls-handshake-full: its handshakes are one connection at a time", "relay-stream16: its 16 streams run from one client host"} {
		if !strings.Contains(says.String(), want) {
			t.Errorf("%q not in what bench run said:\n%s", want, says.String())
		}
	}
	if strings.Contains(says.String(), "http-ka-1k") {
		t.Errorf("http-ka-1k, which the hosts share, named among the refused:\n%s", says.String())
	}
}

// A column whose proxy the proxy's host has not is refused before the
// first run, naming the column and the host, exit 2: a packaged proxy
// by its names, a columns file's binary= by its path.
func TestRunRefusesColumnNotOnHost(t *testing.T) {
	testenv.NeedRoot(t, "the hosts' lab: network namespaces and sshd")
	testenv.NeedProgram(t, hostlab.Sshd)
	testenv.NeedProgram(t, scenarios.ToolWrk)
	testenv.NeedProgram(t, "squid")
	testenv.NeedProgram(t, "nginx")
	nginx, err := exec.LookPath("nginx")
	if err != nil {
		t.Fatal(err)
	}
	// a build of the user's, here and not on the proxy's host
	mine := filepath.Join(t.TempDir(), "nginx-mine")
	b, err := os.ReadFile(nginx)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mine, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cols := filepath.Join(t.TempDir(), "columns")
	if err := os.WriteFile(cols, []byte(fmt.Sprintf("mine nginx binary=%s\ntheirs nginx binary=%s\n", mine, nginx)), 0o644); err != nil {
		t.Fatal(err)
	}
	lab := hostlab.New(t, hostlab.Option{}, hostlab.Option{Hide: []string{"squid", mine}}, hostlab.Option{})
	hosts := labHosts(t, lab)
	p := lab.Hosts[1]
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	err = dispatch(&stdout, &stderr, []string{"run", "--scenario", "http-ka-1k", "--proxy", "nginx,squid,mine,theirs", "--columns", cols, "--out", out,
		"--session", "refused", "--prefix", testenv.Prefix(t), "--hosts", hosts, "--ssh-config", lab.Config})
	var says bytes.Buffer
	if status := exitStatus(err, &says); status != exitUsage || !strings.Contains(says.String(), "squid: squid is not on "+p.Addr) ||
		!strings.Contains(says.String(), "mine: "+mine+" is not on "+p.Addr) {
		t.Fatalf("bench run of squid and a build of one's own on a proxy host without them: exit %d, %q; want 2, naming each and the host", status, says.String())
	}
	if strings.Contains(says.String(), "nginx:") || strings.Contains(says.String(), "theirs:") || strings.Contains(stderr.String(), "[1/") {
		t.Errorf("nginx or a build on the host named among the refused, or a run began:\n%s%s", says.String(), stderr.String())
	}
}

// A proxy on the proxy's host and not on the machine bench runs from is
// a column all the same: the proxies are looked for where they run. The
// session runs from a mount namespace where tinyproxy is /dev/null.
func TestRunFindsColumnOnHost(t *testing.T) {
	testenv.NeedRoot(t, "the hosts' lab: network namespaces and sshd")
	testenv.NeedProgram(t, hostlab.Sshd)
	testenv.NeedProgram(t, scenarios.ToolWrk)
	testenv.NeedProgram(t, "tinyproxy")
	tinyproxy, err := exec.LookPath("tinyproxy")
	if err != nil {
		t.Fatal(err)
	}
	lab := hostlab.New(t, hostlab.Option{}, hostlab.Option{}, hostlab.Option{})
	hosts := labHosts(t, lab)
	prefix := testenv.Prefix(t)
	t.Cleanup(func() { forget(prefix) })
	out := t.TempDir()
	self, _ := os.Executable()
	cmd := exec.Command("unshare", "--mount", "--propagation", "private", "--", "sh", "-c", `mount --bind /dev/null "$1" && exec "$2"`, "sh", tinyproxy, self)
	cmd.Env = append(os.Environ(), orchestrateEnv+"="+strings.Join([]string{prefix, lab.Config, hosts, out, "tinyproxy", "1"}, " "))
	said, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bench run of tinyproxy, on the proxy's host only: %v\n%s", err, said)
	}
	csvs, _ := filepath.Glob(filepath.Join(out, "*.csv"))
	rows, err := results.ReadFiles(csvs)
	if err != nil || len(rows) != 1 || rows[0].Proxy != "tinyproxy" || rows[0].Status != results.OK || rows[0].Requests == 0 {
		t.Fatalf("the session's rows %+v (%v); want tinyproxy's, ok\n%s", rows, err, said)
	}
	waitNothingLeft(t, lab, prefix)
}

//go:build vmtest

package main

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"bench/internal/hostlab"
	"bench/internal/testenv"
	"bench/results"
)

// The hosts' lab under systemd and cgroup v2: built only for the VM test
// (vmtest/, go test -c -tags vmtest), which runs it on Debian 13 booted
// with systemd as init, where each lab host's agent places its roles in
// a scope systemd delegates to it.

// vmLabFamilies are the lab session's scenarios in the VM: a scenario of
// each mode family Debian 13's packages serve (no dante, so no SOCKS),
// streams where software emulation cannot complete 64 connections'
// handshakes (vmtest's guestEnv says what was seen).
const (
	vmLabFamilies = "http-ka-1k,connect-ka-1k,relay-stream1,mix-http,tls-term-stream1-down," +
		"tls-tunnel-TLS_AES_128_GCM_SHA256-up,tls-handshake-full"
	vmLabColumns = "no proxy,nginx,squid,stunnel"
)

// TestLabUnderSystemd: a session across three lab hosts under systemd:
// every row ok, each host's roles in a scope of its own agent's, which
// systemd delegated, part of the login session (session-N.scope) the
// agent ran in; the tunnel's CPUs the hosts'; nothing left once it
// ends, on any host nor in systemd. Then a session whose service is stopped in the middle, as a
// runner cancels a job: its connections end with it, and each host's
// agent tears its roles down, leaving no unit, process, cgroup or
// copied binary.
func TestLabUnderSystemd(t *testing.T) {
	testenv.NeedRoot(t, "the hosts' lab: network namespaces and sshd")
	if _, err := os.Stat("/run/systemd/system"); err != nil {
		t.Fatalf("systemd is not this machine's init (%v): the VM test runs this test", err)
	}
	// each host's sshd opens its logins through PAM, as a host's does:
	// each login a session of its own, session-N.scope. root's user
	// manager runs throughout (linger), as on a host where root has
	// logged in: under software emulation its start holds the first
	// logins past ssh's keepalive of 3 s (bench's ServerAliveCountMax),
	// which then drops them.
	if out, err := exec.Command("loginctl", "enable-linger", "root").CombinedOutput(); err != nil {
		t.Fatalf("loginctl enable-linger root: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := exec.Command("journalctl", "-b", "--no-pager", "-n", "80").CombinedOutput()
			t.Logf("the journal's end:\n%s", out)
		}
		exec.Command("loginctl", "disable-linger", "root").Run()
	})
	login := hostlab.Option{PAM: true}
	lab := hostlab.New(t, login, login, login)
	hosts := labHosts(t, lab)
	prefix := testenv.Prefix(t)
	t.Cleanup(func() { forget(prefix) })
	scopes := watchScopes(lab, prefix)
	ts := runTestSession(t, prefix, t.TempDir(), "vmlab", vmLabFamilies, "--proxy", vmLabColumns, "--mix-conns", "100",
		"--reps", "1", "--duration", "3s", "--warmup", "1s", "--hosts", hosts, "--ssh-config", lab.Config)
	seen, bound := scopes()
	for _, r := range ts.rows {
		if r.Status != results.OK {
			t.Errorf("%s %s %s: %s: %s", r.Proxy, r.Mode, r.Load, r.Status, r.Note)
		}
	}
	if len(ts.rows) == 0 {
		t.Error("the session has no rows")
	}
	// the tunnel's CPUs are the hosts' (the client's one, the proxy's
	// CPU 1), not the VM's 8 of a session on one machine
	meta, err := results.ReadMeta(results.MetaPath(ts.csvPath))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(meta.Notes, func(n string) bool {
		return strings.HasPrefix(n, "tls-tunnel: the client has one CPU") && strings.HasSuffix(n, "the proxy's CPU 1")
	}) {
		t.Errorf("the session's notes %q; want the tunnel's CPUs on the hosts", meta.Notes)
	}
	var all []string
	for _, h := range lab.Hosts {
		if len(seen[h.Name]) != 1 {
			t.Errorf("host %s's roles ran in the scopes %v; want one of its agent's", h.Name, seen[h.Name])
		}
		all = append(all, seen[h.Name]...)
	}
	// each part of the login session its agent was started in, a
	// session of its own (host.scopeProperties: PartOf= a scope)
	sessions := map[string]bool{}
	for scope, to := range bound {
		m := regexp.MustCompile(`(?m)^PartOf=(session-\d+\.scope)$`).FindStringSubmatch(to)
		if m == nil {
			t.Errorf("scope %s is bound as %q; want PartOf=session-N.scope, the login session its agent ran in", scope, to)
			continue
		}
		sessions[m[1]] = true
	}
	if len(sessions) != len(bound) {
		t.Errorf("the hosts' scopes are bound as %v; want each to its own login session", bound)
	}
	slices.Sort(all)
	if len(slices.Compact(all)) != len(lab.Hosts) {
		t.Errorf("the hosts' scopes %v; want one each, none shared", seen)
	}
	t.Logf("the hosts' scopes: %v, bound to %v", seen, bound)
	waitNothingLeft(t, lab, prefix)
	noUnits(t, prefix)

	stopJob(t, lab, prefix, hosts)
	waitNothingLeft(t, lab, prefix)
	noUnits(t, prefix)
}

// stopJob runs a session across the lab's hosts from a service of its
// own and stops the service, as a runner cancels a job, once the load
// runs on the client's host.
func stopJob(t *testing.T, lab *hostlab.Lab, prefix, hosts string) {
	t.Helper()
	job := prefix + "job.service"
	self, _ := os.Executable()
	spec := strings.Join([]string{prefix, lab.Config, hosts, t.TempDir()}, " ")
	if out, err := exec.Command("systemd-run", "--quiet", "--collect", "--unit="+job, "--setenv="+orchestrateEnv+"="+spec, self).CombinedOutput(); err != nil {
		t.Fatalf("systemd-run: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("systemctl", "stop", job).Run() })
	client := lab.Hosts[0]
	deadline := time.Now().Add(5 * time.Minute)
	for !running(client, "wrk") {
		state, _ := exec.Command("systemctl", "show", "-P", "ActiveState", job).Output()
		if time.Now().After(deadline) || strings.TrimSpace(string(state)) != "active" {
			log, _ := exec.Command("journalctl", "-u", job, "--no-pager").CombinedOutput()
			t.Fatalf("the job's session is %s and ran no load on %s:\n%s", strings.TrimSpace(string(state)), client.Name, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if out, err := exec.Command("systemctl", "stop", job).CombinedOutput(); err != nil {
		t.Fatalf("systemctl stop %s: %v\n%s", job, err, out)
	}
}

// watchScopes watches the processes of the lab's hosts until the
// function it returns is called, which returns the systemd scopes of the
// prefix each host's processes were seen in, and the unit each scope
// was bound to (its BindsTo= and PartOf=).
func watchScopes(lab *hostlab.Lab, prefix string) func() (seen map[string][]string, bound map[string]string) {
	var (
		mu    sync.Mutex
		seen  = map[string][]string{}
		bound = map[string]string{}
		done  = make(chan struct{})
		wg    sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			for _, h := range lab.Hosts {
				for _, pid := range h.Processes() {
					b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
					for _, part := range strings.Split(strings.TrimSpace(string(b)), "/") {
						if strings.HasPrefix(part, prefix) && strings.HasSuffix(part, ".scope") {
							mu.Lock()
							if !slices.Contains(seen[h.Name], part) {
								seen[h.Name] = append(seen[h.Name], part)
								to, _ := exec.Command("systemctl", "show", "-p", "BindsTo", "-p", "PartOf", part).Output()
								bound[part] = strings.TrimSpace(string(to))
							}
							mu.Unlock()
						}
					}
				}
			}
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return func() (map[string][]string, map[string]string) {
		close(done)
		wg.Wait()
		return seen, bound
	}
}

// running says whether a process of the program name runs on lab host h.
func running(h *hostlab.Host, name string) bool {
	for _, pid := range h.Processes() {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err == nil && strings.TrimSpace(string(b)) == name {
			return true
		}
	}
	return false
}

// noUnits fails the test if systemd has a unit of the prefix loaded.
func noUnits(t *testing.T, prefix string) {
	t.Helper()
	out, err := exec.Command("systemctl", "list-units", "--all", "--no-legend", "--plain", prefix+"*").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "" {
		t.Errorf("systemd's units of the prefix (%v):\n%s", err, out)
	}
}

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/hostlab"
	"bench/internal/testenv"
	"bench/results"
	"bench/scenarios"
)

// labFamilies is a scenario of each mode family, and the columns that
// serve them between them, for the sessions across the lab's hosts.
const (
	labFamilies = "http-ka-1k,connect-ka-1k,socks-stream1-down,relay-ka-1k,mix-http,tls-term-ka-1k,tls-tunnel-TLS_AES_128_GCM_SHA256-up,tls-handshake-full"
	labColumns  = "no proxy,nginx,squid,dante,stunnel"
)

// TestSessionOnLabHosts: a session whose client, proxy and origin are
// each on a lab host of its own, reached over ssh, their processes
// placed by each host's agent and their traffic on the lab's data
// network, a scenario of each mode family: every row ok, with its
// figures and the roles' CPU; the hosts in the metadata and in Setup;
// nothing left on any host.
func TestSessionOnLabHosts(t *testing.T) {
	testenv.NeedRoot(t, "the hosts' lab: network namespaces and sshd")
	testenv.NeedProgram(t, hostlab.Sshd)
	for _, p := range []string{scenarios.ToolWrk, scenarios.ToolIperf3, "nginx", "squid", "danted", "stunnel"} {
		testenv.NeedProgram(t, p)
	}
	lab := hostlab.New(t, hostlab.Option{}, hostlab.Option{}, hostlab.Option{})
	c, p, o := lab.Hosts[0], lab.Hosts[1], lab.Hosts[2]
	hosts := filepath.Join(lab.Dir, "hosts")
	text := fmt.Sprintf("client %s data=%s cpus=0\nproxy %s data=%s cpus=1\norigin %s data=%s cpus=0\n", c.Addr, c.Data, p.Addr, p.Data, o.Addr, o.Data)
	if err := os.WriteFile(hosts, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	prefix := testenv.Prefix(t)
	ts := runTestSession(t, prefix, t.TempDir(), "hosts", labFamilies, "--proxy", labColumns, "--mix-conns", "200",
		"--reps", "1", "--duration", "2s", "--warmup", "1s", "--hosts", hosts, "--ssh-config", lab.Config)
	modes := map[results.Mode]bool{}
	for _, r := range ts.rows {
		modes[r.Mode] = true
		if r.Status != results.OK || r.Requests == 0 && r.Bytes == 0 || r.CPUProxy <= 0 && r.Kind != "direct" || r.CPUClient <= 0 {
			t.Errorf("%s %s %s: %s, %d requests, %d bytes, proxy %.2f s and client %.2f s of CPU, note %q; want ok with figures",
				r.Proxy, r.Mode, r.Load, r.Status, r.Requests, r.Bytes, r.CPUProxy, r.CPUClient, r.Note)
		}
	}
	if len(modes) != 8 {
		t.Errorf("the session ran the modes %v; want one of each family, 8", modes)
	}
	meta, err := results.ReadMeta(results.MetaPath(ts.csvPath))
	if err != nil {
		t.Fatal(err)
	}
	if len(meta.Hosts) != 3 || meta.Hosts[1].Destination != p.Addr || meta.Hosts[1].Layout != "proxy=1" || meta.Hosts[1].Kernel == "" {
		t.Errorf("the metadata's hosts %+v; want the three, the proxy's on %s with CPU 1", meta.Hosts, p.Addr)
	}
	if !strings.Contains(ts.report, "proxy on "+p.Addr+" (data "+p.Data) {
		t.Errorf("Setup does not name the proxy's host:\n%s", ts.report)
	}
	waitNothingLeft(t, lab, prefix)
}

// The command that continues an interrupted session across hosts gives
// the hosts again, in either form of a flag.
func TestHostsArgs(t *testing.T) {
	for _, c := range []struct {
		cmdline []string
		want    string
	}{
		{[]string{"bench", "run", "--scenario", "x"}, ""},
		{[]string{"bench", "run", "--hosts", "h.txt", "--ssh-config=lab.cfg", "--accept-new-host-keys", "--reps", "1"}, " --hosts h.txt --ssh-config lab.cfg --accept-new-host-keys"},
		{[]string{"bench", "run", "-hosts=h.txt"}, " --hosts h.txt"},
	} {
		if got := hostsArgs(c.cmdline); got != c.want {
			t.Errorf("hostsArgs(%q) = %q; want %q", c.cmdline, got, c.want)
		}
	}
}

package harness

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"bench/harness/host"
	"bench/proxies"
)

// A session's metadata asks each version of the role that runs the
// program, on its host: the columns' of the proxy's, the load tools' of
// the client's (on hosts of their own, each its host's).
func TestMetaVersionsByRole(t *testing.T) {
	var asked []string
	out := func(r host.Role, argv []string) string {
		if len(argv) == 0 {
			return ""
		}
		asked = append(asked, string(r)+" "+filepath.Base(argv[0]))
		if argv[0] == "cat" {
			return "ID=debian\n" // the client host's system
		}
		if r == host.RoleProxy {
			return "nginx version: nginx/9.9.9 (on the proxy's host)\n"
		}
		return "wrk 9.9.9 (on the client's host)\n"
	}
	cfg := SessionConfig{Columns: []proxies.Column{{Name: "nginx", Kind: "nginx"}}}
	m, err := newMeta(cfg, host.Layout{}, nil, nil, filepath.Join(t.TempDir(), "m.meta.json"), out)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Columns) != 1 || m.Columns[0].Version != "9.9.9" || !strings.Contains(m.Tools["wrk"], "on the client's host") {
		t.Errorf("columns %+v, tools %v; want nginx's version from the proxy's role, wrk's from the client's", m.Columns, m.Tools)
	}
	if !slices.Contains(asked, "proxy nginx") || !slices.Contains(asked, "client wrk") || !slices.Contains(asked, "client cat") || !slices.Contains(asked, "client dpkg-query") {
		t.Errorf("asked %v; want nginx of the proxy, wrk of the client, and proxychains4's package of the client's system", asked)
	}
}

// A session across hosts is the proxy's host's in its metadata: the
// machine the tables label is the one the proxy ran on, whatever machine
// bench ran from; each host records what it is.
func TestMetaMachineOfHosts(t *testing.T) {
	client := host.Machine{CPUModel: "client's CPU", CPUs: 4, MemoryBytes: 8 << 30, Kernel: "Linux 6.1.0", Arch: "amd64"}
	proxy := host.Machine{CPUModel: "proxy's CPU", Host: "Dell Inc. PowerEdge R650", CPUs: 32, MemoryBytes: 64 << 30, Kernel: "Linux 6.12.1", Arch: "amd64"}
	hosts := []host.PlacedHost{
		{Dest: host.Destination{User: "bench", Host: "c"}, Roles: []host.Role{host.RoleClient, host.RoleOrigin}, Facts: host.AgentFacts{Machine: client}},
		{Dest: host.Destination{User: "bench", Host: "p"}, Roles: []host.Role{host.RoleProxy}, Facts: host.AgentFacts{Machine: proxy}},
	}
	cfg := SessionConfig{}
	cfg.Machine = "Xeon lab"
	m, err := newMeta(cfg, host.Layout{}, hosts, nil, filepath.Join(t.TempDir(), "m.meta.json"), func(host.Role, []string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if m.Machine.Label != "Xeon lab" || m.Machine.CPUModel != proxy.CPUModel || m.Machine.CPUs != 32 || m.Machine.Host != proxy.Host {
		t.Errorf("the session's machine %+v; want the proxy's host's, labelled Xeon lab", m.Machine)
	}
	if len(m.Hosts) != 2 || m.Hosts[0].Machine == nil || m.Hosts[0].Machine.CPUModel != client.CPUModel || m.Hosts[0].Machine.MemoryBytes != 8<<30 ||
		m.Hosts[1].Machine == nil || m.Hosts[1].Machine.CPUModel != proxy.CPUModel {
		t.Errorf("the hosts %+v; want each with its machine", m.Hosts)
	}
}

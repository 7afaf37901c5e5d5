package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/harness/host"
)

// A session across hosts is labelled by its proxy's host, as the check
// of the hosts found it; not at all when that host was not reached.
func TestHostsLabel(t *testing.T) {
	hs, err := host.ParseHosts("hosts", strings.NewReader("client bench@c data=192.0.2.1\nproxy bench@p data=192.0.2.2\norigin bench@c data=192.0.2.1\n"))
	if err != nil {
		t.Fatal(err)
	}
	items := []host.CheckItem{
		{Name: "bench@c", OK: true}, {Name: "bench@c: " + host.MachineItem, Status: "AMD EPYC 7B13", OK: true},
		{Name: "bench@p", OK: true}, {Name: "bench@p: " + host.MachineItem, Status: "Intel Xeon Gold 6338", OK: true},
	}
	if got := HostsLabel(items, hs); got != "Intel Xeon Gold 6338" {
		t.Errorf("HostsLabel = %q; want the proxy's host's", got)
	}
	if got := HostsLabel(items[:2], hs); got != "" {
		t.Errorf("HostsLabel with the proxy's host unreached = %q; want none", got)
	}
}

// The proxies of a session across hosts are looked for on its proxy's
// host, at the paths its checks found; a columns file's binaries are
// left to be asked of that host, not looked for here.
func TestProxyHostFinder(t *testing.T) {
	hs, err := host.ParseHosts("hosts", strings.NewReader("client bench@c data=192.0.2.1\nproxy bench@p data=192.0.2.2\norigin bench@c data=192.0.2.1\n"))
	if err != nil {
		t.Fatal(err)
	}
	items := []host.CheckItem{
		{Name: "bench@p", OK: true},
		{Name: "bench@p: nginx", Status: "/opt/p/sbin/nginx", OK: true},
		{Name: "bench@p: haproxy", Status: "", OK: false},
		{Name: "bench@c: haproxy", Status: "/usr/sbin/haproxy", OK: true},
	}
	f := ProxyHostFinder(items, hs)
	cols, err := f.columns("", "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cols {
		names = append(names, c.Name)
		if c.Name == "nginx" && c.Binary != "/opt/p/sbin/nginx" {
			t.Errorf("nginx's binary %q; want the proxy's host's", c.Binary)
		}
	}
	if got := strings.Join(names, ","); got != "no proxy,nginx" {
		t.Errorf("the columns found on the proxy's host: %s; want no proxy,nginx (haproxy is on the client's only)", got)
	}
	file := filepath.Join(t.TempDir(), "columns")
	if err := os.WriteFile(file, []byte("mine 3proxy binary=/opt/p/bin/3proxy-not-here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := f.columns(file, "mine"); err != nil {
		t.Errorf("a columns file's binary, on the proxy's host only: %v; want it left to that host", err)
	}
	if _, err := (Finder{}).columns(file, "mine"); err == nil || !strings.Contains(err.Error(), "3proxy-not-here") {
		t.Errorf("the same file for a session here: %v; want the binary refused", err)
	}
	if got := f.on(); got != " on bench@p" {
		t.Errorf("on = %q", got)
	}
}

package harness

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"bench/harness/host"
	"bench/proxies"
	"bench/results"
	"bench/scenarios"
)

func TestOneLineCutsOnARune(t *testing.T) {
	s := strings.Repeat("a", 399) + "é" + strings.Repeat("b", 10)
	got := oneLine(s)
	if !utf8.ValidString(got) || got != strings.Repeat("a", 399)+"…" {
		t.Errorf("oneLine cut %q", got[390:])
	}
	if got := oneLine("  a\n b  "); got != "a b" {
		t.Errorf("oneLine = %q", got)
	}
}

// A run's rendered configurations and command lines are kept beside its
// output, the proxy's and a tunnel's client end's, as the adapter
// rendered them.
func TestKeepConfig(t *testing.T) {
	s := &runner{OutputDir: t.TempDir()}
	a, _ := proxies.Lookup("stunnel")
	col := proxies.Column{Name: "stunnel", Kind: "stunnel", Group: results.Copy}
	site := proxies.Site{Dir: t.TempDir(), ClientSide: host.ProxyClientAddr, OriginSide: host.ProxyOriginAddr, Origin: host.OriginAddr,
		MaxConns: 100, Descriptors: 1024, CertFile: "server.pem", KeyFile: "server.key", CAFile: "ca.pem"}
	server, err := a.Instance(col, results.TLSTerm, site)
	if err != nil {
		t.Fatal(err)
	}
	client, err := a.Instance(col, results.TLSInit, site)
	if err != nil {
		t.Fatal(err)
	}
	r := RunSpec{Index: 7, Rep: 2, Column: col, Scenario: scenarios.Scenario{Name: "tls-tunnel-plaintext-up"}}
	s.keepConfig(runName(r), []end{{host.RoleProxy, results.TLSTerm, site, server}, {host.RoleClient, results.TLSInit, site, client}})
	for who, inst := range map[string]proxies.Instance{"proxy": server, "peer": client} {
		for _, f := range inst.Files {
			p := filepath.Join(s.OutputDir, "0007-stunnel-tls-tunnel-plaintext-up-2."+who+"."+strings.ReplaceAll(f.Path, "/", "."))
			if b, err := os.ReadFile(p); err != nil || !bytes.Equal(b, f.Data) {
				t.Errorf("%s: %v; want the %s's rendered %s", p, err, who, f.Path)
			}
		}
		p := filepath.Join(s.OutputDir, "0007-stunnel-tls-tunnel-plaintext-up-2."+who+".argv")
		if b, err := os.ReadFile(p); err != nil || string(b) != strings.Join(inst.Argv, " ")+"\n" {
			t.Errorf("%s: %q, %v; want %q", p, b, err, inst.Argv)
		}
	}
}

// A proxy's configuration is sized for the catalog's largest load, not
// for a hard limit far beyond it (systemd's 524288 for services), and
// never beyond the limit.
func TestProxyLimit(t *testing.T) {
	most := 0
	for _, l := range catalogLoads() {
		most = max(most, l.Conns)
	}
	need := uint64(host.ProxyDescriptors(most, true))
	for _, c := range []struct{ hard, want uint64 }{
		{524288, need}, // a service under systemd
		{need, need},
		{20000, 20000}, // below what the mix needs: the session scales the mix down
		{1024, 1024},
	} {
		if got := proxyLimit(c.hard); got != c.want {
			t.Errorf("proxyLimit(%d) = %d; want %d", c.hard, got, c.want)
		}
	}
	if host.ProxyConns(need, true) < most || host.ProxyConns(need, false) < most {
		t.Errorf("a limit of %d holds %d connections splicing, %d copying; want %d each", need, host.ProxyConns(need, true), host.ProxyConns(need, false), most)
	}
}

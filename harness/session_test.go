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
	"bench/report/results"
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
	s := &Session{OutputDir: t.TempDir()}
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

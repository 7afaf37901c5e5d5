package scenarios

import (
	"bench/internal/golden"
	"bench/results"
	"bytes"
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// checkGolden compares got with testdata/name, or rewrites it with -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got)
}

// The topology's addresses, as the harness gives them.
var (
	topoProxy = func(m results.Mode) Target {
		t := TargetFor(m, false, "10.0.1.1", "10.0.2.2")
		t.CA = topoCA
		return t
	}
	topoDirect = Target{Direct: true, Origin: "10.0.2.2", CA: topoCA}
	topoCA     = "/run/bench/tls/ca.pem"
)

// dumpInvocation renders inv for a golden file: the command line, the
// environment and every file.
func dumpInvocation(inv Invocation) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "argv: %s\ngrace: %v\n", strings.Join(inv.Argv, " "), inv.Grace)
	for _, e := range inv.Env {
		fmt.Fprintf(&b, "env: %s\n", e)
	}
	var names []string
	for n := range inv.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "--- %s\n%s", n, inv.Files[n])
	}
	return b.Bytes()
}

// TestBuildGolden renders every scenario of the catalog through its
// proxy, and the command lines of the baseline.
func TestBuildGolden(t *testing.T) {
	const dir = "/run/bench/run-1"
	var direct bytes.Buffer
	for _, s := range Catalog() {
		inv, d, err := Build(s, topoProxy(s.Mode), 10*time.Second, dir)
		if err != nil {
			t.Fatalf("Build(%s) error: %v", s.Name, err)
		}
		if d.Tool() != s.Load.Tool {
			t.Errorf("Build(%s) driver %s; want %s", s.Name, d.Tool(), s.Load.Tool)
		}
		checkGolden(t, filepath.Join("build", s.Name+".golden"), dumpInvocation(inv))
		if !ForColumn(s, true) {
			continue // no baseline
		}
		inv, _, err = Build(s, topoDirect, 10*time.Second, dir)
		if err != nil {
			t.Fatalf("Build(%s, direct) error: %v", s.Name, err)
		}
		if len(inv.Files) > 0 && s.Load.Tool != ToolWrk || inv.Files[proxychainsConfFile] != nil {
			t.Errorf("Build(%s, direct) files %v; want only wrk's script", s.Name, inv.Files)
		}
		fmt.Fprintf(&direct, "%s: %s\n", s.Name, strings.Join(inv.Argv, " "))
	}
	checkGolden(t, "build/direct.golden", direct.Bytes())
}

// TestOriginGolden renders the origin's config and lists its files.
func TestOriginGolden(t *testing.T) {
	p := Origin("/run/bench/origin", "10.0.2.2", 3, OriginTLS{})
	var b bytes.Buffer
	fmt.Fprintf(&b, "validate: %s\n", strings.Join(p.Validate, " "))
	for _, s := range p.Servers {
		fmt.Fprintf(&b, "server: %s\n", strings.Join(s, " "))
	}
	fmt.Fprintf(&b, "ready: %s\n", strings.Join(p.Ready, " "))
	for _, f := range p.Files {
		fmt.Fprintf(&b, "file: %s %d bytes sha256 %x\n", f.Path, len(f.Data), sha256.Sum256(f.Data))
		if f.Path == OriginConf {
			checkGolden(t, "origin/nginx.conf", f.Data)
		}
	}
	checkGolden(t, "origin/plan.golden", b.Bytes())
	if !bytes.Equal(p.CA, originCertPEM) {
		t.Errorf("Origin().CA is not the origin's certificate")
	}
}

// TestProxychainsGolden renders the config for both tunnels.
func TestProxychainsGolden(t *testing.T) {
	for _, m := range []results.Mode{results.Connect, results.Socks} {
		c, err := chainFor(m, topoProxy(m))
		if err != nil {
			t.Fatal(err)
		}
		conf, err := proxychainsConfig(c)
		if err != nil {
			t.Fatal(err)
		}
		checkGolden(t, "proxychains/"+string(m)+".conf", conf)
	}
}

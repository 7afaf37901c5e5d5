package proxies

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/golden"
	"bench/results"
	"bench/scenarios"
)

// goldenEnv is the reference results' topology as the harness hands it to a proxy.
var goldenEnv = Site{
	Dir:         "/run/bench-golden/proxy",
	ClientSide:  "10.0.1.1",
	OriginSide:  "10.0.2.1",
	Origin:      "10.0.2.2",
	MaxConns:    9000,
	Descriptors: 20000,
	CertFile:    "/run/bench-golden/server.pem",
	KeyFile:     "/run/bench-golden/server.key",
	CAFile:      "/run/bench-golden/ca.pem",
	ServerName:  "origin.bench",
}

// goldenColumns are the columns whose plans are golden-tested in every
// mode their kind serves: each kind's plain column, and the variants
// whose options or flags change the config.
var goldenColumns = []Column{
	{Name: "no proxy", Kind: "direct", Group: results.Baseline},
	{Name: "devel", Kind: "3proxy", Binary: "/opt/3proxy/devel/bin/3proxy", Group: results.Splice},
	{Name: "1.0.1", Kind: "3proxy", Binary: "/opt/3proxy/1.0.1/bin/3proxy", Group: results.Copy,
		Flags: []string{"-ocTCP_NODELAY", "-osTCP_NODELAY"}},
	{Name: "0.9.4", Kind: "3proxy", Binary: "/opt/3proxy/0.9.4/bin/3proxy", Group: results.Copy,
		Options: []string{"ssl-plugin"}},
	{Name: "nginx", Kind: "nginx", Binary: "/usr/sbin/nginx", Group: results.Copy},
	{Name: "haproxy", Kind: "haproxy", Binary: "/usr/sbin/haproxy", Group: results.Copy},
	{Name: "haproxy splice-auto", Kind: "haproxy", Binary: "/usr/sbin/haproxy", Group: results.Splice,
		Options: []string{"splice-auto"}},
	{Name: "haproxy splice", Kind: "haproxy", Binary: "/usr/sbin/haproxy", Group: results.Splice,
		Options: []string{"splice"}},
	{Name: "envoy", Kind: "envoy", Binary: "/opt/envoy/bin/envoy", Group: results.Copy},
	{Name: "squid", Kind: "squid", Binary: "/usr/sbin/squid", Group: results.Copy},
	{Name: "tinyproxy", Kind: "tinyproxy", Binary: "/usr/bin/tinyproxy", Group: results.Copy},
	{Name: "dante", Kind: "dante", Binary: "/usr/sbin/danted", Group: results.Copy},
	{Name: "stunnel", Kind: "stunnel", Binary: "/usr/bin/stunnel", Group: results.Copy},
}

// restrictedColumns are the columns of goldenColumns whose TLS modes are
// golden-tested restricted too: the first of each kind.
var restrictedColumns = map[string]bool{"no proxy": true, "devel": true, "nginx": true, "haproxy": true,
	"envoy": true, "stunnel": true}

// dumpInstance is an instance as the golden files hold it: the command lines,
// the listeners and every file it writes.
func dumpInstance(p Instance) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "forward: %v\n", p.Forward)
	fmt.Fprintf(&b, "argv: %q\n", p.Argv)
	fmt.Fprintf(&b, "validate: %q\n", p.Validate)
	fmt.Fprintf(&b, "ready: %q\n", p.Ready)
	for _, f := range p.Files {
		fmt.Fprintf(&b, "\n===== %s (owner %q)\n%s", f.Path, f.Owner, f.Data)
	}
	return b.Bytes()
}

func goldenName(c Column, m results.Mode) string {
	name := strings.NewReplacer(" ", "_", ".", "_").Replace(c.Name)
	return filepath.Join("testdata", "golden", c.Kind+"--"+name+"--"+string(m)+".txt")
}

// TestGolden renders every column of goldenColumns in every mode its
// kind serves and compares with testdata/golden (go test -update
// rewrites them).
// The TLS modes of each kind's first column are rendered a second time
// as the tunnel and handshake scenarios restrict them (suites, groups,
// signature algorithms), into files named ...--restricted.txt.
func TestGolden(t *testing.T) {
	seen := map[string]bool{}
	restricted := goldenEnv
	restricted.TLS = scenarios.TLSParams{Key: scenarios.KeyRSA3072, Suites: "TLS_AES_256_GCM_SHA384",
		Groups: "X25519", SigAlgs: "rsa_pss_rsae_sha256"}
	for _, c := range goldenColumns {
		a, ok := Lookup(c.Kind)
		if !ok {
			t.Fatalf("Lookup(%q) failed", c.Kind)
		}
		for _, m := range a.Modes() {
			check := func(path string, env Site) {
				seen[filepath.Base(path)] = true
				t.Run(filepath.Base(path), func(t *testing.T) {
					p, err := a.Instance(c, m, env)
					if err != nil {
						t.Fatalf("Instance(%q, %s) = %v", c.Name, m, err)
					}
					golden.Check(t, path, dumpInstance(p))
				})
			}
			check(goldenName(c, m), goldenEnv)
			if (m == results.TLSTerm || m == results.TLSInit) && restrictedColumns[c.Name] {
				check(strings.TrimSuffix(goldenName(c, m), ".txt")+"--restricted.txt", restricted)
			}
		}
	}
	// No golden file outlives its case.
	files, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.txt"))
	for _, f := range files {
		if !seen[filepath.Base(f)] {
			if golden.Updating() {
				os.Remove(f)
				continue
			}
			t.Errorf("%s belongs to no case: remove it or go test -update", f)
		}
	}
}

// TestPlanRefuses checks that a mode a kind cannot serve and an unknown
// option fail with a message naming both.
func TestPlanRefuses(t *testing.T) {
	cases := []struct {
		c    Column
		m    results.Mode
		want string
	}{
		// nginx has no CONNECT
		{Column{Name: "nginx", Kind: "nginx"}, results.Connect, "nginx cannot serve mode connect"},
		// dante only SOCKS
		{Column{Name: "dante", Kind: "dante"}, results.HTTP, "dante cannot serve mode http"},
		// stunnel has no splice
		{Column{Name: "x", Kind: "stunnel", Options: []string{"splice"}}, results.TLSTerm, `stunnel has no option "splice" (it takes none)`},
		// a typo in haproxy's option
		{Column{Name: "h", Kind: "haproxy", Options: []string{"splice-aut"}}, results.HTTP, `haproxy has no option "splice-aut" (it knows splice, splice-auto)`},
		// the mix scenarios run through the plain mode: socks is not http
		{Column{Name: "squid", Kind: "squid"}, results.MixSocks, "squid cannot serve mode mix-socks"},
	}
	for _, tc := range cases {
		a, _ := Lookup(tc.c.Kind)
		_, err := a.Instance(tc.c, tc.m, goldenEnv)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Instance(%q, %s) = %v; want an error containing %q", tc.c.Name, tc.m, err, tc.want)
		}
	}
}

// TestMixModes checks that the mix scenarios render as their plain mode.
func TestMixModes(t *testing.T) {
	c := Column{Name: "devel", Kind: "3proxy", Binary: "/opt/3proxy"}
	for mix, plain := range map[results.Mode]results.Mode{
		results.MixHTTP: results.HTTP, results.MixConnect: results.Connect,
		results.MixSocks: results.Socks, results.MixRelay: results.Relay,
		results.MixTLS: results.TLSTerm,
	} {
		p1, err1 := ThreeProxy{}.Instance(c, mix, goldenEnv)
		p2, err2 := ThreeProxy{}.Instance(c, plain, goldenEnv)
		if err1 != nil || err2 != nil {
			t.Fatalf("Instance(%s), Plan(%s) = %v, %v", mix, plain, err1, err2)
		}
		if !bytes.Equal(bytes.Replace(dumpInstance(p1), []byte(mix), []byte(plain), 1), dumpInstance(p2)) {
			t.Errorf("Instance(%s) differs from Plan(%s) beyond the mode's name", mix, plain)
		}
	}
}

// TestVersions parses each proxy's version output as the machines print it.
func TestVersions(t *testing.T) {
	cases := []struct {
		kind, out, want string
	}{
		{"nginx", "nginx version: nginx/1.22.1\n", "1.22.1"},
		{"haproxy", "HAProxy version 2.6.12-1+deb12u4 2026/10/17 - https://haproxy.org/\nStatus: long-term\n", "2.6.12-1+deb12u4"},
		{"haproxy", "HA-Proxy version 2.0.33 2023/06/01\n", "2.0.33"},
		{"squid", "Squid Cache: Version 5.7\nService Name: squid\n", "5.7"},
		{"tinyproxy", "tinyproxy 1.11.1\n", "1.11.1"},
		{"dante", "Dante v1.4.2.  Copyright (c) 1997 - 2014 Inferno Nettverk A/S, Norway\n", "1.4.2"},
		{"stunnel", "stunnel 5.68 on x86_64-pc-linux-gnu platform\nCompiled with OpenSSL 3.0.8\n", "5.68"},
		{"3proxy", "3proxy-1.0.0\n", "1.0.0"},
		{"3proxy", "3proxy-0.9.4\n", "0.9.4"},
		{"envoy", "\nenvoy  version: 5f3e4bc9c1e7d4e0a1b2c3d4e5f60718293a4b5c/1.34.1/Clean/RELEASE/BoringSSL\n\n", "1.34.1/Clean/RELEASE/BoringSSL"},
		// no banner: the first line
		{"nginx", "something else\nmore\n", "something else"},
	}
	for _, tc := range cases {
		a, _ := Lookup(tc.kind)
		if got := a.ParseVersion([]byte(tc.out)); got != tc.want {
			t.Errorf("%s ParseVersion(%q) = %q; want %q", tc.kind, tc.out, got, tc.want)
		}
	}
}

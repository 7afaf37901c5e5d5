package proxies

import (
	"bytes"
	"strings"
	"testing"

	"bench/results"
)

// The proxies that cut half-closed exchanges through no directive of
// theirs say so; the others do not.
func TestHalfCloseCutters(t *testing.T) {
	cases := map[string]bool{"stunnel": true, "squid": true, "tinyproxy": true, "nginx": false, "haproxy": false}
	for kind, cuts := range cases {
		a, ok := Lookup(kind)
		if !ok {
			t.Fatalf("no adapter for %q", kind)
		}
		cutter, is := a.(HalfCloseCutter)
		if is != cuts {
			t.Errorf("%s: a HalfCloseCutter %v; want %v", kind, is, cuts)
			continue
		}
		if is && cutter.HalfCloseCut() == "" {
			t.Errorf("%s: HalfCloseCut says nothing", kind)
		}
	}
}

// squid's config leaves half_closed_clients off: on, squid before 7
// aborts at the first half-closed request (its bug 4156).
func TestSquidLeavesHalfClosedClientsOff(t *testing.T) {
	c := Column{Name: "squid", Kind: "squid", Binary: "/usr/sbin/squid", Group: results.Copy}
	for _, m := range (Squid{}).Modes() {
		p, err := Squid{}.Instance(c, m, goldenEnv)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range p.Files {
			if bytes.Contains(f.Data, []byte("half_closed_clients")) {
				t.Errorf("%s: %s sets half_closed_clients", m, f.Path)
			}
		}
	}
}

// The report splits a run's notes at "; ": a reason holds none.
func TestHalfCloseCutIsOneClause(t *testing.T) {
	for _, a := range []HalfCloseCutter{Squid{}, Tinyproxy{}, Stunnel{}} {
		if why := a.HalfCloseCut(); strings.Contains(why, ";") {
			t.Errorf("%q holds a semicolon", why)
		}
	}
}

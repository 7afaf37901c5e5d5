package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/proxies"
	"bench/results"
	"bench/scenarios"
)

// TestRunTLSSession runs, in a real session of a second a run, every
// packaged proxy that ends or begins TLS for an HTTPS exchange (wrk) and
// a stream (iperf3 through bench mix tls) in both modes, and a tunnel of
// two of each and its handshakes: every run is ok with figures, and the
// tunnels and handshakes say what they negotiated, which is what they
// asked for.
func TestRunTLSSession(t *testing.T) {
	prefix, out := sessionFixture(t, "nginx", "iperf3", "wrk", "openssl", "stunnel")
	const scenarioList = "tls-term-ka-1k,tls-init-ka-1k,tls-term-stream1-down,tls-init-stream1-down," +
		"tls-tunnel-TLS_AES_128_GCM_SHA256-up,tls-tunnel-plaintext-up,tls-handshake-full,tls-handshake-resumed"
	ts := runTestSession(t, prefix, out, "tls", scenarioList, "--reps", "1", "--duration", "1s", "--warmup", "0s")
	want := ts.each(t, func(s scenarios.Scenario, c proxies.Column, row *results.Row) {
		switch {
		case row == nil || row.Status != results.OK:
			t.Errorf("%s / %s: no ok row: %+v", s.Name, c.Name, row)
		case row.Bytes == 0 && row.Requests == 0, row.Seconds <= 0:
			t.Errorf("%s / %s: no figures: %+v", s.Name, c.Name, row)
		case s.Load.Suite != "" && !strings.Contains(row.Note, "negotiated TLSv1.3, "+s.Load.Suite):
			t.Errorf("%s / %s: note %q does not say the suite asked for was negotiated", s.Name, c.Name, row.Note)
		case s.Mode == results.TLSHandshake && (!strings.Contains(row.Note, "negotiated TLSv1.3, TLS_AES_128_GCM_SHA256") || !strings.Contains(row.Note, "RSA 3072")):
			t.Errorf("%s / %s: note %q does not say what was negotiated and asked", s.Name, c.Name, row.Note)
		}
	})
	if len(ts.rows) != want {
		t.Errorf("%d rows; want %d", len(ts.rows), want)
	}
	for _, table := range []string{"## HTTPS", "## TLS tunnel", "## TLS handshakes"} {
		if !strings.Contains(ts.report, table) {
			t.Errorf("the report lacks %s:\n%s", table, ts.report)
		}
	}
}

// TestRunTLSFailures: a proxy that negotiates another suite than the one
// asked, and one that presents a certificate the session's CA did not
// sign, each fail their runs with a note that says so, and the session
// goes on: a well-behaved stunnel in the same session has ok rows, and so
// has the first of them where it was asked for what it does. Both are
// the packaged stunnel behind a script that alters its configuration.
func TestRunTLSFailures(t *testing.T) {
	prefix, out := sessionFixture(t, "iperf3", "openssl", "stunnel")
	dir := t.TempDir()
	other, err := proxies.GeneratePKI([]string{"10.9.9.9"})
	if err != nil {
		t.Fatal(err)
	}
	// RSA, which the handshake runs' signature algorithm needs, signed
	// by a CA of its own.
	cert, key, err := other.RSAServer(2048)
	if err != nil {
		t.Fatal(err)
	}
	stranger := filepath.Join(dir, "stranger")
	for name, data := range map[string][]byte{"stranger.pem": cert, "stranger.key": key} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	altered := func(name, sed string) string {
		p := filepath.Join(dir, name)
		script := "#!/bin/sh\n# stunnel, its configuration altered\n" +
			"if [ \"$1\" = -version ]; then exec stunnel \"$@\"; fi\n" +
			"conf=\"$1\"; shift\n" +
			"sed -e '" + sed + "' \"$conf\" > \"$conf.altered\" || exit 1\n" +
			"exec stunnel \"$conf.altered\" \"$@\"\n"
		if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	weak := altered("weak", "s|^ciphersuites = .*|ciphersuites = TLS_AES_128_GCM_SHA256|")
	strange := altered("strange", "s|^cert = .*|cert = "+stranger+".pem|; s|^key = .*|key = "+stranger+".key|")
	cols := filepath.Join(dir, "columns.conf")
	conf := fmt.Sprintf("\"stunnel weak\" stunnel binary=%s\n\"stunnel stranger\" stunnel binary=%s\n", weak, strange)
	if err := os.WriteFile(cols, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	const scenarioList = "tls-tunnel-TLS_AES_256_GCM_SHA384-up,tls-handshake-full"
	ts := runTestSession(t, prefix, out, "tls-failures", scenarioList, "--columns", cols,
		"--proxy", "stunnel,stunnel weak,stunnel stranger", "--reps", "1", "--duration", "1s", "--warmup", "0s")
	if ts.status != exitFailedRuns {
		t.Errorf("bench run with failed runs exits %d; want %d", ts.status, exitFailedRuns)
	}
	got := map[string]*results.Row{}
	for i := range ts.rows {
		r := &ts.rows[i]
		got[r.Proxy+" "+string(r.Mode)] = r
	}
	for _, c := range []struct {
		cell string
		ok   bool
		note string
	}{
		{"stunnel tls-tunnel", true, "negotiated TLSv1.3, TLS_AES_256_GCM_SHA384"},
		{"stunnel tls-handshake", true, "negotiated TLSv1.3, TLS_AES_128_GCM_SHA256"},
		{"stunnel weak tls-tunnel", false, "negotiated TLS_AES_128_GCM_SHA256, not TLS_AES_256_GCM_SHA384 as asked"},
		{"stunnel weak tls-handshake", true, "negotiated TLSv1.3, TLS_AES_128_GCM_SHA256"},
		{"stunnel stranger tls-tunnel", false, "certificate verify failed"},
		{"stunnel stranger tls-handshake", false, "certificate verify failed"},
	} {
		r := got[c.cell]
		switch {
		case r == nil:
			t.Errorf("%s: no row", c.cell)
		case (r.Status == results.OK) != c.ok || !strings.Contains(r.Note, c.note):
			t.Errorf("%s: %s, %q; want ok %v and a note saying %q", c.cell, r.Status, r.Note, c.ok, c.note)
		}
	}
	if len(ts.rows) != 6 {
		t.Errorf("%d rows; want 6", len(ts.rows))
	}
	if !strings.Contains(ts.report, "Failed runs, left out of the medians:") {
		t.Errorf("the report lists no failed run:\n%s", ts.report)
	}
}

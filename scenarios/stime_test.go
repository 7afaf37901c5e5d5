package scenarios

import (
	"strings"
	"testing"
)

// Captured from openssl 3.0.19's s_time against stunnel 5.68.
const (
	sTimeNew = "Collecting connection statistics for 2 seconds\n" +
		"****************************************\n\n" +
		"140 connections in 0.09s; 1555.56 connections/user sec, bytes read 72800\n" +
		"140 connections in 3 real seconds, 520 bytes read per connection\n"
	sTimeReuse = "\n\nNow timing with session id reuse.\nstarting\n" +
		"rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr\n\n" +
		"1395 connections in 0.42s; 3321.43 connections/user sec, bytes read 725400\n" +
		"1395 connections in 3 real seconds, 520 bytes read per connection\n"
	sClientBrief = "CONNECTION ESTABLISHED\nProtocol version: TLSv1.3\nCiphersuite: TLS_AES_128_GCM_SHA256\n" +
		"Peer certificate: CN = 10.0.1.1\nHash used: SHA256\nSignature type: RSA-PSS\nVerification: OK\n" +
		"Server Temp Key: X25519, 253 bits\nDONE\n"
)

func TestSTimeParse(t *testing.T) {
	m, err := STime{}.Parse([]byte(sTimeNew))
	if err != nil || m.Requests != 140 || m.Seconds != 3 {
		t.Errorf("Parse(new) = %+v, %v; want 140 connections in 3 s", m, err)
	}
	m, err = STime{}.Parse([]byte(sTimeReuse))
	if err != nil || m.Requests != 1395 {
		t.Errorf("Parse(reuse) = %+v, %v; want 1395 connections", m, err)
	}
	// Sessions that were not resumed fail the run.
	bad := strings.Replace(sTimeReuse, "rrrrrrrrrr", "**********", -1)
	if _, err := (STime{}).Parse([]byte(bad)); err == nil || !strings.Contains(err.Error(), "did not") {
		t.Errorf("Parse(reuse without resumption) error = %v; want one saying the sessions were not resumed", err)
	}
	if _, err := (STime{}).Parse([]byte("connect: Connection refused\n")); err == nil {
		t.Errorf("Parse(refused): want an error")
	}
}

func TestProbe(t *testing.T) {
	n, err := ParseProbe([]byte(sClientBrief))
	if err != nil {
		t.Fatal(err)
	}
	if got := n.String(); got != "TLSv1.3, TLS_AES_128_GCM_SHA256, X25519, RSA-PSS" {
		t.Errorf("ParseProbe = %q", got)
	}
	p, note := HandshakeTLSFor([]byte("  { 1.2.840.113549.1.1.1, 2.5.8.1.1, RSA, rsaEncryption } @ default\n"))
	if p.Groups != "X25519" || !strings.Contains(note, "X25519MLKEM768") {
		t.Errorf("HandshakeTLSFor(OpenSSL 3.0) = %+v, %q; want X25519 and a note naming the page's group", p, note)
	}
	if err := n.Check(p); err != nil {
		t.Errorf("Check(%+v) = %v", p, err)
	}
	if p, note := HandshakeTLSFor([]byte("X25519MLKEM768 @ default\n")); p.Groups != HandshakeTLS.Groups || note != "" {
		t.Errorf("HandshakeTLSFor(OpenSSL 3.5) = %+v, %q; want the page's", p, note)
	}
	if err := n.Check(TLSParams{Suites: "TLS_CHACHA20_POLY1305_SHA256"}); err == nil || !strings.Contains(err.Error(), "not TLS_CHACHA20_POLY1305_SHA256 as asked") {
		t.Errorf("Check(another suite) = %v; want it named", err)
	}
}

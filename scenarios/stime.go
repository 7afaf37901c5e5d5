package scenarios

import (
	"bench/results"
	"bufio"
	"bytes"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ToolOpenSSL is openssl: s_time for the handshake rates, s_client to
// read back what a TLS server negotiates.
const ToolOpenSSL = "openssl"

// TLSParams are what a TLS server is restricted to, in OpenSSL's names;
// "" leaves a parameter to the server's defaults.
type TLSParams struct {
	Key     string // the certificate's key: KeyECDSAP256 or KeyRSA3072
	Suites  string // TLS 1.3 cipher suites, colon-separated
	Groups  string // key-exchange groups, colon-separated
	SigAlgs string // signature algorithms, colon-separated
}

// The certificates' keys a session makes.
const (
	KeyECDSAP256 = "ECDSA P-256" // the HTTPS section's, and the tunnels'
	KeyRSA3072   = "RSA 3072"    // stunnel's page's, for its handshakes
)

// HandshakeTLS is the TLS of stunnel's page's handshake figures: a
// 3072-bit RSA certificate, rsa_pss_rsae_sha256 signatures, the
// X25519MLKEM768 hybrid group and TLS_AES_128_GCM_SHA256.
var HandshakeTLS = TLSParams{Key: KeyRSA3072, Suites: "TLS_AES_128_GCM_SHA256",
	Groups: "X25519MLKEM768", SigAlgs: "rsa_pss_rsae_sha256"}

// closestGroup is what stands for the page's hybrid group where OpenSSL
// has no ML-KEM (before 3.5): X25519, its classical half.
const closestGroup = "X25519"

// HandshakeTLSFor is HandshakeTLS as the installed OpenSSL can do it:
// kems is what `openssl list -kem-algorithms` printed. Where the page's
// group is missing it is replaced by the closest, and note says so ("" when
// nothing was replaced).
func HandshakeTLSFor(kems []byte) (p TLSParams, note string) {
	p = HandshakeTLS
	if bytes.Contains(bytes.ToUpper(kems), []byte("MLKEM768")) {
		return p, ""
	}
	p.Groups = closestGroup
	return p, fmt.Sprintf("group %s in place of %s, which the installed OpenSSL lacks (ML-KEM needs OpenSSL 3.5)",
		closestGroup, HandshakeTLS.Groups)
}

// Describe says what p asks, for notes: "RSA 3072 certificate,
// rsa_pss_rsae_sha256, X25519, TLS_AES_128_GCM_SHA256".
func (p TLSParams) Describe() string {
	var parts []string
	if p.Key != "" {
		parts = append(parts, p.Key+" certificate")
	}
	for _, s := range []string{p.SigAlgs, p.Groups, p.Suites} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, ", ")
}

// sTimePage is what s_time asks for on each connection: the origin's
// 1 KB answer, through the proxy (stunnel's page: "in front of a
// plain HTTP backend"). Reading it also takes in the session tickets that
// a resumed connection needs.
const sTimePage = "/1k"

// STime drives openssl s_time for the handshake loads.
type STime struct{}

var _ Driver = STime{}

// Tool returns "openssl".
func (STime) Tool() string { return ToolOpenSSL }

// Invocation runs s_time for window against the proxy's TLS listener:
// sequential TLS 1.3 connections, each a full handshake (-new) or each
// resuming the first one's session (-reuse), each fetching sTimePage.
func (STime) Invocation(s Scenario, t Target, window time.Duration, dir string) (Invocation, error) {
	if s.Mode != results.TLSHandshake || t.Direct {
		return Invocation{}, fmt.Errorf("scenario %s: s_time times handshakes with a proxy ending TLS", s.Name)
	}
	h, port, _ := tlsEntry(results.TLSTerm, t, PortHTTP)
	if h == "" {
		return Invocation{}, fmt.Errorf("scenario %s: target has no proxy address", s.Name)
	}
	how := "-new"
	if s.Load.Resume {
		how = "-reuse"
	}
	return Invocation{
		Argv: []string{ToolOpenSSL, "s_time", "-connect", net.JoinHostPort(h, strconv.Itoa(port)),
			how, "-tls1_3", "-time", seconds(window), "-www", sTimePage},
		Grace: 5 * time.Second,
	}, nil
}

var sTimeLine = regexp.MustCompile(`(\d+) connections in (\d+) real seconds`)

// Parse reads s_time's "N connections in T real seconds" line, and
// checks from its progress marks ('*' a new session, 'r' a resumed one)
// that a -reuse run resumed its sessions.
func (STime) Parse(stdout []byte) (Measurement, error) {
	m := sTimeLine.FindSubmatch(stdout)
	if m == nil {
		return Measurement{}, fmt.Errorf("s_time output has no \"connections in ... real seconds\" line: %s", firstLine(stdout))
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	secs, _ := strconv.ParseFloat(string(m[2]), 64)
	if secs <= 0 {
		return Measurement{}, fmt.Errorf("s_time output: %d connections in %v seconds", n, secs)
	}
	if reuse := bytes.Contains(stdout, []byte("\nstarting\n")); reuse {
		var fresh, resumed int
		sc := bufio.NewScanner(bytes.NewReader(stdout))
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			line := sc.Text()
			if strings.Trim(line, "*r") == "" {
				fresh += strings.Count(line, "*")
				resumed += strings.Count(line, "r")
			}
		}
		if resumed == 0 || fresh > resumed/100 {
			return Measurement{}, fmt.Errorf("s_time -reuse: %d connections resumed their session, %d did not", resumed, fresh)
		}
	}
	return Measurement{Seconds: secs, Requests: n}, nil
}

// firstLine is the first line of out, for errors.
func firstLine(out []byte) string {
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line
}

// Negotiated is what a TLS handshake agreed on, as openssl s_client
// -brief reports it.
type Negotiated struct {
	Protocol, Suite, Group, Signature string
}

// String says it for notes: "TLSv1.3, TLS_AES_128_GCM_SHA256, X25519,
// RSA-PSS".
func (n Negotiated) String() string {
	var parts []string
	for _, s := range []string{n.Protocol, n.Suite, n.Group, n.Signature} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, ", ")
}

// ProbeArgv is the openssl s_client command that handshakes once with
// the TLS listener of a proxy ending TLS (the one in front of the origin's
// HTTP server) and reports what was negotiated, verifying the certificate
// with the PEM file ca.
func ProbeArgv(t Target, ca string) []string {
	h, port, _ := tlsEntry(results.TLSTerm, t, PortHTTP)
	return []string{ToolOpenSSL, "s_client", "-connect", net.JoinHostPort(h, strconv.Itoa(port)),
		"-brief", "-tls1_3", "-CAfile", ca, "-verify_return_error"}
}

// ParseProbe reads s_client -brief's report (it writes it to standard
// error): the protocol, the cipher suite, the group ("Server Temp Key",
// or "Negotiated TLS1.3 group" in newer OpenSSL) and the signature type.
func ParseProbe(out []byte) (Negotiated, error) {
	var n Negotiated
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch strings.TrimSpace(k) {
		case "Protocol version":
			n.Protocol = v
		case "Ciphersuite":
			n.Suite = v
		case "Server Temp Key", "Negotiated TLS1.3 group":
			n.Group, _, _ = strings.Cut(v, ",")
		case "Signature type", "Peer signature type":
			n.Signature = v
		}
	}
	if n.Suite == "" {
		return n, fmt.Errorf("openssl s_client reported no cipher suite: %s", firstLine(out))
	}
	return n, nil
}

// Check says whether n is what p asked for: its suite and its group,
// where p names one each.
func (n Negotiated) Check(p TLSParams) error {
	if p.Suites != "" && !strings.Contains(":"+p.Suites+":", ":"+n.Suite+":") {
		return fmt.Errorf("negotiated %s, not %s as asked", n.Suite, p.Suites)
	}
	if p.Groups != "" && !strings.Contains(":"+strings.ToUpper(p.Groups)+":", ":"+strings.ToUpper(n.Group)+":") {
		return fmt.Errorf("negotiated group %s, not %s as asked", n.Group, p.Groups)
	}
	return nil
}

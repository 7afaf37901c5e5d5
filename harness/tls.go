package harness

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"bench/harness/host"
	"bench/scenarios"
)

// tunnelCPUs splits the client's CPUs for a tls-tunnel, as stunnel's page
// gives each stunnel a CPU of its own and iperf3 the others: the tunnel's
// client end takes the client's last CPU and iperf3's client the rest
// (its server is on the origin's, the server end on the proxy's). Where
// the client has one CPU (machines of 2 or 3 CPUs) both share it: nil,
// nil, and the schedule says so.
func tunnelCPUs(l host.Layout) (peer, load []int) {
	if len(l.Client) < 2 {
		return nil, nil
	}
	n := len(l.Client)
	return l.Client[n-1:], l.Client[:n-1]
}

// tunnelNote is what the schedule says of the tunnel's CPUs on a layout.
func tunnelNote(l host.Layout) string {
	peer, load := tunnelCPUs(l)
	if peer == nil {
		return fmt.Sprintf("tls-tunnel: the client has one CPU, so the tunnel's client end shares it with iperf3's client (stunnel's page gives each stunnel and each iperf3 a CPU of its own); the server end has the proxy's CPU %s", host.CPUList(l.Proxy))
	}
	return fmt.Sprintf("tls-tunnel: the tunnel's client end on CPU %s, iperf3's client on %s, the server end on the proxy's %s, iperf3's server on the origin's %s",
		host.CPUList(peer), host.CPUList(load), host.CPUList(l.Proxy), host.CPUList(l.Origin))
}

// tunneled says whether a run of the schedule is a tls-tunnel's, whose
// CPUs the plan and the session's notes say (tunnelNote).
func (s *Schedule) tunneled() bool {
	return slices.ContainsFunc(s.Runs, func(r RunSpec) bool { return r.shape().tunnel })
}

// tunnelHostsNote is what the plan of a session across hosts says of the
// tunnel's CPUs, each role's host's (tunnelCPUs on the client's).
const tunnelHostsNote = "tls-tunnel: on the client's host the tunnel's client end runs on its last CPU and iperf3's client on the others " +
	"(both on its CPU where it has one); the server end on the proxy's CPUs, iperf3's server on the origin's"

// pinned runs argv on cpus (taskset), or as it is when cpus is nil.
func pinned(argv []string, cpus []int) []string {
	if len(cpus) == 0 {
		return argv
	}
	return append([]string{"taskset", "-c", host.CPUList(cpus)}, argv...)
}

// probe handshakes once with the proxy's TLS listener with openssl
// s_client from the client's namespace, offering everything TLS 1.3 has,
// and checks that what it negotiated is what the run asks for. It
// returns what was negotiated, for the run's note.
func (s *runner) probe(ctx context.Context, r RunSpec, t scenarios.Target, want scenarios.TLSParams, dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	log := filepath.Join(dir, "s_client.log")
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var out bytes.Buffer
	runErr := s.host.Run(pctx, host.RoleClient, host.ProcSpec{Argv: scenarios.ProbeArgv(t, t.CA), Dir: dir, Log: log, Stdout: &out})
	b, _ := os.ReadFile(log)
	n, err := scenarios.ParseProbe(append(out.Bytes(), b...))
	if err != nil {
		if runErr != nil {
			return "", fmt.Errorf("TLS handshake with %s failed: %v: %s", r.Column.Name, runErr, strings.Join(host.TailLines(log, 2), " | "))
		}
		return "", err
	}
	if err := n.Check(want); err != nil {
		return "", fmt.Errorf("%s: %w", r.Column.Name, err)
	}
	note := "negotiated " + n.String()
	if r.shape().tls == handshakeTLS {
		note = joinNotes(note, s.handshakeNote)
	}
	return note, nil
}

// prepareHandshakes makes what the handshake runs need: the page's RSA
// 3072 certificate, signed by the session's CA, and the page's TLS as the
// installed OpenSSL can do it; what it could not do goes in the notes.
func (s *Session) prepareHandshakes() error {
	need := false
	for _, r := range s.sched.Runs {
		need = need || r.shape().tls == handshakeTLS
	}
	if !need {
		return nil
	}
	cert, key, err := s.pki.RSAServer(3072)
	if err != nil {
		return fmt.Errorf("certificates: %w", err)
	}
	for name, data := range map[string][]byte{"rsa.pem": append(append([]byte(nil), cert...), key...), "rsa.key": key} {
		if err := writeFile(filepath.Join(s.tlsDir(), name), data); err != nil {
			return fmt.Errorf("certificates: %w", err)
		}
	}
	kems := []byte(host.CommandOutput([]string{scenarios.ToolOpenSSL, "list", "-kem-algorithms"}))
	var note string
	s.handshakeTLS, note = scenarios.HandshakeTLSFor(kems)
	s.handshakeNote = s.handshakeTLS.Describe()
	if note != "" {
		s.handshakeNote += " (" + note + ")"
		s.notes = append(s.notes, "tls-handshake: "+note)
	}
	return nil
}

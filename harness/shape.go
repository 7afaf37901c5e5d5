package harness

import "bench/results"

// shape is how a run is laid out: one proxy in the scenario's mode, or a
// tls-tunnel's two ends, and what TLS they are held to. It is decided
// once, from the run's mode and its column's group (RunSpec.shape); the
// session asks it rather than the mode.
type shape struct {
	// tunnel: the column runs as a tls-tunnel's two ends, its server
	// end (ending TLS, in the proxy's namespace) and its client end
	// (beginning it, in the client's); otherwise as one instance in
	// the scenario's mode. The baseline of a tls-tunnel has no ends to
	// run: it is one, forwarding.
	tunnel bool
	// tls is the TLS the column's instances are rendered with.
	tls runTLS
	// pinLoad: the load tool is held off the tunnel's client end's CPU
	// (tunnelCPUs), the baseline's too, so that its figures compare.
	pinLoad bool
	// negotiates: what TLS the proxy negotiated is read back before the
	// load (Session.probe) and checked against what tls asks.
	negotiates bool
}

// runTLS is the TLS a run's instances are held to.
type runTLS int

const (
	modeTLS      runTLS = iota // the mode's own, as the adapter renders it
	suiteTLS                   // a tls-tunnel's: its load's cipher suite, on an ECDSA P-256 key
	handshakeTLS               // stunnel's page's handshakes: its RSA certificate, signatures, group and suite
)

// shape decides the run's shape (see shape).
func (r RunSpec) shape() shape {
	proxy := r.Column.Group != results.Baseline
	switch r.Scenario.Mode {
	case results.TLSTunnel:
		return shape{tunnel: proxy, tls: suiteTLS, pinLoad: true, negotiates: proxy}
	case results.TLSHandshake:
		return shape{tls: handshakeTLS, negotiates: proxy}
	}
	return shape{}
}

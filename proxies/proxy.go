// Package proxies holds an adapter per kind of proxy: its configuration
// for each mode, its command line, its own config check and the addresses
// that answer once it is ready. Adapters are pure; the harness runs them.
package proxies

import (
	"bench/results"
	"bench/scenarios"
	"time"
)

// Column is one column of the tables: a proxy kind with its binary and
// flags, e.g. "devel -s0" = 3proxy, /opt/3proxy/devel/bin/3proxy, -s0, copy.
type Column struct {
	Name   string   // the tables' column name
	Kind   string   // the adapter
	Binary string   // path of the binary; empty for the adapter's default
	Flags  []string // extra command-line flags
	Group  results.Group
	// Options are adapter-specific switches, e.g. haproxy's "splice-auto".
	Options []string
	// Modes, when set, limits the modes measured for the column to these;
	// nil means every mode the kind can serve.
	Modes []results.Mode
	// Source and Line say where the column was declared, for errors.
	Source string
	Line   int
}

// Site is what the harness provides to one proxy instance.
type Site struct {
	Dir        string // the instance's private directory: configs, logs, pid files
	ClientSide string // the proxy's address facing the client, e.g. 10.0.1.1
	OriginSide string // the proxy's address facing the origin, e.g. 10.0.2.1
	Origin     string // the origin's address, e.g. 10.0.2.2
	// MaxConns is how many client connections the proxy is sized for:
	// what its descriptor limit allows (the harness's rule, which counts
	// a splicing column's pipes).
	MaxConns int
	// Descriptors is the descriptor limit the proxy runs under.
	Descriptors int
	// CertFile is the PEM certificate chain the proxy presents
	// (tls-term), followed by its private key (PKI.CertKeyPEM): haproxy
	// reads both from this one file. Failing that haproxy looks for the
	// key in CertFile with ".crt" replaced by ".key" (server.crt,
	// server.key), so a separate key must be named so.
	CertFile string
	KeyFile  string // the private key alone, PEM
	CAFile   string // the CA that signed the origin's certificate (tls-init)
	// ServerName is the name checked in the origin's certificate and sent
	// as SNI when the proxy begins TLS (tls-init); "" means Origin.
	ServerName string
	// TLS restricts the proxy's TLS, ended or begun, to these cipher
	// suites, groups and signature algorithms (its Key names the key of
	// CertFile); the zero value leaves the proxy's defaults.
	TLS scenarios.TLSParams
}

// File is a file an instance needs, written before it starts.
type File struct {
	Path  string // relative to Site.Dir
	Data  []byte
	Owner string // user that must own it (and its directory), "" for root
}

// Instance is everything the harness needs to run a column in a mode.
type Instance struct {
	Files []File
	// Validate is the proxy's own config check, run before the session
	// starts; nil if the proxy has none.
	Validate []string
	// Argv runs the proxy in the foreground; nil for the baseline, which
	// is the kernel forwarding (Forward).
	Argv []string
	// Forward asks for ip_forward in the proxy namespace.
	Forward bool
	// Ready lists host:port addresses that accept TCP once the proxy serves.
	Ready []string
	// StopGrace is how long the proxy has to exit after SIGTERM before it
	// is killed; 0 leaves it to the harness. Set for a proxy whose exit
	// is slow by design and leaves nothing that needs a clean exit.
	StopGrace time.Duration
}

// Adapter knows one kind of proxy.
type Adapter interface {
	// Kind names the adapter as the CSV's kind column does ("nginx").
	Kind() string
	// Modes lists the modes the kind can serve.
	Modes() []results.Mode
	// DefaultBinary is the program used when a column names none: a
	// name looked up in PATH, or "" when the user must name one (envoy,
	// 3proxy).
	DefaultBinary() string
	// VersionArgv is the command that prints bin's version.
	VersionArgv(bin string) []string
	// ParseVersion picks the version string out of that command's output.
	ParseVersion(out []byte) string
	// Instance renders column c in mode m for site. It fails for a mode the
	// kind cannot serve or an option it does not know.
	Instance(c Column, m results.Mode, site Site) (Instance, error)
}

// HalfCloseCutter is an adapter whose proxy may end the answer of a
// half-closed exchange early through no fault of the client: the
// connection ends cleanly (a FIN, close_notify in TLS) before the answer's
// length or before any of it, and a client sees a short answer or none.
// Such an exchange is a failure all the same; the adapter says why it
// happens.
type HalfCloseCutter interface {
	// HalfCloseCut says when the proxy cuts a half-closed exchange's
	// answer, and why.
	HalfCloseCut() string
}

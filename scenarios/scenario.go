// Package scenarios holds the catalog of what a session measures, as data,
// and the load drivers: for each load tool, the command line that runs a
// scenario and the parser of what the tool printed. Nothing here runs
// anything; the harness does.
package scenarios

import "time"

// Mode is how the client reaches the origin through the proxy.
type Mode string

// The modes of the reference results.
const (
	HTTP         Mode = "http"          // absolute-URI requests to an HTTP proxy
	Connect      Mode = "connect"       // a CONNECT tunnel per connection
	Socks        Mode = "socks"         // a SOCKSv5 tunnel per connection
	Relay        Mode = "relay"         // a TCP relay (port mapping) to the origin
	TLSTerm      Mode = "tls-term"      // TLS from the client, plain TCP to the origin
	TLSInit      Mode = "tls-init"      // plain TCP from the client, TLS to the origin
	MixHTTP      Mode = "mix-http"      // 20000 connections through the HTTP proxy
	MixConnect   Mode = "mix-connect"   // 20000 connections through CONNECT tunnels
	MixSocks     Mode = "mix-socks"     // 20000 connections through SOCKSv5 tunnels
	MixRelay     Mode = "mix-relay"     // 20000 connections through the relay
	TLSTunnel    Mode = "tls-tunnel"    // stunnel's page: a TLS tunnel between two proxies
	TLSHandshake Mode = "tls-handshake" // stunnel's page: handshakes per second
)

// Ports the roles listen on. A proxy instance serves one mode; the ports
// depend on the mode, the addresses on the topology.
const (
	PortHTTPProxy = 3128 // HTTP proxy, also for CONNECT
	PortSocks     = 1080 // SOCKSv5
	PortHTTP      = 80   // origin's HTTP; the relay listens on it too
	PortIperf     = 5201 // origin's iperf3 -s; the relay listens on it too
	PortHTTPS     = 443  // origin's HTTPS (tls-init), the proxy's TLS listener (tls-term)
	PortIperfTLS  = 5202 // iperf3 wrapped in TLS, on the origin (tls-init) or the proxy (tls-term)
)

// Load is what the client does, independent of the mode.
type Load struct {
	Name      string        // as in the CSV's load column: "ka-1k", "stream16"
	Tool      string        // the driver that runs it: "wrk", "iperf3"
	Conns     int           // concurrent connections (wrk -c) or streams (iperf3 -P)
	Active    int           // mix: exchanges at a time over the connections (closed loop)
	Rate      int           // mix: exchanges a second over the connections (open loop)
	Path      string        // the origin's file for HTTP loads: "/1k", "/50k", "/1m"
	PostBytes int           // request body of each request; 0 for GET
	Close     bool          // a new connection for every request
	Reverse   bool          // streams: the origin sends (iperf3 -R)
	Timeout   time.Duration // per-request timeout of the load tool, 0 for its default
}

// Scenario is a load in a mode, named "<mode>-<load>" ("http-ka-1k").
type Scenario struct {
	Name string
	Mode Mode
	Load Load
}

// Target says where the client sends a run's traffic.
type Target struct {
	// Direct: the client talks to the origin itself (the "no proxy"
	// baseline, the kernel forwarding in the proxy namespace).
	Direct bool
	// Proxy is host:port of the proxy's listener for the mode (HTTP proxy,
	// SOCKS, or the relay's host, whose ports mirror the origin's).
	Proxy string
	// ProxyHost is the proxy's address facing the client.
	ProxyHost string
	// Origin is the origin's address.
	Origin string
}

// Invocation is one run of a load tool.
type Invocation struct {
	Argv  []string          // the command, run in the client namespace
	Files map[string][]byte // files it needs, by name relative to the run directory
	Env   []string          // extra environment, KEY=value
	// Grace is how long past the window the tool may take to finish
	// (connection set-up, its own reporting) before it is stopped.
	Grace time.Duration
}

// Measurement is what a load tool reported for its window.
type Measurement struct {
	Seconds      float64 // the tool's measured window
	Requests     int64   // completed exchanges; 0 for streams
	Bytes        int64   // payload bytes moved
	Errors       int64   // non-2xx answers, resets, short or wrong answers
	Timeouts     int64   // exchanges that timed out
	P50Ms, P99Ms float64 // latency, when HasLatency
	HasLatency   bool
}

// Driver turns a scenario into a load tool's command line and reads back
// what the tool printed. A driver is pure: it neither runs nor reads files.
type Driver interface {
	// Tool names the program the driver runs, for version checks and
	// install hints ("wrk", "iperf3").
	Tool() string
	// Invocation builds the command for one run of s against t lasting
	// window. dir is the run directory the Files will be written to.
	Invocation(s Scenario, t Target, window time.Duration, dir string) (Invocation, error)
	// Parse reads the tool's standard output into a Measurement.
	Parse(stdout []byte) (Measurement, error)
}

// Package scenarios holds the catalog of what a session measures, as data,
// and the load drivers: for each load tool, the command line that runs a
// scenario and the parser of what the tool printed. Nothing here runs
// anything; the harness does.
package scenarios

import (
	"bench/results"
	"net"
	"strconv"
	"time"
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
	PortMix       = 8080 // origin's bench mix --serve, for tunnels and relays; the relay listens on it too
	PortMixTLS    = 8443 // bench mix --serve wrapped in TLS, on the origin (the baseline of mix-tls) or the proxy (tls-term)
)

// Listener is a port a proxy serving a mode listens on, on its side
// facing the client.
type Listener struct {
	Name string // names the listener in configs with sections: "proxy", "http", "iperf"
	Port int    // the proxy's port
	// Origin is the origin's port a relay's listener leads to; 0 for a
	// forward proxy, where the client names the destination.
	Origin int
}

// BaseMode is the mode a proxy instance is configured for when a session
// runs scenario mode m: the mix scenarios run through the same listeners
// as their plain modes, handshakes against the TLS-ending listener.
func BaseMode(m results.Mode) results.Mode {
	switch m {
	case results.MixHTTP:
		return results.HTTP
	case results.MixConnect:
		return results.Connect
	case results.MixSocks:
		return results.Socks
	case results.MixRelay:
		return results.Relay
	case results.MixTLS:
		return results.TLSTerm
	case results.TLSHandshake:
		return results.TLSTerm
	}
	return m
}

// Listeners is the one table of where a mode's load aims: the ports a
// proxy serving mode m listens on. A forward proxy has one; a relay
// mirrors the origin's HTTP, iperf3 and mix ports, and the TLS modes its
// HTTP and iperf3 ports in TLS where the proxy ends it (tls-term, with
// the mix's port too, for mix-tls) and in plain TCP where it begins it
// (tls-init).
func Listeners(m results.Mode) []Listener {
	switch BaseMode(m) {
	case results.HTTP, results.Connect:
		return []Listener{{"proxy", PortHTTPProxy, 0}}
	case results.Socks:
		return []Listener{{"proxy", PortSocks, 0}}
	case results.TLSTerm:
		return []Listener{{"http", PortHTTPS, PortHTTP}, {"iperf", PortIperfTLS, PortIperf}, {"mix", PortMixTLS, PortMix}}
	case results.TLSInit:
		return []Listener{{"http", PortHTTP, PortHTTPS}, {"iperf", PortIperf, PortIperfTLS}}
	}
	return []Listener{{"http", PortHTTP, PortHTTP}, {"iperf", PortIperf, PortIperf}, {"mix", PortMix, PortMix}}
}

// TargetFor says where the client sends a mode's traffic: to the forward
// proxy's listener, or to the relay's host, at proxyHost; direct is the
// baseline, the client talking to the origin itself.
func TargetFor(m results.Mode, direct bool, proxyHost, origin string) Target {
	t := Target{Direct: direct, ProxyHost: proxyHost, Origin: origin, Proxy: proxyHost}
	if ls := Listeners(m); ls[0].Origin == 0 {
		t.Proxy = net.JoinHostPort(proxyHost, strconv.Itoa(ls[0].Port))
	}
	return t
}

// relayPort is the port of mode m's relay that leads to the origin's
// port originPort.
func relayPort(m results.Mode, originPort int) int {
	for _, l := range Listeners(m) {
		if l.Origin == originPort {
			return l.Port
		}
	}
	return originPort
}

// TunnelEntry is where the tls-tunnel's client end listens, in the
// client's namespace, for iperf3's client: its loopback, as on stunnel's
// performance page.
const TunnelEntry = "127.0.0.1"

// ForColumn reports whether a column runs scenario s, baseline saying
// whether it is the "no proxy" column: in tls-tunnel the baseline runs
// the plaintext loads of the tunnel's path and the proxies the cipher
// suites; no baseline times handshakes.
func ForColumn(s Scenario, baseline bool) bool {
	switch s.Mode {
	case results.TLSTunnel:
		return baseline == (s.Load.Suite == "")
	case results.TLSHandshake:
		return !baseline
	}
	return true
}

// IsTLS reports whether m is one of the modes of TLS ended or begun in
// the proxy, whose HTTP and stream loads go through its relay listeners.
func IsTLS(m results.Mode) bool { return m == results.TLSTerm || m == results.TLSInit }

// tlsEntry is where the client sends the HTTP (originPort PortHTTP),
// stream (PortIperf) or mix (PortMix, tls-term alone) load of a TLS
// mode, and whether it speaks TLS there:
// to the proxy's listener in front of that server, in TLS where the proxy
// ends it; and for the baseline to the origin's own TLS port, the client
// speaking TLS to the origin itself.
func tlsEntry(m results.Mode, t Target, originPort int) (host string, port int, clientTLS bool) {
	// The origin's TLS ports are those of a proxy that ends TLS in front
	// of it: the listener of tls-term that leads to originPort.
	tlsPort := 0
	for _, l := range Listeners(results.TLSTerm) {
		if l.Origin == originPort {
			tlsPort = l.Port
		}
	}
	if t.Direct {
		return t.Origin, tlsPort, true
	}
	if m == results.TLSTerm {
		return relayHost(t), relayPort(m, originPort), true
	}
	return relayHost(t), relayPort(m, tlsPort), false
}

// Load is what the client does, independent of the mode.
type Load struct {
	Name      string        // as in the CSV's load column: "ka-1k", "stream16"
	Tool      string        // the driver that runs it: "wrk", "iperf3"
	Conns     int           // concurrent connections (wrk -c) or streams (iperf3 -P)
	Active    int           // mix: exchanges at a time over the connections (closed loop)
	Rate      int           // mix: exchanges a second over the connections (open loop)
	Sweep     bool          // mix: fixed-rate steps, the search for the sustainable rate (harness/sweep)
	Path      string        // the origin's file for HTTP loads: "/1k", "/50k", "/1m"
	PostBytes int           // request body of each request; 0 for GET
	Close     bool          // a new connection for every request
	Reverse   bool          // streams: the origin sends (iperf3 -R)
	Timeout   time.Duration // per-request timeout of the load tool, 0 for its default
	// Suite is the TLS 1.3 cipher suite a tls-tunnel load asks of the
	// tunnel (IANA's name); "" for the plaintext baseline of its path.
	Suite string
	// Resume: tls-handshake times resumed sessions, not full handshakes.
	Resume bool
	// Warmup is the warm-up a load tool that warms up itself (WarmsUp)
	// runs before its window, on the connections it then measures with;
	// the session sets it from its own warm-up, which it then does not
	// run apart.
	Warmup time.Duration
	// Shared is, where the load is a client host's share of one split
	// over several (ShareOf), the whole load's connections, 0 otherwise:
	// the tool then waits for the hosts' shared start, writes its latency
	// whole (wrk's own buckets, Measurement.Latencies) to be merged
	// exactly, and has time to open as many connections as the whole
	// load's through the proxy.
	Shared int
}

// WarmsUp says whether the load tool of s runs the session's warm-up
// itself (Load.Warmup): bench mix does, so that its window begins with
// its 20000 connections open and exchanges running.
func WarmsUp(s Scenario) bool { return s.Load.Tool == ToolBench }

// Scenario is a load in a mode, named "<mode>-<load>" ("http-ka-1k").
type Scenario struct {
	Name string
	Mode results.Mode
	Load Load
}

// Target says where the client sends a run's traffic.
type Target struct {
	// Direct: the client talks to the origin itself (the "no proxy"
	// baseline, the kernel forwarding in the proxy namespace).
	Direct bool
	// Proxy is host:port of the forward proxy's listener for the mode
	// (HTTP proxy, SOCKS), or the relay's host, whose ports are in
	// Listeners.
	Proxy string
	// ProxyHost is the proxy's address facing the client.
	ProxyHost string
	// Origin is the origin's address.
	Origin string
	// CA is the PEM file of the CA that signed the certificates of the
	// proxy (tls-term) and the origin, which the TLS modes' stream
	// client verifies.
	CA string
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
	Seconds  float64 // the tool's measured window
	Requests int64   // completed exchanges; 0 for streams
	Bytes    int64   // payload bytes moved
	Errors   int64   // non-2xx answers, resets, short or wrong answers
	Timeouts int64   // exchanges that timed out
	// Closed are the errors that are reads on connections the proxy
	// closed after its answer, no failed exchange
	// (results.ClosedAfterAnswer); HasClosed says whether the tool
	// tells its reads apart (wrk does).
	Closed       int64
	HasClosed    bool
	P50Ms, P99Ms float64 // latency, when HasLatency
	HasLatency   bool
	P999Ms       float64 // the 99.9th percentile, when HasP999
	HasP999      bool
	// Started is when the tool's window began, where the tool says so
	// (bench mix; wrk's share of a split load, when its threads
	// started): the window is then [Started, Started + Seconds],
	// wherever the tool's exit falls. Zero: it ended when the tool
	// exited.
	Started time.Time
	// Detail is what the tool said of the errors beyond their count
	// (their kinds), for the run's note; "" when it says nothing.
	Detail string
	// Note is what the run's note says whatever the errors ("" for
	// nothing): bench mix's retried exchanges.
	Note string
	// HalfCloseFailed are the failed exchanges among Errors that
	// half-closed (bench mix's); 0 for the tools that do not half-close.
	HalfCloseFailed int64
	// Intervals is the tool's own series through the window, about a
	// second each, where it gives one: iperf3's intervals, bench mix's
	// seconds; none for wrk and openssl s_time.
	Intervals []results.Interval
	// Histogram is the latency of the window's exchanges, where the
	// tool gives it whole: bench mix's HdrHistogram, V2 compressed, in
	// base64, in microseconds.
	Histogram string
	// Latencies is wrk's own histogram whole, a bucket per microsecond
	// that any exchange took, in order, where the load asked for it
	// (Load.Shared); nil otherwise.
	Latencies []LatencyCount
	// Windows are each client host's window, where several shared the
	// load, on the session's clock, and Lags the hosts whose share
	// lagged the others' (the session sets them).
	Windows []results.HostWindow
	Lags    []Lag
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

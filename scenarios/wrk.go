package scenarios

import (
	"bench/results"
	"bufio"
	"bytes"
	"fmt"
	"math"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"
)

// The programs a session runs for its loads and its origin, as Load.Tool
// and Driver.Tool name them.
const (
	ToolWrk         = "wrk"
	ToolIperf3      = "iperf3"
	ToolProxychains = "proxychains4"
	ToolNginx       = "nginx" // the origin's HTTP server
)

// Threads of wrk: 4 as the reference results ran it, 16 under proxychains, whose
// connect() blocks until the proxy answers and costs the client a thread
// per tunnel being opened (the reference results' "wrk gets more threads there").
const (
	wrkThreads       = 4
	wrkThreadsTunnel = 16
)

// wrkScript is the name of the Lua script in the run directory.
const wrkScript = "wrk.lua"

// wrkLinePrefix starts the line the script's done() prints.
const wrkLinePrefix = "bench-wrk:"

// Wrk drives wrk for the HTTP loads.
type Wrk struct{}

var _ Driver = Wrk{}

// Tool returns "wrk".
func (Wrk) Tool() string { return ToolWrk }

// Invocation runs wrk for window: against the proxy with absolute URIs
// in mode http, against the origin inside a tunnel for connect and socks
// (the caller wraps it in proxychains, see Build), against the relay's
// client-side address for relay, and against the origin when t is Direct.
func (Wrk) Invocation(s Scenario, t Target, window time.Duration, dir string) (Invocation, error) {
	l := s.Load
	if l.Conns < 1 || l.Path == "" {
		return Invocation{}, fmt.Errorf("scenario %s: wrk needs connections and a path, has %d and %q", s.Name, l.Conns, l.Path)
	}
	if t.Origin == "" {
		return Invocation{}, fmt.Errorf("scenario %s: target has no origin address", s.Name)
	}
	// The origin's HTTP port is 80, so it needs no port in URLs.
	origin := t.Origin
	url := "http://" + origin + "/"
	path := l.Path
	switch {
	case IsTLS(s.Mode):
		// wrk speaks TLS for an https:// URL; it does not verify the
		// server's certificate (the harness's own checks do).
		h, port, clientTLS := tlsEntry(s.Mode, t, PortHTTP)
		if h == "" {
			return Invocation{}, fmt.Errorf("scenario %s: target has no address for its TLS listener", s.Name)
		}
		scheme := "http://"
		if clientTLS {
			scheme = "https://"
		}
		url = scheme + net.JoinHostPort(h, strconv.Itoa(port)) + "/"
	case t.Direct:
	case s.Mode == results.HTTP:
		if t.Proxy == "" {
			return Invocation{}, fmt.Errorf("scenario %s: target has no proxy address", s.Name)
		}
		url = "http://" + t.Proxy + "/"
		path = "http://" + origin + l.Path
	case s.Mode == results.Relay:
		h := relayHost(t)
		if h == "" {
			return Invocation{}, fmt.Errorf("scenario %s: target has no relay address", s.Name)
		}
		url = "http://" + net.JoinHostPort(h, strconv.Itoa(relayPort(s.Mode, PortHTTP))) + "/"
	case tunnelled(s, t):
	default:
		return Invocation{}, fmt.Errorf("scenario %s: wrk cannot run mode %q", s.Name, s.Mode)
	}
	threads := wrkThreads
	if tunnelled(s, t) {
		threads = wrkThreadsTunnel
	}
	threads = min(threads, l.Conns)
	timeout := l.Timeout
	if timeout <= 0 {
		timeout = wrkTimeout
	}
	script, err := WrkLua(wrkRequest{Path: path, Host: origin, PostBytes: l.PostBytes, Close: l.Close})
	if err != nil {
		return Invocation{}, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	return Invocation{
		Argv: []string{ToolWrk,
			"-t", strconv.Itoa(threads),
			"-c", strconv.Itoa(l.Conns),
			"-d", seconds(window) + "s",
			"--timeout", seconds(timeout) + "s",
			"--latency",
			"-s", filepath.Join(dir, wrkScript),
			url,
		},
		Files: map[string][]byte{wrkScript: script},
		// wrk stops at the window, but its threads check the time only
		// between events: under proxychains each connect() blocks until
		// the proxy has answered the tunnel's request, and 2000 of them
		// through a proxy at its CPU limit can hold a thread for many
		// seconds (measured here: squid through CONNECT, 2000 POSTs).
		Grace: wrkGrace(timeout, l.Conns, tunnelled(s, t)),
	}, nil
}

// wrkGrace is how long past its window wrk may take: the request timeout
// and its report, and time to open the connections, 10 ms each through a
// tunnel (blocking), 1 ms otherwise.
func wrkGrace(timeout time.Duration, conns int, tunnel bool) time.Duration {
	per := time.Millisecond
	if tunnel {
		per = 10 * time.Millisecond
	}
	return timeout + 3*time.Second + time.Duration(conns)*per
}

// wrkRequest is the request the Lua script makes wrk send.
type wrkRequest struct {
	Path      string // request target: "/1k", or "http://10.0.2.2/1k" for an HTTP proxy
	Host      string // Host header
	PostBytes int    // POST body size; 0 sends GET
	Close     bool   // adds Connection: close
}

var wrkLua = template.Must(template.New(wrkScript).Parse(`-- wrk script written by bench: the request of one scenario and a
-- machine-readable summary line.
wrk.method = "{{.Method}}"
wrk.path = "{{.Path}}"
wrk.headers["Host"] = "{{.Host}}"
{{- if .PostBytes}}
wrk.headers["Content-Type"] = "application/octet-stream"
wrk.body = string.rep("x", {{.PostBytes}})
{{- end}}
{{- if .Close}}
wrk.headers["Connection"] = "close"
{{- end}}

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("` + wrkLinePrefix + ` requests=%d bytes=%d duration_us=%d connect=%d read=%d write=%d status=%d timeout=%d p50_us=%d p99_us=%d\n",
    summary.requests, summary.bytes, summary.duration,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
`))

// WrkLua renders the Lua script for r.
func WrkLua(r wrkRequest) ([]byte, error) {
	for _, s := range []string{r.Path, r.Host} {
		if strings.ContainsAny(s, "\"\\\r\n") {
			return nil, fmt.Errorf("wrk request %q: quotes, backslashes and line breaks are not allowed", s)
		}
	}
	method := "GET"
	if r.PostBytes > 0 {
		method = "POST"
	}
	var b bytes.Buffer
	err := wrkLua.Execute(&b, struct {
		wrkRequest
		Method string
	}{r, method})
	return b.Bytes(), err
}

// Parse reads wrk's output: the script's summary line for exact figures,
// checked against wrk's own "Requests/sec:" line.
func (Wrk) Parse(stdout []byte) (Measurement, error) {
	var (
		f       map[string]int64
		rps     float64
		haveRPS bool
	)
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, wrkLinePrefix):
			var err error
			if f, err = parseFields(strings.TrimPrefix(line, wrkLinePrefix)); err != nil {
				return Measurement{}, fmt.Errorf("wrk output: %w", err)
			}
		case strings.HasPrefix(line, "Requests/sec:"):
			v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimPrefix(line, "Requests/sec:")), 64)
			if err != nil {
				return Measurement{}, fmt.Errorf("wrk output: %q: %w", line, err)
			}
			rps, haveRPS = v, true
		}
	}
	if f == nil {
		return Measurement{}, fmt.Errorf("wrk output has no %q line: wrk failed before its summary, or ran without the bench script", wrkLinePrefix)
	}
	for _, k := range []string{"requests", "bytes", "duration_us", "connect", "read", "write", "status", "timeout", "p50_us", "p99_us"} {
		if _, ok := f[k]; !ok {
			return Measurement{}, fmt.Errorf("wrk output: summary line has no %s", k)
		}
	}
	if !haveRPS {
		return Measurement{}, fmt.Errorf("wrk output has no Requests/sec line")
	}
	if f["duration_us"] <= 0 {
		return Measurement{}, fmt.Errorf("wrk output: duration %d µs", f["duration_us"])
	}
	// wrk counts an answer with status 400 or more as a request and as
	// a status error; it is a failed exchange, not a completed one.
	m := Measurement{
		Seconds:  float64(f["duration_us"]) / 1e6,
		Requests: f["requests"] - f["status"],
		Bytes:    f["bytes"],
		Errors:   f["connect"] + f["read"] + f["write"] + f["status"],
		Timeouts: f["timeout"],
		// wrk's reads on connections closed after an answer, which it
		// sends again: counted among the errors, no failed exchange
		Closed:     results.ClosedAfterAnswer(f["read"], f["requests"]-f["status"]),
		HasClosed:  true,
		P50Ms:      float64(f["p50_us"]) / 1e3,
		P99Ms:      float64(f["p99_us"]) / 1e3,
		HasLatency: f["requests"] > f["timeout"], // late answers are left out of the latency
	}
	// wrk prints requests / duration with two decimals.
	if got := float64(f["requests"]) / m.Seconds; math.Abs(got-rps) > 0.006+rps*1e-9 {
		return Measurement{}, fmt.Errorf("wrk output: summary line gives %.2f requests/s, wrk printed %.2f", got, rps)
	}
	return m, nil
}

// parseFields reads "k=v k=v" with integer values.
func parseFields(s string) (map[string]int64, error) {
	f := make(map[string]int64)
	for _, kv := range strings.Fields(s) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("field %q is not key=value", kv)
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("field %s: %q is not a whole number", k, v)
		}
		f[k] = n
	}
	return f, nil
}

// tunnelled reports whether the client reaches the origin through
// proxychains: CONNECT and SOCKS through a proxy.
func tunnelled(s Scenario, t Target) bool {
	return !t.Direct && (s.Mode == results.Connect || s.Mode == results.Socks)
}

// Programs are the programs scenario s runs on the client: its load tool
// (none for bench mix: bench runs itself), and proxychains-ng for the
// tunnels.
func Programs(s Scenario) []string {
	var p []string
	if t := DriverFor(s).Tool(); t != ToolBench {
		p = append(p, t)
	}
	if tunnelled(s, Target{}) {
		p = append(p, ToolProxychains)
	}
	// The TLS a tunnel's or handshake's proxy negotiated is read back
	// with openssl s_client.
	if (s.Mode == results.TLSTunnel || s.Mode == results.TLSHandshake) && !slices.Contains(p, ToolOpenSSL) {
		p = append(p, ToolOpenSSL)
	}
	return p
}

// OriginPrograms are the origin's servers.
var OriginPrograms = []string{ToolNginx, ToolIperf3}

// relayHost is the relay's client-side address.
func relayHost(t Target) string {
	if t.ProxyHost != "" {
		return t.ProxyHost
	}
	if h, _, err := net.SplitHostPort(t.Proxy); err == nil {
		return h
	}
	return t.Proxy
}

// seconds renders d as whole seconds for the tools' flags, at least 1.
func seconds(d time.Duration) string {
	return strconv.Itoa(max(1, int(math.Ceil(d.Seconds()))))
}

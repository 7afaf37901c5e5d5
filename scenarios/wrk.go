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

// wrkStartPrefix starts the line that says when the threads of a share
// of a split load started, in Unix nanoseconds.
const wrkStartPrefix = "bench-wrk-start:"

// wrkStartPolls is how many times, a millisecond apart, wrk's script looks for
// the start file of a split load before it gives up: a minute and more.
const wrkStartPolls = 60000

// wrkLatencyPrefix starts the lines of wrk's histogram whole, where the
// load asks for it (Load.Shared): "µs:count" pairs, wrkLatencyPairs a
// line.
const (
	wrkLatencyPrefix = "bench-wrk-latency:"
	wrkLatencyPairs  = 256
)

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
	req := wrkRequest{Path: path, Host: origin, PostBytes: l.PostBytes, Close: l.Close, Whole: l.Shared > 0}
	if l.Shared > 0 {
		req.Start = filepath.Join(dir, ShareStartFile)
	}
	script, err := WrkLua(req)
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
		Grace: wrkGrace(timeout, max(l.Conns, l.Shared), tunnelled(s, t)) + shareWait(l),
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
	Whole     bool   // done() writes the latency histogram whole
	// Start, where set, is the file whose coming starts wrk's threads:
	// its setup() says ShareReady, then waits for it.
	Start string
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
{{- if .Start}}

-- a share of a load split over client hosts: the threads start, on
-- every host at once, at the time the start file holds (Unix
-- nanoseconds on this host's clock), the session writing it ahead of
-- that time on every host; where LuaJIT's FFI serves, the waits sleep a
-- millisecond at most and the start is said to the nanosecond, and
-- elsewhere the threads start as the file comes
local waited = false
setup = function(thread)
  if waited then return end
  waited = true
  io.write("` + ShareReady + `\n")
  io.stdout:flush()
  local ok, ffi = pcall(require, "ffi")
  if ok then
    ffi.cdef[[
      struct bench_ts { long sec; long nsec; };
      int clock_gettime(int clock, struct bench_ts *ts);
      int usleep(unsigned int usec);
    ]]
  end
  for i = 1, {{.Polls}} do
    -- the file whole (its line ended), not one its copy is still writing
    local f = io.open("{{.Start}}")
    local text = f and f:read("*a")
    if f then f:close() end
    if text and text:sub(-1) == "\n" then
      local at = tonumber(text)
      if ok then
        local ts = ffi.new("struct bench_ts")
        local function now()
          ffi.C.clock_gettime(0, ts)
          return tonumber(ts.sec) * 1e9 + tonumber(ts.nsec)
        end
        local t = now()
        while at and t < at do
          ffi.C.usleep(math.max(1, math.min(1000, math.floor((at - t) / 1000))))
          t = now()
        end
        io.write(string.format("` + wrkStartPrefix + ` %d%09d\n", tonumber(ts.sec), tonumber(ts.nsec)))
        io.stdout:flush()
      end
      return
    end
    if ok then ffi.C.usleep(1000) else os.execute("sleep 0.001") end
  end
  io.stderr:write("no start in {{.Start}}\n")
  os.exit(1)
end
{{- end}}

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("` + wrkLinePrefix + ` requests=%d bytes=%d duration_us=%d connect=%d read=%d write=%d status=%d timeout=%d p50_us=%d p99_us=%d\n",
    summary.requests, summary.bytes, summary.duration,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99)))
{{- if .Whole}}
  -- the histogram whole: each latency (µs) any exchange took, and how
  -- many took it, for the merge of a load split over client hosts. Read
  -- through LuaJIT's FFI from wrk's own array (its stats: count, limit,
  -- min, max, then a count a microsecond), where min and max say it is
  -- that array: latency(i) scans the array from its start at each call,
  -- minutes for a wide distribution.
  local buckets = {}
  local ok, ffi = pcall(require, "ffi")
  if ok then
    local s = ffi.cast("uint64_t **", latency)[0]
    local lo, hi = tonumber(s[2]), tonumber(s[3])
    if lo == latency.min and hi == latency.max then
      local sum = 0
      for v = lo, hi do
        local c = tonumber(s[4 + v])
        if c > 0 then
          buckets[#buckets + 1] = string.format("%d:%d", v, c)
          sum = sum + c
        end
      end
      if sum ~= tonumber(s[0]) then buckets = nil end
    else
      buckets = nil
    end
  else
    buckets = nil
  end
  if buckets == nil then
    buckets = {}
    for i = 1, #latency do
      local v, c = latency(i)
      buckets[#buckets + 1] = string.format("%d:%d", v, c)
    end
  end
  for i = 1, #buckets, {{.Pairs}} do
    io.write("` + wrkLatencyPrefix + ` " .. table.concat(buckets, " ", i, math.min(i + {{.Pairs}} - 1, #buckets)) .. "\n")
  end
{{- end}}
end
`))

// WrkLua renders the Lua script for r.
func WrkLua(r wrkRequest) ([]byte, error) {
	for _, s := range []string{r.Path, r.Host, r.Start} {
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
		Pairs  int
		Polls  int
	}{r, method, wrkLatencyPairs, wrkStartPolls})
	return b.Bytes(), err
}

// Parse reads wrk's output: the script's summary line for exact figures,
// checked against wrk's own "Requests/sec:" line.
func (Wrk) Parse(stdout []byte) (Measurement, error) {
	var (
		f         map[string]int64
		rps       float64
		haveRPS   bool
		latencies []LatencyCount
		started   time.Time
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
		case strings.HasPrefix(line, wrkStartPrefix):
			ns, err := strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(line, wrkStartPrefix)), 10, 64)
			if err != nil {
				return Measurement{}, fmt.Errorf("wrk output: %q: %w", line, err)
			}
			started = time.Unix(0, ns)
		case strings.HasPrefix(line, wrkLatencyPrefix):
			var err error
			if latencies, err = parseLatencies(latencies, strings.TrimPrefix(line, wrkLatencyPrefix)); err != nil {
				return Measurement{}, fmt.Errorf("wrk output: %w", err)
			}
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
	m.Started = started // its threads' start, where a split load's share said it
	if latencies != nil {
		if err := checkLatencies(latencies, f); err != nil {
			return Measurement{}, fmt.Errorf("wrk output: %w", err)
		}
		m.Latencies = latencies
	}
	// wrk prints requests / duration with two decimals.
	if got := float64(f["requests"]) / m.Seconds; math.Abs(got-rps) > 0.006+rps*1e-9 {
		return Measurement{}, fmt.Errorf("wrk output: summary line gives %.2f requests/s, wrk printed %.2f", got, rps)
	}
	return m, nil
}

// parseLatencies adds the "µs:count" pairs of s to bs.
func parseLatencies(bs []LatencyCount, s string) ([]LatencyCount, error) {
	for _, pair := range strings.Fields(s) {
		v, c, ok := strings.Cut(pair, ":")
		micros, err1 := strconv.ParseInt(v, 10, 64)
		count, err2 := strconv.ParseInt(c, 10, 64)
		if !ok || err1 != nil || err2 != nil || micros < 0 || count < 1 {
			return nil, fmt.Errorf("latency bucket %q: want µs:count", pair)
		}
		if n := len(bs); n > 0 && bs[n-1].Micros >= micros {
			return nil, fmt.Errorf("latency bucket %q after %d µs: want them in order", pair, bs[n-1].Micros)
		}
		bs = append(bs, LatencyCount{micros, count})
	}
	return bs, nil
}

// checkLatencies checks wrk's histogram whole against its summary: its
// percentiles are wrk's own.
func checkLatencies(bs []LatencyCount, f map[string]int64) error {
	for _, p := range []struct {
		key string
		p   float64
	}{{"p50_us", 50}, {"p99_us", 99}} {
		if got := WrkPercentile(bs, p.p); got != f[p.key] {
			return fmt.Errorf("the histogram's %gth percentile is %d µs, wrk's %d µs", p.p, got, f[p.key])
		}
	}
	return nil
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

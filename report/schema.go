package report

import (
	"strconv"
	"time"
)

// Header is the CSV schema of a session file, one row per run, in the order
// the harness writes it. Readers match columns by name, so a later column
// added at the end does not break older readers.
var Header = []string{
	"machine", "session", "proxy", "kind", "group", "mode", "load", "rep",
	"started", "seconds", "requests", "bytes", "errors", "timeouts",
	"p50_ms", "p99_ms",
	"cpu_proxy_s", "cpu_client_s", "cpu_origin_s",
	"busy_proxy", "busy_client", "busy_origin",
	"thread_proxy", "thread_client", "thread_origin",
	"bound", "peak_mem_bytes", "status", "note",
}

// Row is one run: a column (proxy) measured under one load in one mode.
type Row struct {
	Machine string // the tables' label of the machine, e.g. "ARM (M4)"
	Session string // session id, e.g. "2026-10-13-evening"
	Proxy   string // the column name, e.g. "devel -s0"
	Kind    string // the adapter: 3proxy, nginx, haproxy, ..., direct
	Group   string // baseline, copy or splice
	Mode    string // http, connect, socks, relay, tls-term, ...
	Load    string // stream1, ka-1k, ...
	Rep     int    // repetition, 1..N

	Started  time.Time // start of the measured window
	Seconds  float64   // length of the measured window
	Requests int64     // completed exchanges; 0 for streams
	Bytes    int64     // payload bytes moved in the window
	Errors   int64     // failed exchanges
	Timeouts int64     // exchanges that timed out

	// P50Ms and P99Ms are latencies in milliseconds; HasLatency says
	// whether the load tool gave them (empty cells otherwise).
	P50Ms, P99Ms float64
	HasLatency   bool

	CPUProxy, CPUClient, CPUOrigin          float64 // busy CPU seconds of each role's CPUs
	BusyProxy, BusyClient, BusyOrigin       float64 // busy fraction of each role's CPUs, 0..1
	ThreadProxy, ThreadClient, ThreadOrigin float64 // busiest thread's busy fraction, 0..1

	Bound        string // proxy, client, origin or none
	PeakMemBytes int64  // the proxy's peak memory in the run
	Status       string // ok or failed
	Note         string // why a run failed, or what the tables should not hide

	// Source and Line locate the row in its file, for error messages;
	// set by the reader, ignored by Record.
	Source string
	Line   int
}

// Record formats r as a CSV record in the order of Header.
func (r Row) Record() []string {
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	p50, p99 := "", ""
	if r.HasLatency {
		p50, p99 = fixed(r.P50Ms, 3), fixed(r.P99Ms, 3)
	}
	started := ""
	if !r.Started.IsZero() {
		started = r.Started.Format(time.RFC3339)
	}
	return []string{
		r.Machine, r.Session, r.Proxy, r.Kind, r.Group, r.Mode, r.Load, strconv.Itoa(r.Rep),
		started, fixed(r.Seconds, 3), i(r.Requests), i(r.Bytes), i(r.Errors), i(r.Timeouts),
		p50, p99,
		fixed(r.CPUProxy, 3), fixed(r.CPUClient, 3), fixed(r.CPUOrigin, 3),
		fixed(r.BusyProxy, 4), fixed(r.BusyClient, 4), fixed(r.BusyOrigin, 4),
		fixed(r.ThreadProxy, 4), fixed(r.ThreadClient, 4), fixed(r.ThreadOrigin, 4),
		r.Bound, i(r.PeakMemBytes), r.Status, r.Note,
	}
}

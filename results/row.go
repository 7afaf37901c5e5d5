// Package results is the format of a session's files: the CSV, one row
// per run, with its header, the values its enumerated columns take, its
// reader and its writer; and the metadata file beside it (Meta). The
// harness writes them and the report reads them; both ask this package
// and nothing else what a row or the metadata holds.
package results

import (
	"strconv"
	"strings"
	"time"
)

// Status says whether a run measured anything.
type Status string

// The statuses of a run.
const (
	OK     Status = "ok"
	Failed Status = "failed"
)

// Statuses are the values the status column may hold.
var Statuses = []Status{OK, Failed}

// Bound says which role set the pace of a run: the one whose CPUs or
// busiest thread were busy for most of the window.
type Bound string

// The pace-setters.
const (
	BoundProxy  Bound = "proxy"
	BoundClient Bound = "client"
	BoundOrigin Bound = "origin"
	BoundNone   Bound = "none"
)

// Bounds are the values the bound column may hold.
var Bounds = []Bound{BoundProxy, BoundClient, BoundOrigin, BoundNone}

// Elsewhere reports whether b names a role other than the proxy: the
// client or the origin set the pace.
func (b Bound) Elsewhere() bool { return b == BoundClient || b == BoundOrigin }

// Group says on which side of the tables' ‖ a column sits.
type Group string

// The groups of columns.
const (
	Baseline Group = "baseline" // no proxy: the kernel forwarding
	Copy     Group = "copy"     // proxies copying through user space
	Splice   Group = "splice"   // proxies using splice()
)

// Groups are the values the group column may hold, in the tables' order.
var Groups = []Group{Baseline, Copy, Splice}

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
	MixTLS       Mode = "mix-tls"       // 20000 connections in TLS, ended in the proxy
	TLSTunnel    Mode = "tls-tunnel"    // stunnel's page: a TLS tunnel between two proxies
	TLSHandshake Mode = "tls-handshake" // stunnel's page: handshakes per second
)

// Modes are the values the mode column may hold.
var Modes = []Mode{
	HTTP, Connect, Socks, Relay, TLSTerm, TLSInit,
	MixHTTP, MixConnect, MixSocks, MixRelay, MixTLS,
	TLSTunnel, TLSHandshake,
}

// Header is the schema of a session file, one row per run, in the order
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
	"throttled_periods", "throttled_s", "splice_pipes",
	"p999_ms",
	"offered_rate",
	"closed",
}

// Row is one run: a column (proxy) measured under one load in one mode.
type Row struct {
	Machine string // the tables' label of the machine, e.g. "ARM (M4)"
	Session string // session id, e.g. "2026-10-13-evening"
	Proxy   string // the column name, e.g. "devel -s0"
	Kind    string // the adapter: 3proxy, nginx, haproxy, ..., direct
	Group   Group  // baseline, copy or splice
	Mode    Mode   // http, connect, socks, relay, tls-term, ...
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
	// P999Ms is the 99.9th percentile in milliseconds; HasP999 says
	// whether the load tool gave it (bench mix does; the cell is empty
	// otherwise, and in files written before the column).
	P999Ms  float64
	HasP999 bool

	CPUProxy, CPUClient, CPUOrigin          float64 // busy CPU seconds of each role's CPUs
	BusyProxy, BusyClient, BusyOrigin       float64 // busy fraction of each role's CPUs, 0..1
	ThreadProxy, ThreadClient, ThreadOrigin float64 // busiest thread's busy fraction, 0..1

	Bound        Bound  // proxy, client, origin or none
	PeakMemBytes int64  // the proxy's peak memory in the run
	Status       Status // ok or failed
	Note         string // why a run failed, or what the tables should not hide

	// ThrottledPeriods and ThrottledS are the CFS periods (100 ms each)
	// of the window in which the kernel held the proxy at its CPU quota,
	// and for how long; Throttling says whether the proxy had a quota
	// (empty cells otherwise, and in files written before these columns).
	ThrottledPeriods int64
	ThrottledS       float64
	Throttling       bool

	// SplicePipes is the most pipes the proxy held at once in the window
	// beyond those it had when it became ready: 0 for a proxy that never
	// spliced. HasPipes says whether it was counted (files written before
	// the column have none: unknown, not none).
	SplicePipes int64
	HasPipes    bool

	// OfferedRate is the exchanges a second a step of a sweep offered
	// (load LoadSweep; the step itself is in the note, see Step);
	// HasOffered says whether the row is such a step (empty cells
	// otherwise, and in files written before the column).
	OfferedRate float64
	HasOffered  bool

	// ClosedReads are the load tool's errors that are reads on
	// connections the proxy closed after its answer (ClosedAfterAnswer:
	// wrk's), among Errors and no failed exchange; HasClosed says whether
	// the tool told its reads apart (wrk does; files written before the
	// column have none, and Closed reads their errors instead).
	ClosedReads int64
	HasClosed   bool

	// Source and Line locate the row in its file, for error messages;
	// set by the reader, ignored by Record.
	Source string
	Line   int
}

// Gbps is the run's throughput in Gbit/s.
func (r *Row) Gbps() float64 { return float64(r.Bytes) * 8 / r.Seconds / 1e9 }

// PerSecond is the run's completed exchanges a second.
func (r *Row) PerSecond() float64 { return float64(r.Requests) / r.Seconds }

// Stream reports whether a load is a bulk stream (iperf3), measured in
// Gbit/s alone.
func Stream(load string) bool { return strings.HasPrefix(load, "stream") }

// Bulk reports whether a load moves bulk data, streams or 1 MB answers:
// its figure is Gbit/s (and CPU seconds per gigabyte), where the other
// loads' is exchanges a second.
func Bulk(load string) bool { return Stream(load) || strings.HasSuffix(load, "-1m") }

// Record formats r as a CSV record in the order of Header.
func (r Row) Record() []string {
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	fixed := func(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }
	p50, p99 := "", ""
	if r.HasLatency {
		p50, p99 = fixed(r.P50Ms, 3), fixed(r.P99Ms, 3)
	}
	started := ""
	if !r.Started.IsZero() {
		started = r.Started.Format(time.RFC3339)
	}
	p999 := ""
	if r.HasP999 {
		p999 = fixed(r.P999Ms, 3)
	}
	offered := ""
	if r.HasOffered {
		offered = fixed(r.OfferedRate, 1)
	}
	closed := ""
	if r.HasClosed {
		closed = i(r.ClosedReads)
	}
	periods, throttled, pipes := "", "", ""
	if r.Throttling {
		periods, throttled = i(r.ThrottledPeriods), fixed(r.ThrottledS, 3)
	}
	if r.HasPipes {
		pipes = i(r.SplicePipes)
	}
	return []string{
		r.Machine, r.Session, r.Proxy, r.Kind, string(r.Group), string(r.Mode), r.Load, strconv.Itoa(r.Rep),
		started, fixed(r.Seconds, 3), i(r.Requests), i(r.Bytes), i(r.Errors), i(r.Timeouts),
		p50, p99,
		fixed(r.CPUProxy, 3), fixed(r.CPUClient, 3), fixed(r.CPUOrigin, 3),
		fixed(r.BusyProxy, 4), fixed(r.BusyClient, 4), fixed(r.BusyOrigin, 4),
		fixed(r.ThreadProxy, 4), fixed(r.ThreadClient, 4), fixed(r.ThreadOrigin, 4),
		string(r.Bound), i(r.PeakMemBytes), string(r.Status), r.Note,
		periods, throttled, pipes,
		p999,
		offered,
		closed,
	}
}

// Spliced reports whether the run's proxy spliced, and whether that is
// known: a row without the count (an older file, a failed run) is
// unknown, not a proxy that never spliced.
func (r *Row) Spliced() (spliced, known bool) {
	return r.SplicePipes > 0, r.HasPipes
}

// Closed is the part of the run's errors that are no failed exchange:
// the load tool's reads on connections the proxy closed after its answer
// (ClosedAfterAnswer). A row that tells its reads apart (HasClosed, wrk's
// since the column) gives them; in an older file, a run whose errors
// match its answers as ClosedAfterAnswer reads them is read so, but for
// bench mix's, which counts such exchanges itself (its reconnects).
func (r *Row) Closed() int64 {
	if r.HasClosed {
		return r.ClosedReads
	}
	if IsMix(r.Load) || r.Load == LoadSweep {
		return 0
	}
	return ClosedAfterAnswer(r.Errors, r.Requests)
}

// ClosedAfterAnswer is how many of reads, a load tool's read errors, are
// reads on connections the proxy closed after its answer, given the
// answers: all of them where they match the answers one for one (no
// more, and at least ClosedShare of them), none otherwise. wrk counts a
// read error when a connection it kept alive ends as it sends the next
// request, and sends that request again on a new one, so that a proxy
// that keeps no connection alive (tinyproxy) gives one such error an
// answer; a proxy's failures are not so many, nor so regular.
func ClosedAfterAnswer(reads, answers int64) int64 {
	if reads == 0 || reads > answers || float64(reads) < ClosedShare*float64(answers) {
		return 0
	}
	return reads
}

// ClosedShare is how many of a run's answers must each have been
// followed by a read error for those to read as connections closed after
// their answer (ClosedAfterAnswer): the connections open at the window's
// end are a few less.
const ClosedShare = 0.99

// Failures are the run's failed exchanges: its errors (non-2xx answers,
// resets, short or wrong answers) and timeouts, less those that are no
// failure (Closed).
func (r *Row) Failures() int64 { return r.Errors + r.Timeouts - r.Closed() }

// FixedRate reports whether a load asks for a rate of exchanges, open
// loop, rather than as many as the proxy answers: the mix loads named
// for their rate ("mix-3k"), not the closed-loop mix nor a sweep's
// steps (whose rate each step sets).
func FixedRate(load string) bool {
	rest, ok := strings.CutPrefix(load, "mix-")
	return ok && rest != "" && rest[len(rest)-1] == 'k' && strings.Trim(rest[:len(rest)-1], "0123456789") == "" && len(rest) > 1
}

// IsMix reports whether a load is one of the mix loads ("mix",
// "mix-3k"), bench mix's.
func IsMix(load string) bool {
	rest, ok := strings.CutPrefix(load, "mix")
	return ok && (rest == "" || rest[0] == '-')
}

// halfCloseFailed parts a run's half-close note, its count before and
// the cause after: "12 of the failed exchanges half-closed: squid
// closes a connection whose client half-closed ...".
const halfCloseFailed = " of the failed exchanges half-closed: "

// HalfCloseNote is the part of a run's note that says n of its failed
// exchanges half-closed and why the proxy cuts those (cause, its
// adapter's word).
func HalfCloseNote(n int64, cause string) string {
	return strconv.FormatInt(n, 10) + halfCloseFailed + cause
}

// HalfCloseCause finds the half-close part of a run's note (its parts
// parted by "; "), as HalfCloseNote wrote it; ok is false where it has
// none.
func HalfCloseCause(note string) (part string, ok bool) {
	for _, p := range strings.Split(note, "; ") {
		if n, _, found := strings.Cut(p, halfCloseFailed); found && n != "" && strings.Trim(n, "0123456789") == "" {
			return p, true
		}
	}
	return "", false
}

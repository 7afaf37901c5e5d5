package scenarios

import (
	"bench/results"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ToolBench is bench itself, as the load tool of the mix scenarios: the
// session runs its own executable's `bench mix` in the client namespace.
const ToolBench = "bench"

// MixAnswer is one of the origin's answers of the mix scenarios and how
// often an exchange asks for it.
type MixAnswer struct {
	Path   string // the origin's file: "/mix/32k"
	Size   int    // its length in bytes; its content is OriginAnswer(Size)
	Weight int    // exchanges asking for it, out of MixWeights
}

// mixAnswers is the mix's size distribution, the one place it is
// defined: many small answers and a few large ones, 44,954 bytes on
// average. The reference results' mix figures imply about 45 KB an exchange (1.72
// Gbit/s at 4.7k exchanges a second, 1.08 Gbit/s at 3.0k). The origin
// serves these files and bench mix asks for them and checks them.
var mixAnswers = []MixAnswer{
	{"/mix/1k", 1 << 10, 30},
	{"/mix/8k", 8 << 10, 25},
	{"/mix/32k", 32 << 10, 20},
	{"/mix/64k", 64 << 10, 15},
	{"/mix/256k", 256 << 10, 10},
}

// MixWeights is the sum of the mix answers' weights.
const MixWeights = 100

// MixHalfCloseEvery: one exchange in this many sends its request with
// "Connection: close", then shuts down the client's sending side
// (shutdown(SHUT_WR)) and must still receive the whole answer; the
// connection is then opened again through the proxy.
const MixHalfCloseEvery = 10

// MixAnswers returns the mix's answers in order of size. The slice is
// the caller's.
func MixAnswers() []MixAnswer { return append([]MixAnswer(nil), mixAnswers...) }

// MixMeanSize is the mean answer of the mix, in bytes.
func MixMeanSize() float64 {
	var sum, w int
	for _, a := range mixAnswers {
		sum += a.Size * a.Weight
		w += a.Weight
	}
	return float64(sum) / float64(w)
}

// MixOpened is the line bench mix prints on standard output as soon as
// its connections are open, before its report: when its warm-up (and
// its window a warm-up later) begins, so that the session plans the
// sampler's polls from then (the opening lasts as long as the proxy
// makes it: over 6 s for 9950 connections through a saturated proxy).
type MixOpened struct {
	Start time.Time `json:"opened"` // when the warm-up begins
}

// ParseMixOpened reads line as bench mix's MixOpened; ok is false for
// any other line.
func ParseMixOpened(line []byte) (o MixOpened, ok bool) {
	if !bytes.HasPrefix(bytes.TrimSpace(line), []byte(`{"opened":`)) || json.Unmarshal(line, &o) != nil || o.Start.IsZero() {
		return MixOpened{}, false
	}
	return o, true
}

// MixResult is what bench mix prints on standard output, as one JSON
// object: bench mix writes it, the driver reads it. Exchanges that failed
// are counted only under Errors.
//
// The window is fixed: Started, Seconds long. In a closed loop its
// exchanges are those that ended inside it; at a fixed rate those
// scheduled inside it. Its throughput is Exchanges / Seconds.
type MixResult struct {
	Mode          string    `json:"mode"`           // http, connect, socks, relay
	Exchanges     int64     `json:"exchanges"`      // the window's exchanges answered whole and correct, begun on time
	Bytes         int64     `json:"bytes"`          // answer bodies received whole (exchanges and late ones)
	Started       time.Time `json:"started"`        // the start of the measured window, after the warm-up
	Seconds       float64   `json:"seconds"`        // the length of the measured window, --duration
	WarmupSeconds float64   `json:"warmup_seconds"` // the warm-up before it, --warmup
	OpenSeconds   float64   `json:"open_seconds"`   // time to open all connections
	ConnsWanted   int       `json:"conns_wanted"`   // --conns
	Conns         int       `json:"conns"`          // connections open when the load began
	Active        int       `json:"active,omitempty"`
	Rate          float64   `json:"rate,omitempty"` // exchanges a second asked for (open loop)
	HalfClosed    int64     `json:"half_closed"`    // exchanges among Exchanges that half-closed
	// HalfCloseFailed are the failed exchanges (among Errors) that
	// half-closed: a proxy that does not pass a half-close on fails
	// these and no other.
	HalfCloseFailed int64 `json:"half_close_failed"`
	// Reconnects are the window's exchanges that found their kept-alive
	// connection closed before any byte of the answer (the proxy closed
	// it after the last answer without saying so) and were made again on
	// a new connection.
	Reconnects int64     `json:"reconnects"`
	Errors     MixErrors `json:"errors"`
	// Due are the exchanges in the latency: every one that was due in
	// the window, answered or not (Exchanges, every kind of Errors, and
	// in a closed loop Unfinished).
	Due int64 `json:"due"`
	// Unfinished are, in a closed loop, the exchanges still running at
	// the window's end: in the latency, at their whole time, and in no
	// other figure.
	Unfinished int64 `json:"unfinished"`
	// Latency of every due exchange, from each one's scheduled start at
	// a fixed rate, from its start otherwise: a timed-out one at its time
	// (at least --timeout), a dropped one as one still waiting, from when
	// it was due to the window's end and at least --timeout.
	P50Ms  float64 `json:"p50_ms"`
	P99Ms  float64 `json:"p99_ms"`
	P999Ms float64 `json:"p999_ms"`
	// The same of the exchanges answered whole and on time alone.
	OkP50Ms  float64 `json:"ok_p50_ms"`
	OkP99Ms  float64 `json:"ok_p99_ms"`
	OkP999Ms float64 `json:"ok_p999_ms"`
	// Procs is how many processes ran the mix; Split the connections
	// each opened (asked for), in order.
	Procs int   `json:"procs"`
	Split []int `json:"split"`
	// Histogram and OkHistogram are the two latency histograms in
	// microseconds, HdrHistogram's V2 compressed encoding in base64, for
	// merging.
	Histogram   string `json:"histogram,omitempty"`
	OkHistogram string `json:"ok_histogram,omitempty"`
	// PerSecond counts the window's exchanges and bytes (as Exchanges
	// and Bytes count them) by the second of the window they fall in:
	// the one an exchange was scheduled in at a fixed rate, the one it
	// ended in otherwise.
	PerSecond []MixSecond `json:"per_second,omitempty"`
}

// MixSecond is one second of a mix's window.
type MixSecond struct {
	Exchanges int64 `json:"exchanges"`
	Bytes     int64 `json:"bytes"`
}

// MixErrors counts failed exchanges by kind. An exchange is counted
// once, under the first thing that went wrong.
type MixErrors struct {
	Refused int64 `json:"refused"` // no connection: refused, or the proxy declined the tunnel
	Reset   int64 `json:"reset"`   // the connection was reset or closed before any answer
	Short   int64 `json:"short"`   // the answer ended before its length
	Wrong   int64 `json:"wrong"`   // bad status, length, headers or content
	Timeout int64 `json:"timeout"` // not answered whole within --timeout
	Late    int64 `json:"late"`    // answered whole, but begun more than --timeout after its scheduled start
	Dropped int64 `json:"dropped"` // scheduled in the window, never begun: no connection was free
}

// errorDetail names the kinds of errors with their counts, and how many
// of the failed exchanges half-closed: "reset 2444 (2444 half-closed)".
func (r MixResult) errorDetail() string {
	e := r.Errors
	var parts []string
	for _, k := range []struct {
		name string
		n    int64
	}{{"refused", e.Refused}, {"reset", e.Reset}, {"short", e.Short}, {"wrong", e.Wrong},
		{"timeout", e.Timeout}, {"late", e.Late}, {"dropped", e.Dropped}} {
		if k.n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k.name, k.n))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	s := strings.Join(parts, ", ")
	if r.HalfCloseFailed > 0 {
		s += fmt.Sprintf(" (%d of the exchanges that half-closed)", r.HalfCloseFailed)
	}
	return s
}

// Failed is every kind but timeouts, which the CSV counts apart.
func (e MixErrors) Failed() int64 {
	return e.Refused + e.Reset + e.Short + e.Wrong + e.Late + e.Dropped
}

// Mix drives bench mix for the mix scenarios.
type Mix struct{}

var _ Driver = Mix{}

// Tool returns "bench".
func (Mix) Tool() string { return ToolBench }

// mixTimeout is bench mix's per-exchange limit, as wrk's.
const mixTimeout = wrkTimeout

// Invocation runs bench mix for window: load.Conns connections through
// the mode's proxy (the relay's client-side address for mix-relay, its
// TLS listener for mix-tls, straight to the origin when t is Direct, in
// TLS to its wrapper for mix-tls), Active exchanges at a time
// or Rate a second. Process count is bench mix's own default. A sweep's
// bench mix steps (--steps): it opens the connections, says so, and runs
// the steps the session asks for on its input, a result a line; its
// Grace is then how long the opening may take.
func (Mix) Invocation(s Scenario, t Target, window time.Duration, dir string) (Invocation, error) {
	l := s.Load
	paced := 0
	for _, set := range []bool{l.Active > 0, l.Rate > 0, l.Sweep} {
		if set {
			paced++
		}
	}
	if l.Conns < 1 || paced != 1 {
		return Invocation{}, fmt.Errorf("scenario %s: bench mix needs connections and one of active, rate or sweep, has %d, %d, %d, %v", s.Name, l.Conns, l.Active, l.Rate, l.Sweep)
	}
	mode, proxy, origin, tlsCA, err := mixEnds(s, t)
	if err != nil {
		return Invocation{}, err
	}
	timeout := l.Timeout
	if timeout <= 0 {
		timeout = mixTimeout
	}
	argv := []string{ToolBench, "mix",
		"--mode", mode,
		"--proxy", proxy,
		"--origin", origin,
		"--conns", strconv.Itoa(l.Conns),
	}
	if tlsCA != "" {
		argv = append(argv, "--tls-ca", tlsCA)
	}
	// Opening: 20000 connections take a few seconds at bench mix's pace,
	// and up to 4 ms each through a slow proxy (squid opens about 300
	// tunnels a second on one CPU).
	// A share of a split load opens as slowly as the whole load through
	// the proxy, then waits for the slowest host's (ShareWait).
	opening := 5*time.Second + time.Duration(max(l.Conns, l.Shared))*4*time.Millisecond
	opening += shareWait(l)
	if l.Sweep {
		argv = append(argv, "--steps", "--timeout", timeout.String())
		return Invocation{Argv: argv, Grace: opening}, nil
	}
	if l.Active > 0 {
		argv = append(argv, "--mix-active", strconv.Itoa(l.Active))
	} else {
		argv = append(argv, "--rate", strconv.Itoa(l.Rate))
	}
	// The warm-up is the session's, run by bench mix on the connections
	// it then measures with.
	argv = append(argv, "--duration", window.String(), "--warmup", l.Warmup.String(), "--timeout", timeout.String())
	if l.Shared > 0 {
		// a share of a load split over client hosts: it starts when
		// every host's connections are open, where the session says
		argv = append(argv, "--start-file", filepath.Join(dir, ShareStartFile))
	}
	return Invocation{
		Argv: argv,
		// The opening, the warm-up, the last exchanges' timeout (twice,
		// for one retried) and the report.
		Grace: opening + l.Warmup + 2*timeout,
	}, nil
}

// mixEnds are where bench mix goes in s's mode against t: its mode,
// its proxy (the relay's client-side address for mix-relay, the TLS
// listener for mix-tls, the origin's mix when t is Direct), the origin
// as the proxy reaches it, and the CA of a TLS end.
func mixEnds(s Scenario, t Target) (mode, proxy, origin, tlsCA string, err error) {
	if t.Origin == "" {
		return "", "", "", "", fmt.Errorf("scenario %s: target has no origin address", s.Name)
	}
	if t.Proxy == "" && !t.Direct {
		return "", "", "", "", fmt.Errorf("scenario %s: target has no proxy address", s.Name)
	}
	// The half-closed exchanges reach the origin through tunnels and
	// relays, and nginx gives up an answer whose client shut its sending
	// side: there the origin is bench mix --serve, which writes it whole.
	// An HTTP proxy asks the origin's nginx, as the other HTTP loads do.
	origin = net.JoinHostPort(t.Origin, strconv.Itoa(PortMix))
	mode, proxy = string(BaseMode(s.Mode)), t.Proxy
	switch {
	case s.Mode == results.MixTLS:
		// A relay in TLS: the proxy's TLS listener in front of the
		// origin's mix, or for the baseline the origin's own TLS wrapper.
		if t.CA == "" {
			return "", "", "", "", fmt.Errorf("scenario %s: target has no CA to verify the TLS end with", s.Name)
		}
		h, port, _ := tlsEntry(results.TLSTerm, t, PortMix)
		mode, proxy, tlsCA = string(results.Relay), net.JoinHostPort(h, strconv.Itoa(port)), t.CA
	case t.Direct:
		// Straight to the origin is a relay that is the origin.
		mode, proxy = string(results.Relay), origin
	case s.Mode == results.MixHTTP:
		origin = net.JoinHostPort(t.Origin, strconv.Itoa(PortHTTP))
	case s.Mode == results.MixRelay:
		proxy = net.JoinHostPort(relayHost(t), strconv.Itoa(relayPort(s.Mode, PortMix)))
	case s.Mode != results.MixConnect && s.Mode != results.MixSocks:
		return "", "", "", "", fmt.Errorf("scenario %s: bench mix cannot run mode %q", s.Name, s.Mode)
	}
	return mode, proxy, origin, tlsCA, nil
}

// StepGrace is how long past a step's warm-up and window a stepping
// bench mix may take to give its result: its last exchanges' timeout
// (twice, for one retried), opening again the connections closed at the
// last step's end, and the report.
func StepGrace(l Load) time.Duration {
	timeout := l.Timeout
	if timeout <= 0 {
		timeout = mixTimeout
	}
	return 2*timeout + 5*time.Second
}

// Parse reads bench mix's JSON. Requests are the window's exchanges
// answered on time; Errors every failed kind but timeouts; the latency
// that of every exchange due in the window; the window the one bench mix
// gives, so that the CPU figures cover it; the note the retried
// exchanges, if any.
func (Mix) Parse(stdout []byte) (Measurement, error) {
	var r MixResult
	// its report is the last line, after the line that said it opened
	lines := bytes.Split(bytes.TrimSpace(stdout), []byte("\n"))
	if err := json.Unmarshal(lines[len(lines)-1], &r); err != nil {
		return Measurement{}, fmt.Errorf("bench mix output: %w (killed before its report?)", err)
	}
	if r.Seconds <= 0 {
		return Measurement{}, fmt.Errorf("bench mix output: window of %v seconds", r.Seconds)
	}
	m := Measurement{
		Seconds:    r.Seconds,
		Started:    r.Started,
		Requests:   r.Exchanges,
		Bytes:      r.Bytes,
		Errors:     r.Errors.Failed(),
		Timeouts:   r.Errors.Timeout,
		P50Ms:      r.P50Ms,
		P99Ms:      r.P99Ms,
		P999Ms:     r.P999Ms,
		HasLatency: r.Due > 0,
		HasP999:    r.Due > 0,
		Detail:     r.errorDetail(),
		Histogram:  r.Histogram,

		HalfCloseFailed: r.HalfCloseFailed,
	}
	// Whole seconds, the last what is left of the window.
	for i, sec := range r.PerSecond {
		m.Intervals = append(m.Intervals, results.Interval{
			Seconds: min(1, r.Seconds-float64(i)), Requests: sec.Exchanges, Bytes: sec.Bytes})
	}
	if r.Reconnects > 0 {
		m.Note = fmt.Sprintf("reconnects %d: exchanges made again on a new connection, the proxy having closed a kept-alive one after an answer without saying so", r.Reconnects)
	}
	return m, nil
}

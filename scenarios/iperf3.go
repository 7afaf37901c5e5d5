package scenarios

import (
	"bench/results"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// Iperf3 drives iperf3 for the stream loads.
type Iperf3 struct{}

var _ Driver = Iperf3{}

// Tool returns "iperf3".
func (Iperf3) Tool() string { return ToolIperf3 }

// Invocation runs iperf3 -c for window with JSON output: upload, or
// download with -R, and -P for several streams. It targets the origin
// for connect and socks (inside the tunnel, see Build) and when t is
// Direct, and the relay's client-side address for relay. The session
// warms up on its own, so no interval is omitted.
func (Iperf3) Invocation(s Scenario, t Target, window time.Duration, dir string) (Invocation, error) {
	l := s.Load
	if l.Conns < 1 {
		return Invocation{}, fmt.Errorf("scenario %s: iperf3 needs at least one stream, has %d", s.Name, l.Conns)
	}
	host, port := t.Origin, PortIperf
	var wrap []string
	switch {
	case IsTLS(s.Mode):
		var clientTLS bool
		host, port, clientTLS = tlsEntry(s.Mode, t, PortIperf)
		if clientTLS {
			// bench mix tls takes iperf3's plain connections on the
			// client's loopback and speaks TLS to the proxy or origin.
			if t.CA == "" {
				return Invocation{}, fmt.Errorf("scenario %s: target has no CA to verify the TLS server with", s.Name)
			}
			local := net.JoinHostPort("127.0.0.1", strconv.Itoa(PortIperf))
			wrap = []string{ToolBench, "mix", "tls", "client", "--listen", local,
				"--connect", net.JoinHostPort(host, strconv.Itoa(port)), "--ca", t.CA, "--"}
			host, port = "127.0.0.1", PortIperf
		}
	case s.Mode == results.TLSTunnel && !t.Direct:
		// To the tunnel's client end, beside iperf3 on the client.
		host = TunnelEntry
	case t.Direct, tunnelled(s, t), s.Mode == results.TLSTunnel:
	case s.Mode == results.Relay:
		host = relayHost(t)
	default:
		return Invocation{}, fmt.Errorf("scenario %s: iperf3 cannot run mode %q", s.Name, s.Mode)
	}
	if host == "" {
		return Invocation{}, fmt.Errorf("scenario %s: target has no address for iperf3", s.Name)
	}
	argv := append(wrap, ToolIperf3, "-c", host, "-p", strconv.Itoa(port), "-t", seconds(window), "-O", "0", "-J")
	if l.Conns > 1 {
		argv = append(argv, "-P", strconv.Itoa(l.Conns))
	}
	if l.Reverse {
		argv = append(argv, "-R")
	}
	// iperf3 connects, runs the window, then exchanges results with the
	// server.
	return Invocation{Argv: argv, Grace: 5 * time.Second}, nil
}

// iperfResult is the part of iperf3 -J's output the driver reads.
type iperfResult struct {
	Error     string `json:"error"`
	Intervals []struct {
		Sum struct {
			Seconds float64 `json:"seconds"`
			Bytes   int64   `json:"bytes"`
		} `json:"sum"`
	} `json:"intervals"`
	End struct {
		SumReceived *struct {
			Seconds float64 `json:"seconds"`
			Bytes   int64   `json:"bytes"`
		} `json:"sum_received"`
	} `json:"end"`
}

// ErrServerBusy is iperf3's refusal while its server still serves the
// test before (it serves one at a time, and on a loaded machine it may
// not yet have seen the end of the last run's tunnel): the run can be
// made again once the server is free.
var ErrServerBusy = errors.New("the iperf3 server is still busy with the test before")

// Parse reads iperf3 -J's output: the bytes the receiver got and the
// seconds it measured them over, and the client's intervals (a second
// each, the sum over the streams). An "error" in the JSON fails the run.
func (Iperf3) Parse(stdout []byte) (Measurement, error) {
	var r iperfResult
	if err := json.Unmarshal(stdout, &r); err != nil {
		return Measurement{}, fmt.Errorf("iperf3 output: %w (killed before its report?)", err)
	}
	if r.Error != "" {
		if strings.Contains(r.Error, "server is busy") {
			return Measurement{}, fmt.Errorf("iperf3: %s: %w", strings.TrimSpace(r.Error), ErrServerBusy)
		}
		return Measurement{}, fmt.Errorf("iperf3: %s", strings.TrimSpace(r.Error))
	}
	sr := r.End.SumReceived
	if sr == nil || sr.Seconds <= 0 {
		return Measurement{}, fmt.Errorf("iperf3 output has no end.sum_received: the test did not finish")
	}
	m := Measurement{Seconds: sr.Seconds, Bytes: sr.Bytes}
	for _, iv := range r.Intervals {
		if iv.Sum.Seconds > 0 {
			m.Intervals = append(m.Intervals, results.Interval{Seconds: iv.Sum.Seconds, Bytes: iv.Sum.Bytes})
		}
	}
	return m, nil
}

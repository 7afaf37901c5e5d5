package scenarios

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// A load split over several client hosts (a hosts file with several
// client lines): each host runs the scenario's tool with its share of
// the connections, of the exchanges at a time and of the rate, all at
// once; their figures add up and their latency distributions merge
// whole, never their percentiles averaged.

// ShareReady is the line a client host's tool prints once it is ready
// to begin its share (bench mix --start-file once its connections are
// open, wrk's script before its threads start); it then waits for the
// file ShareStartFile in its load folder, which the session writes on
// every host once all have said it, ahead of the time it holds, in Unix
// nanoseconds: bench mix's warm-up begins then, and wrk's threads.
const (
	ShareReady     = "ready"
	ShareStartFile = "start"
)

// ShareWait is how long past its own a share's tool may wait for the
// start it shares with the other client hosts: their tools' start-up,
// and the session's giving each its start.
const ShareWait = 5 * time.Second

// shareWait is ShareWait where l is a share of a split load, else 0.
func shareWait(l Load) time.Duration {
	if l.Shared > 0 {
		return ShareWait
	}
	return 0
}

// Part is the i-th of n nearly equal parts of total, the first ones a
// larger by one where n does not divide it.
func Part(total, i, n int) int {
	p := total / n
	if i < total%n {
		p++
	}
	return p
}

// ShareOf is client host i's part of s's load split over n client
// hosts: the i-th of n nearly equal parts of its connections, exchanges
// at a time and rate, its tool writing its latency distribution whole
// (Load.Shared) so that the parts merge exactly. One host takes the
// whole load as it is.
func ShareOf(s Scenario, i, n int) (Scenario, error) {
	if n <= 1 {
		return s, nil
	}
	l := s.Load
	switch {
	case l.Tool == ToolOpenSSL:
		return s, fmt.Errorf("scenario %s: its handshakes are one connection at a time (openssl s_time, stunnel's page's method), which cannot be split over %d client hosts", s.Name, n)
	case l.Tool == ToolIperf3 && l.Conns < n:
		return s, fmt.Errorf("scenario %s: its iperf3 streams (%d) cannot be split over %d client hosts", s.Name, l.Conns, n)
	case l.Tool == ToolIperf3:
		return s, fmt.Errorf("scenario %s: its %d streams run from one client host: the origin's iperf3 server takes one test at a time", s.Name, l.Conns)
	case l.Sweep:
		return s, fmt.Errorf("scenario %s: the search for a sustainable rate runs from one client host", s.Name)
	case l.Conns < n:
		return s, fmt.Errorf("scenario %s: %d connections over %d client hosts: want at least one each", s.Name, l.Conns, n)
	case l.Active > 0 && l.Active < n:
		return s, fmt.Errorf("scenario %s: %d exchanges at a time over %d client hosts: want at least one each", s.Name, l.Active, n)
	case l.Rate > 0 && l.Rate < n:
		return s, fmt.Errorf("scenario %s: %d exchanges a second over %d client hosts: want at least one each", s.Name, l.Rate, n)
	}
	l.Conns = Part(l.Conns, i, n)
	if l.Active > 0 {
		l.Active = Part(l.Active, i, n)
	}
	if l.Rate > 0 {
		l.Rate = Part(l.Rate, i, n)
	}
	l.Shared = s.Load.Conns
	s.Load = l
	return s, nil
}

// EndSlack is how late after its window a tool may stop counting, in
// its own figures over its own length: wrk's threads notice the window's
// end at their 100 ms timer (RECORD_INTERVAL_MS), and its length runs to
// the last thread's; bench mix ends its window at its time.
func EndSlack(tool string) time.Duration {
	if tool == ToolWrk {
		return 100 * time.Millisecond
	}
	return 0
}

// LatencyCount is a latency in microseconds and how many exchanges took
// it: a bucket of wrk's own histogram, which keeps every microsecond.
type LatencyCount struct {
	Micros, Count int64
}

// behindShare is the least a client host's exchanges per connection
// may be of the whole load's: below it the host lags the others (Lag).
const behindShare = 0.5

// MergeShares adds up what each client host's tool measured of its
// share (shares, in order, as ShareOf made them) into one measurement:
// the counts summed, each host's window the longest, the latency merged
// from the hosts' whole distributions (bench mix's HdrHistogram, wrk's
// own buckets). Started is the earliest, on the clock the caller gave
// them. A distribution that cannot be merged is an error, naming its
// host by its place (from 1).
func MergeShares(shares []Scenario, ms []Measurement) (Measurement, error) {
	if len(ms) == 0 || len(ms) != len(shares) {
		return Measurement{}, fmt.Errorf("%d measurements of %d shares", len(ms), len(shares))
	}
	if len(ms) == 1 {
		return ms[0], nil
	}
	var m Measurement
	var details, notes []string
	for i, x := range ms {
		m.Seconds = max(m.Seconds, x.Seconds)
		if !x.Started.IsZero() && (m.Started.IsZero() || x.Started.Before(m.Started)) {
			m.Started = x.Started
		}
		m.Requests += x.Requests
		m.Bytes += x.Bytes
		m.Errors += x.Errors
		m.Timeouts += x.Timeouts
		m.Closed += x.Closed
		m.HalfCloseFailed += x.HalfCloseFailed
		m.HasClosed = x.HasClosed
		for j, in := range x.Intervals {
			if j == len(m.Intervals) {
				m.Intervals = append(m.Intervals, in)
				continue
			}
			m.Intervals[j].Requests += in.Requests
			m.Intervals[j].Bytes += in.Bytes
		}
		if x.Detail != "" {
			details = append(details, fmt.Sprintf("client host %d: %s", i+1, x.Detail))
		}
		if x.Note != "" {
			notes = append(notes, fmt.Sprintf("client host %d: %s", i+1, x.Note))
		}
	}
	m.Detail, m.Note = strings.Join(details, "; "), strings.Join(notes, "; ")
	return m, mergeLatency(&m, ms)
}

// Lag is a client host whose share fell behind the others' in a closed
// loop: its exchanges a connection below behindShare of the whole
// load's. Whether it fell behind (its CPUs at their limit) or was served
// less (by the proxy or the origin) its host's CPU tells, which the
// session reads.
type Lag struct {
	Host       int     // its place, from 0
	Own, Whole float64 // exchanges a connection: its own, the load's
}

func (l Lag) String() string {
	return fmt.Sprintf("client host %d had %.1f exchanges a connection, the load's %.1f", l.Host+1, l.Own, l.Whole)
}

// Lagging are the client hosts whose share lags the others' (shares and
// ms in order, as for MergeShares) in a closed loop. At a fixed rate a
// host behind its schedule fails the exchanges it could not begin in
// time (bench mix's late and dropped), which count as failed already.
func Lagging(shares []Scenario, ms []Measurement) []Lag {
	var conns int
	var done int64
	for i, s := range shares {
		if s.Load.Rate > 0 {
			return nil
		}
		conns += s.Load.Conns
		done += ms[i].Requests + ms[i].Errors + ms[i].Timeouts
	}
	if conns == 0 || done == 0 {
		return nil
	}
	whole := float64(done) / float64(conns)
	var lags []Lag
	for i, s := range shares {
		x := ms[i]
		if own := float64(x.Requests+x.Errors+x.Timeouts) / float64(s.Load.Conns); own < behindShare*whole {
			lags = append(lags, Lag{Host: i, Own: own, Whole: whole})
		}
	}
	return lags
}

// mergeLatency sets m's percentiles from the hosts' distributions.
func mergeLatency(m *Measurement, ms []Measurement) error {
	some := slices.ContainsFunc(ms, func(x Measurement) bool { return x.HasLatency })
	switch {
	case !some:
		return nil
	case !slices.ContainsFunc(ms, func(x Measurement) bool { return x.Histogram == "" }):
		return mergeHistograms(m, ms)
	case !slices.ContainsFunc(ms, func(x Measurement) bool { return x.HasLatency && x.Latencies == nil }):
		var all []LatencyCount
		for _, x := range ms {
			all = append(all, x.Latencies...)
		}
		m.Latencies = MergeLatencies(all)
		var n int64
		for _, b := range m.Latencies {
			n += b.Count
		}
		if n > 0 {
			m.HasLatency = true
			m.P50Ms = float64(WrkPercentile(m.Latencies, 50)) / 1e3
			m.P99Ms = float64(WrkPercentile(m.Latencies, 99)) / 1e3
		}
		return nil
	}
	return errors.New("the client hosts' latency cannot be merged: a host's tool did not write its distribution whole")
}

// mergeHistograms merges bench mix's HdrHistograms, its percentiles
// read from the merged one as bench mix reads its own.
func mergeHistograms(m *Measurement, ms []Measurement) error {
	var into *hdrhistogram.Histogram
	for i, x := range ms {
		h, err := hdrhistogram.Decode([]byte(x.Histogram))
		if err != nil {
			return fmt.Errorf("client host %d's histogram: %w", i+1, err)
		}
		if into == nil {
			into = hdrhistogram.New(h.LowestTrackableValue(), h.HighestTrackableValue(), int(h.SignificantFigures()))
		}
		if dropped := into.Merge(h); dropped > 0 {
			return fmt.Errorf("client host %d's histogram: %d values out of range", i+1, dropped)
		}
	}
	b, err := into.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return err
	}
	m.Histogram = string(b)
	if into.TotalCount() > 0 {
		ms := func(q float64) float64 { return float64(into.ValueAtQuantile(q)) / 1e3 }
		m.P50Ms, m.P99Ms, m.P999Ms = ms(50), ms(99), ms(99.9)
		m.HasLatency, m.HasP999 = true, true
	}
	return nil
}

// HistogramCount is how many values an encoded HdrHistogram holds.
func HistogramCount(enc string) (int64, error) {
	h, err := hdrhistogram.Decode([]byte(enc))
	if err != nil {
		return 0, err
	}
	return h.TotalCount(), nil
}

// MergeLatencies merges buckets of latencies: one per latency, in order.
func MergeLatencies(bs []LatencyCount) []LatencyCount {
	sorted := slices.Clone(bs)
	slices.SortFunc(sorted, func(a, b LatencyCount) int { return int(a.Micros - b.Micros) })
	var out []LatencyCount
	for _, b := range sorted {
		if n := len(out); n > 0 && out[n-1].Micros == b.Micros {
			out[n-1].Count += b.Count
			continue
		}
		out = append(out, b)
	}
	return out
}

// WrkPercentile is the p-th percentile of the latencies bs (merged, in
// order) as wrk reads its own histogram (stats_percentile): the least
// latency at which the exchanges counted reach round(p/100 × count +
// 0.5).
func WrkPercentile(bs []LatencyCount, p float64) int64 {
	var count int64
	for _, b := range bs {
		count += b.Count
	}
	rank := int64(math.Round(p/100*float64(count) + 0.5))
	var total int64
	for _, b := range bs {
		total += b.Count
		if total >= rank {
			return b.Micros
		}
	}
	return 0
}

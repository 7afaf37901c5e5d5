package scenarios

import (
	"strings"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// A load split over client hosts: the parts add up to the whole, each
// host at least one of each, its tool writing its latency whole; what
// cannot be split is refused, saying why.
func TestShareOf(t *testing.T) {
	mix, _ := byName("mix-http")
	mix.Load.Conns, mix.Load.Rate, mix.Load.Active = 201, 1001, 0
	var conns, rate int
	for i := range 3 {
		s, err := ShareOf(mix, i, 3)
		if err != nil || s.Load.Shared != 201 {
			t.Fatalf("ShareOf(mix, %d, 3) = %+v, %v; want a whole share", i, s.Load, err)
		}
		conns += s.Load.Conns
		rate += s.Load.Rate
	}
	if conns != 201 || rate != 1001 {
		t.Errorf("the shares' connections and rate add up to %d and %d; want 201 and 1001", conns, rate)
	}
	if s, err := ShareOf(mix, 0, 1); err != nil || s.Load.Shared != 0 || s.Load.Conns != 201 {
		t.Errorf("one host's share = %+v, %v; want the whole load as it is", s.Load, err)
	}
	stream, _ := byName("relay-stream16")
	one, _ := byName("relay-stream1")
	shake, _ := byName("tls-handshake-full")
	few := mix
	few.Load.Conns = 2
	for _, c := range []struct {
		s    Scenario
		want string
	}{{stream, "one test at a time"}, {one, "streams (1) cannot be split over 3 client hosts"},
		{shake, "one connection at a time"}, {few, "2 connections over 3 client hosts"}} {
		if _, err := ShareOf(c.s, 0, 3); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ShareOf(%s, 0, 3): %v; want an error saying %q", c.s.Name, err, c.want)
		}
	}
}

// wrk's percentile read from its buckets as wrk reads them.
func TestWrkPercentile(t *testing.T) {
	bs := MergeLatencies([]LatencyCount{{300, 1}, {100, 2}, {200, 1}, {100, 1}})
	if len(bs) != 3 || bs[0] != (LatencyCount{100, 3}) {
		t.Fatalf("MergeLatencies = %v; want 100 µs three times first", bs)
	}
	// 5 exchanges: rank round(2.5+0.5) = 3 for p50, round(4.95+0.5) = 5 for p99
	if p50, p99 := WrkPercentile(bs, 50), WrkPercentile(bs, 99); p50 != 100 || p99 != 300 {
		t.Errorf("p50, p99 = %d, %d; want 100 and 300", p50, p99)
	}
}

// encoded is an HdrHistogram of bench mix's kind holding values.
func encoded(t *testing.T, values ...int64) string {
	h := hdrhistogram.New(1, 60_000_000, 3)
	for _, v := range values {
		h.RecordValue(v)
	}
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Two client hosts' bench mix measurements merge into one: the counts
// summed, the histograms merged (its count both's), the percentiles read
// from the merge; a host that fell behind in a closed loop is named.
func TestMergeShares(t *testing.T) {
	mix, _ := byName("mix-http")
	mix.Load.Conns, mix.Load.Active, mix.Load.Rate = 100, 10, 0
	a, _ := ShareOf(mix, 0, 2)
	b, _ := ShareOf(mix, 1, 2)
	ma := Measurement{Seconds: 10, Requests: 1000, Bytes: 5, HasLatency: true, Histogram: encoded(t, 1000, 1000, 1000, 90_000)}
	mb := Measurement{Seconds: 10.01, Requests: 900, Errors: 100, Bytes: 7, HasLatency: true, Histogram: encoded(t, 2000, 2000)}
	m, err := MergeShares([]Scenario{a, b}, []Measurement{ma, mb})
	if err != nil {
		t.Fatal(err)
	}
	n, err := HistogramCount(m.Histogram)
	if err != nil || n != 6 || m.Requests != 1900 || m.Errors != 100 || m.Bytes != 12 || m.Seconds != 10.01 {
		t.Errorf("merged %+v, its histogram holding %d (%v); want the sums, 6 latencies and the longer window", m, n, err)
	}
	// 6 values: 1 ms three times, 2 ms twice, 90 ms once
	if m.P50Ms < 0.99 || m.P50Ms > 1.01 || m.P99Ms < 89 || m.P99Ms > 91 {
		t.Errorf("merged p50 %.3f ms, p99 %.3f ms; want 1 and 90", m.P50Ms, m.P99Ms)
	}
	mb.Requests, mb.Errors = 100, 0
	if lags := Lagging([]Scenario{a, b}, []Measurement{ma, mb}); len(lags) != 1 || lags[0].Host != 1 || lags[0].String() != "client host 2 had 2.0 exchanges a connection, the load's 11.0" {
		t.Errorf("a host with a tenth of the other's exchanges: lags %v; want the second named", lags)
	}
	mb.Histogram = ""
	mb.Requests, mb.Errors = 900, 100
	if _, err := MergeShares([]Scenario{a, a}, []Measurement{ma, mb}); err == nil {
		t.Error("a host without its histogram merged; want an error")
	}
}

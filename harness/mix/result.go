package mix

import (
	"fmt"
	"time"

	"bench/scenarios"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// latBatch is how many latencies a slot keeps before it adds them to
// the histograms, so that their lock is taken once for as many
// exchanges.
const latBatch = 16

// latencies are a slot's exchanges' latencies not yet in the
// histograms, in microseconds, shifted left by one, the low bit set for
// an exchange answered. They are the slot's exchange's alone: it adds to
// them before it gives the slot back.
type latencies struct {
	n int
	v [latBatch]int64
}

// reply is whether an exchange was answered: every due exchange's
// latency is in the histogram of the due ones, an answered one's also in
// that of the answered.
type reply bool

// The replies of an exchange.
const (
	noAnswer  reply = false
	gotAnswer reply = true
)

// add adds a latency to l.
func (l *latencies) add(d time.Duration, r reply) {
	v := max(1, d.Microseconds()) << 1
	if r == gotAnswer {
		v |= 1
	}
	l.v[l.n] = v
	l.n++
}

// recordOn adds the latency of an exchange on s to s's latencies, and
// them to the histograms once they are latBatch.
func (m *Mix) recordOn(s *slot, d time.Duration, r reply) {
	if s.lat.add(d, r); s.lat.n == latBatch {
		m.flush(&s.lat)
	}
}

// record adds a latency to the histograms at once.
func (m *Mix) record(d time.Duration, r reply) {
	var l latencies
	l.add(d, r)
	m.flush(&l)
}

// flush adds l to the histogram of the due exchanges, the answered ones
// also to theirs, and empties l.
func (m *Mix) flush(l *latencies) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, v := range l.v[:l.n] {
		m.hist.RecordValue(v >> 1)
		if v&1 != 0 {
			m.okHist.RecordValue(v >> 1)
		}
	}
	l.n = 0
}

// result is the figures of the window, once no exchange runs.
func (m *Mix) result() scenarios.MixResult {
	r := scenarios.MixResult{
		Mode:            string(m.cfg.Mode),
		Exchanges:       m.exchanges.Load(),
		Bytes:           m.bytes.Load(),
		Started:         m.window,
		Seconds:         m.cfg.Duration.Seconds(),
		WarmupSeconds:   m.cfg.Warmup.Seconds(),
		OpenSeconds:     m.openSeconds,
		ConnsWanted:     m.cfg.Conns,
		Conns:           m.opened,
		Active:          m.cfg.Active,
		Rate:            m.cfg.Rate,
		HalfClosed:      m.halfClosed.Load(),
		HalfCloseFailed: m.halfCloseFailed.Load(),
		Reconnects:      m.reconnects.Load(),
		Unfinished:      m.unfinished.Load(),
		Errors: scenarios.MixErrors{
			Refused: m.errs[refused].Load(),
			Reset:   m.errs[reset].Load(),
			Short:   m.errs[short].Load(),
			Wrong:   m.errs[wrong].Load(),
			Timeout: m.errs[timedOut].Load(),
			Late:    m.late.Load(),
			Dropped: m.dropped.Load(),
		},
		Procs: 1,
		Split: []int{m.cfg.Conns},
	}
	for i := range m.seconds {
		r.PerSecond = append(r.PerSecond, scenarios.MixSecond{Exchanges: m.seconds[i].exchanges.Load(), Bytes: m.seconds[i].bytes.Load()})
	}
	for i := range m.slots {
		m.flush(&m.slots[i].lat)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	setLatency(&r, m.hist, m.okHist)
	return r
}

// setLatency fills r's percentiles and histograms from h, the due
// exchanges', and ok, the answered ones'.
func setLatency(r *scenarios.MixResult, h, ok *hdrhistogram.Histogram) {
	r.Due = h.TotalCount()
	r.P50Ms, r.P99Ms, r.P999Ms, r.Histogram = percentiles(h)
	r.OkP50Ms, r.OkP99Ms, r.OkP999Ms, r.OkHistogram = percentiles(ok)
}

// percentiles are h's median, 99th and 99.9th percentiles in
// milliseconds (0 when h is empty), and its encoding.
func percentiles(h *hdrhistogram.Histogram) (p50, p99, p999 float64, enc string) {
	ms := func(q float64) float64 { return float64(h.ValueAtQuantile(q)) / 1e3 }
	if h.TotalCount() > 0 {
		p50, p99, p999 = ms(50), ms(99), ms(99.9)
	}
	if b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
		enc = string(b)
	}
	return p50, p99, p999, enc
}

// Merge adds up the results of the processes a mix was split over, in
// order: counts add, the window starts with the first (they share their
// start), the windows and opening times are the longest, the histograms
// merge.
func Merge(parts []scenarios.MixResult) (scenarios.MixResult, error) {
	if len(parts) == 0 {
		return scenarios.MixResult{}, fmt.Errorf("no results to merge")
	}
	h, ok := hdrhistogram.New(1, histMax, 3), hdrhistogram.New(1, histMax, 3)
	r := scenarios.MixResult{Mode: parts[0].Mode, Started: parts[0].Started}
	for i, p := range parts {
		for _, x := range []struct {
			into *hdrhistogram.Histogram
			enc  string
			name string
		}{{h, p.Histogram, "histogram"}, {ok, p.OkHistogram, "histogram of the answered exchanges"}} {
			ph, err := hdrhistogram.Decode([]byte(x.enc))
			if err != nil {
				return scenarios.MixResult{}, fmt.Errorf("process %d's %s: %w", i+1, x.name, err)
			}
			if dropped := x.into.Merge(ph); dropped > 0 {
				return scenarios.MixResult{}, fmt.Errorf("process %d's %s: %d values out of range", i+1, x.name, dropped)
			}
		}
		if p.Started.Before(r.Started) {
			r.Started = p.Started
		}
		r.Exchanges += p.Exchanges
		r.Bytes += p.Bytes
		r.Seconds = max(r.Seconds, p.Seconds)
		r.WarmupSeconds = max(r.WarmupSeconds, p.WarmupSeconds)
		r.OpenSeconds = max(r.OpenSeconds, p.OpenSeconds)
		r.ConnsWanted += p.ConnsWanted
		r.Conns += p.Conns
		r.Active += p.Active
		r.Rate += p.Rate
		r.HalfClosed += p.HalfClosed
		r.HalfCloseFailed += p.HalfCloseFailed
		r.Reconnects += p.Reconnects
		r.Unfinished += p.Unfinished
		e := &r.Errors
		e.Refused += p.Errors.Refused
		e.Reset += p.Errors.Reset
		e.Short += p.Errors.Short
		e.Wrong += p.Errors.Wrong
		e.Timeout += p.Errors.Timeout
		e.Late += p.Errors.Late
		e.Dropped += p.Errors.Dropped
		r.Procs += p.Procs
		r.Split = append(r.Split, p.Split...)
		for j, sec := range p.PerSecond {
			if j == len(r.PerSecond) {
				r.PerSecond = append(r.PerSecond, scenarios.MixSecond{})
			}
			r.PerSecond[j].Exchanges += sec.Exchanges
			r.PerSecond[j].Bytes += sec.Bytes
		}
	}
	setLatency(&r, h, ok)
	return r, nil
}

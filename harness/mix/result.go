package mix

import (
	"fmt"

	"bench/scenarios"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// result is the figures of the window, seconds long.
func (m *Mix) result(seconds float64) scenarios.MixResult {
	r := scenarios.MixResult{
		Mode:            string(m.cfg.Mode),
		Exchanges:       m.exchanges.Load(),
		Bytes:           m.bytes.Load(),
		Seconds:         seconds,
		OpenSeconds:     m.openSeconds,
		ConnsWanted:     m.cfg.Conns,
		Conns:           m.opened,
		Active:          m.cfg.Active,
		Rate:            m.cfg.Rate,
		HalfClosed:      m.halfClosed.Load(),
		HalfCloseFailed: m.halfCloseFailed.Load(),
		Reconnects:      m.reconnects.Load(),
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
	m.mu.Lock()
	defer m.mu.Unlock()
	setLatency(&r, m.hist)
	return r
}

// setLatency fills r's percentiles and histogram from h.
func setLatency(r *scenarios.MixResult, h *hdrhistogram.Histogram) {
	ms := func(q float64) float64 { return float64(h.ValueAtQuantile(q)) / 1e3 }
	if h.TotalCount() > 0 {
		r.P50Ms, r.P99Ms, r.P999Ms = ms(50), ms(99), ms(99.9)
	}
	if enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
		r.Histogram = string(enc)
	}
}

// Merge adds up the results of the processes a mix was split over, in
// order: counts add, the windows and opening times are the longest, the
// histograms merge.
func Merge(parts []scenarios.MixResult) (scenarios.MixResult, error) {
	if len(parts) == 0 {
		return scenarios.MixResult{}, fmt.Errorf("no results to merge")
	}
	h := hdrhistogram.New(1, histMax, 3)
	r := scenarios.MixResult{Mode: parts[0].Mode}
	for i, p := range parts {
		ph, err := hdrhistogram.Decode([]byte(p.Histogram))
		if err != nil {
			return scenarios.MixResult{}, fmt.Errorf("process %d's histogram: %w", i+1, err)
		}
		if dropped := h.Merge(ph); dropped > 0 {
			return scenarios.MixResult{}, fmt.Errorf("process %d's histogram: %d values out of range", i+1, dropped)
		}
		r.Exchanges += p.Exchanges
		r.Bytes += p.Bytes
		r.Seconds = max(r.Seconds, p.Seconds)
		r.OpenSeconds = max(r.OpenSeconds, p.OpenSeconds)
		r.ConnsWanted += p.ConnsWanted
		r.Conns += p.Conns
		r.Active += p.Active
		r.Rate += p.Rate
		r.HalfClosed += p.HalfClosed
		r.HalfCloseFailed += p.HalfCloseFailed
		r.Reconnects += p.Reconnects
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
	}
	setLatency(&r, h)
	return r, nil
}

package report

import (
	"math"
	"strings"

	"bench/internal/text"
	"bench/results"
)

// Latency in the tables: a cell's p50, p99 and p99.9 are the medians over
// its ok runs of what the load tool gave (wrk and bench mix; iperf3 and
// openssl s_time give none), carried by every throughput cell in JSON and,
// with Options.Latency, printed in a table of their own under the
// family's tables.

// KindLatency is the Kind of a latency table.
const KindLatency = "latency"

// percentile returns a run's latency at the percentile named p
// (MetricP50, MetricP99, MetricP999) in milliseconds, NaN where the load
// tool gave none.
func percentile(p string) func(*results.Row) float64 {
	return func(r *results.Row) float64 {
		switch {
		case p == MetricP50 && r.HasLatency:
			return r.P50Ms
		case p == MetricP99 && r.HasLatency:
			return r.P99Ms
		case p == MetricP999 && r.HasP999:
			return r.P999Ms
		}
		return math.NaN()
	}
}

// fromRuns sets what a cell takes from its ok runs beyond its figure:
// their latency, which runs they were, and their figures in the unit
// of their scenario, for the charts.
func (c *Cell) fromRuns(runs []*results.Row) {
	c.Chart = Summarize(runs, func(r *results.Row) float64 { return r.Cell().Unit().Of(r) })
	c.IDs = make([]results.RunID, len(runs))
	for i, r := range runs {
		c.IDs[i] = r.ID()
	}
	c.MedianRun = MedianRun(runs)
	med := func(p string) *float64 {
		if s := Summarize(runs, percentile(p)); s.OK {
			return &s.Median
		}
		return nil
	}
	c.P50, c.P99, c.P999 = med(MetricP50), med(MetricP99), med(MetricP999)
	c.p99s = nil
	for _, r := range runs {
		if v := percentile(MetricP99)(r); !math.IsNaN(v) {
			c.p99s = append(c.p99s, v)
		}
	}
	c.pace = paceOf(runs)
	c.ErrorShare, c.Closed = errorShare(runs), closedCount(runs)
}

// hasLatency reports whether any cell of t has a latency.
func hasLatency(t Table) bool {
	for _, r := range t.Rows {
		for _, c := range r.Cells {
			if c.P50 != nil {
				return true
			}
		}
	}
	return false
}

// Captions of the latency tables: how the load tools measured it.
const (
	captionClosedLoop = "Closed loop: each of wrk's connections sends its next request when the answer has come, " +
		"so a proxy that stalls is asked less often and its stall counts once (coordinated omission); " +
		"the percentiles understate a stall. – where the load tool gives no latency (iperf3)."
	CaptionMix = "bench mix, every exchange due in the window, answered or not: " +
		"the loads at a fixed rate (mix-*-3k, 3000 exchanges a second) are the open-loop latency, from each exchange's scheduled start; " +
		"the others, 2000 exchanges at a time, are closed loop."
	// CaptionMixAnswered is the mix's caption in a session from before
	// bench mix had a fixed window (results.MixAnswered).
	CaptionMixAnswered = "bench mix before its fixed window, as this session ran it: the answered exchanges only, " +
		"over a window that lasted until the last exchange begun in it ended; those that timed out or were never answered " +
		"are not in the latency, so a cell with many of them (its notes) reads faster than it was. " +
		"The loads at a fixed rate (mix-*-3k) are timed from each exchange's scheduled start; the others, 2000 exchanges at a time, are closed loop."
)

// latencyTable is the latency of throughput table t's cells, p50 / p99
// (and p99.9 in the mix family) in milliseconds, in the same rows and
// columns, unmarked but for their failed exchanges' share (!p%); accounting is that of the session's mix rows
// (results.MixDue, results.MixAnswered), which its caption says.
func latencyTable(t Table, accounting string) Table {
	mix := t.Family == FamMix
	lt := Table{Family: t.Family, Kind: KindLatency, Machine: t.Machine, Session: t.Session,
		Title: "latency, ms: p50 / p99 (median of the runs)", Corner: t.Corner,
		Columns: t.Columns, Groups: t.Groups, Caption: captionClosedLoop}
	if mix {
		lt.Title, lt.Caption = "latency, ms: p50 / p99 / p99.9 (median of the runs)", CaptionMix
		if accounting == results.MixAnswered {
			lt.Caption = CaptionMixAnswered
		}
	}
	for _, r := range t.Rows {
		label, _, _ := strings.Cut(r.Label, ", ")
		row := TableRow{Label: label + ", ms", Cells: make([]Cell, len(r.Cells))}
		for i, c := range r.Cells {
			parts := []*float64{c.P50, c.P99}
			if mix {
				parts = append(parts, c.P999)
			}
			texts := make([]string, len(parts))
			for j, p := range parts {
				texts[j] = "–"
				if p != nil {
					texts[j] = Millis(*p)
				}
			}
			// the failures are the throughput cell's, marked as there
			lc := Cell{Proxy: c.Proxy, Group: c.Group, Runs: []float64{}, P50: c.P50, P99: c.P99, P999: c.P999, ErrorShare: c.ErrorShare}
			lc.Text = strings.Join(texts, " / ")
			if c.P50 == nil {
				lc.Text, lc.ErrorShare = "–", nil
			}
			if f := FailureText(lc); f != "" {
				lc.Text += " " + f
			}
			row.Cells[i] = lc
		}
		lt.Rows = append(lt.Rows, row)
	}
	return lt
}

// withLatency inserts after the tables of each family on a machine (the
// throughput table, or the HTTPS and mix triples) the latency table of
// its throughput table, where it has a latency; accounting gives a
// session's mix accounting (mixAccountings).
func withLatency(tables []Table, accounting map[string]string) []Table {
	out := make([]Table, 0, len(tables)+len(tables)/2)
	for i := 0; i < len(tables); {
		j := i + 1
		for j < len(tables) && sameTriple(tables[i], tables[j]) {
			j++
		}
		out = append(out, tables[i:j]...)
		if t := tables[i]; t.Kind == "throughput" && hasLatency(t) {
			out = append(out, latencyTable(t, accounting[t.Session]))
		}
		i = j
	}
	return out
}

// mixAccountings is the accounting of each session's mix rows: its
// metadata's (results.MixAccountingOf); for a session without metadata,
// results.MixDue where a mix row has a p99.9 (bench mix gives it since
// its fixed window) and results.MixAnswered where none does.
func mixAccountings(rows []*results.Row, files []results.SessionFile) map[string]string {
	out := map[string]string{}
	for _, f := range files {
		if f.Meta != nil {
			out[f.Meta.Session] = results.MixAccountingOf(f.Meta)
		}
	}
	p999 := map[string]bool{}
	for _, r := range rows {
		if FamilyOf(r.Mode, r.Load) == FamMix {
			p999[r.Session] = p999[r.Session] || r.HasP999
		}
	}
	for id, has := range p999 {
		if _, ok := out[id]; !ok {
			out[id] = results.MixAnswered
			if has {
				out[id] = results.MixDue
			}
		}
	}
	return out
}

// Millis formats a latency in milliseconds with three figures or so:
// 0.212, 1.93, 12.4, 250.
func Millis(v float64) string {
	switch a := math.Abs(v); {
	case a < 1:
		return text.Fixed(v, 3)
	case a < 10:
		return text.Fixed(v, 2)
	case a < 100:
		return text.Fixed(v, 1)
	}
	return text.Fixed(v, 0)
}

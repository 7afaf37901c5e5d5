package reporttest

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"bench/internal/text"
	"bench/results"
)

// StepRow is a step of a sweep's search: nginx's under mix-http in rep,
// at offered exchanges a second, its note the step's (and more after
// "; " where more is given).
func StepRow(rep int, step results.Step, offered float64, more ...string) results.Row {
	note := strings.Join(append([]string{step.String()}, more...), "; ")
	return results.Row{Machine: "Xeon", Session: "s", Proxy: "nginx", Kind: "nginx", Group: results.Copy,
		Mode: results.MixHTTP, Load: results.LoadSweep, Rep: rep, Seconds: 2, Requests: int64(2 * offered),
		Status: results.OK, Bound: results.BoundProxy, Note: note, OfferedRate: offered, HasOffered: true,
		P50Ms: 1, P99Ms: 10, HasLatency: true}
}

// Pass is step n (0: the confirming window) of the tests' searches,
// passing.
func Pass(n int) results.Step { return results.Step{N: n, Confirm: n == 0, Pass: true} }

// Fail is step n (0: the confirming window) failing for why.
func Fail(n int, why string) results.Step {
	return results.Step{N: n, Confirm: n == 0, Why: why}
}

// SweepColumn is a column of the generated sweep session: how many
// exchanges a second it can answer (the p99 grows without bound as the
// rate nears it), and how its steps fail.
type SweepColumn struct {
	Proxy, Kind string
	Group       results.Group
	Capacity    float64
	Modes       []results.Mode
	Bound       results.Bound // the role at the pace near the capacity
	Tail        float64       // the p99 of a whole window over a short one's
	Errors      float64       // the share of failed exchanges at any rate
}

// sweepSLO is the generated session's bounds, the defaults.
var sweepSLO = results.Sweep{From: 500, Precision: 0.02, SLO: results.SLO{P99: results.Span(50 * time.Millisecond), Errors: 0.001}}

// GeneratedSweep is a session of sweeps for several columns, no proxy
// among them, in mix-http and mix-relay, three repetitions: each search
// run as the session runs it, from 500/s doubling until a step fails,
// then halving the interval until it is within 2%, at most 14 steps, then
// a confirming window of the whole duration, which must pass too.
func GeneratedSweep() ([]results.Row, *results.Meta) { return sweepSession("2026-12-01-sweep", nil) }

// sweepSession is the generated session under the id session, the
// capacity of each column scale names scaled by its factor.
func sweepSession(session string, scale map[string]float64) ([]results.Row, *results.Meta) {
	cols := []SweepColumn{
		{Proxy: "no proxy", Kind: "direct", Group: results.Baseline, Capacity: 9000, Bound: results.BoundClient, Tail: 1, Errors: 0},
		{Proxy: "nginx", Kind: "nginx", Group: results.Copy, Capacity: 8500, Bound: results.BoundClient, Tail: 1, Errors: 0},
		{Proxy: "haproxy", Kind: "haproxy", Group: results.Copy, Capacity: 6500, Bound: results.BoundProxy, Tail: 1, Errors: 0},
		{Proxy: "squid", Kind: "squid", Group: results.Copy, Capacity: 3000, Modes: []results.Mode{results.MixHTTP}, Bound: results.BoundProxy, Tail: 1.1, Errors: 0},
		{Proxy: "tinyproxy", Kind: "tinyproxy", Group: results.Copy, Capacity: 2000, Modes: []results.Mode{results.MixHTTP}, Bound: results.BoundProxy, Tail: 1, Errors: 0.02},
		{Proxy: "haproxy splice-auto", Kind: "haproxy", Group: results.Splice, Capacity: 7600, Bound: results.BoundProxy, Tail: 1, Errors: 0},
	}
	start := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	at := start
	var rows []results.Row
	for rep := 1; rep <= 3; rep++ {
		for _, mode := range []results.Mode{results.MixHTTP, results.MixRelay} {
			for _, c := range cols {
				if c.Modes != nil && !slices.Contains(c.Modes, mode) {
					continue
				}
				capacity := c.Capacity * (1 + 0.03*float64(rep-2))
				if f, ok := scale[c.Proxy]; ok {
					capacity *= f
				}
				if mode == results.MixRelay {
					capacity *= 1.2
				}
				rows = append(rows, SimulateSearch(c, session, capacity, rep, mode, &at)...)
			}
		}
	}
	end := at
	meta := &results.Meta{Session: session,
		Machine: results.MachineInfo{Label: "Xeon, 2 CPUs", CPUModel: "Intel Xeon", CPUs: 2, MemoryBytes: 4 << 30,
			Kernel: "6.12.0", Distribution: "Debian 12", Arch: "x86_64"},
		Settings: results.Settings{Scenario: "mix-http-sweep,mix-relay-sweep", Reps: 3, Window: results.Span(10 * time.Second),
			Warmup: results.Span(2 * time.Second), Sweep: &sweepSLO},
		Layout: "client=0,proxy=1,origin=0", MixAccounting: results.MixDue,
		Tools:   map[string]string{"bench mix": "bench mix (this build)"},
		Columns: []results.ColumnMeta{{Name: "no proxy", Kind: "direct", Group: "baseline"}, {Name: "nginx", Kind: "nginx", Group: "copy", Version: "1.22.1"}},
		Started: start, Ended: &end}
	return rows, meta
}

// SimulateSearch runs the search of a column of capacity under mode in
// rep of session, its windows from *at on: 2 s steps and a 10 s
// confirming window.
func SimulateSearch(c SweepColumn, session string, capacity float64, rep int, mode results.Mode, at *time.Time) []results.Row {
	var rows []results.Row
	window := func(n int, confirm bool, rate float64) bool {
		secs := 2.0
		if confirm {
			secs = 10
		}
		load := rate / capacity
		p99 := 4 / math.Max(1-load, 0.002) // ms: the queue's tail as the rate nears the capacity
		if confirm {
			p99 *= c.Tail
		}
		p99 = math.Round(math.Min(p99, 2000)*1000) / 1000 // a timeout's at most; to the microsecond, as the file has it
		achieved := math.Min(rate, capacity)
		failed := c.Errors
		if load >= 1 {
			failed += 0.02 * (load - 1)
		}
		st := results.Step{N: n, Confirm: confirm, Pass: true}
		switch {
		case failed > sweepSLO.SLO.Errors:
			st.Pass, st.Why = false, fmt.Sprintf("errors %.1f%% over %s", failed*100, text.SharePercent(sweepSLO.SLO.Errors))
		case p99 > 50:
			st.Pass, st.Why = false, fmt.Sprintf("p99 %.1f ms over 50 ms", p99)
		case achieved < 0.99*rate:
			st.Pass, st.Why = false, fmt.Sprintf("achieved %.0f%% of the rate, under 99%%", achieved/rate*100)
		}
		bound := results.BoundNone
		if load > 0.85 {
			bound = c.Bound
		}
		due := int64(rate * secs)
		bad := int64(float64(due) * failed)
		rows = append(rows, results.Row{Machine: "Xeon, 2 CPUs", Session: session, Proxy: c.Proxy, Kind: c.Kind, Group: c.Group,
			Mode: mode, Load: results.LoadSweep, Rep: rep, Started: *at, Seconds: secs,
			Requests: int64(achieved*secs) - bad, Bytes: (int64(achieved*secs) - bad) * 44954, Errors: bad,
			P50Ms: math.Round(p99/4*1000) / 1000, P99Ms: p99, HasLatency: true,
			P999Ms: math.Round(math.Min(p99*2, 2000)*1000) / 1000, HasP999: true,
			CPUProxy: 0.9 * secs * math.Min(load, 1), CPUClient: 0.5 * secs, CPUOrigin: 0.3 * secs,
			BusyProxy: 0.9 * math.Min(load, 1), BusyClient: 0.5, BusyOrigin: 0.3,
			Bound: bound, PeakMemBytes: 30e6, Status: results.OK, Note: st.String(),
			OfferedRate: rate, HasOffered: true, HasPipes: true})
		*at = at.Add(time.Duration(secs+3) * time.Second)
		return st.Pass
	}
	var passes []float64
	fails := math.Inf(1)
	rate := sweepSLO.From
steps:
	for n := 1; n <= 14; n++ {
		if window(n, false, rate) {
			passes = append(passes, rate)
		} else {
			fails = math.Min(fails, rate)
		}
		for {
			best := 0.0 // the highest pass below the lowest failure
			for _, p := range passes {
				if p < fails {
					best = math.Max(best, p)
				}
			}
			switch {
			case math.IsInf(fails, 1):
				rate *= 2
				continue steps
			case best == 0:
				return rows // the first rate failed: no rate
			case (fails-best)/best > sweepSLO.Precision:
				rate = (best + fails) / 2
				continue steps
			}
			if window(0, true, best) {
				return rows
			}
			fails = best // the search goes on below the rate that failed to confirm
		}
	}
	return rows
}

// LaterSweep is the session after the generated one, haproxy's capacity
// 20% higher, squid's 20% lower, the others' as they were: bench
// compare's new side in cmd/bench's tests, as the file laterSweepCSV.
func LaterSweep() ([]results.Row, *results.Meta) {
	return sweepSession("2026-12-02-sweep", map[string]float64{"haproxy": 1.2, "squid": 0.8})
}

// ReadSession reads the session files at paths and their metadata, as
// bench report does.
func ReadSession(t testing.TB, paths []string) ([]results.Row, []results.SessionFile) {
	t.Helper()
	rows, err := results.ReadFiles(paths)
	if err != nil {
		t.Fatal(err)
	}
	files, err := results.ReadMetas(paths)
	if err != nil {
		t.Fatal(err)
	}
	return rows, files
}

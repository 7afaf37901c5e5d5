package sweep

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"bench/results"
	"bench/scenarios"
)

// The pass rule: what a window measured (Figures), judged by the bound
// (Pass), and how long a window must be to judge its failures (Length).

// DefaultSLO is the bound a step must meet by default: a p99 of 50 ms
// over every exchange due in the window, and at most 0.1% of them
// failed.
var DefaultSLO = results.SLO{P99: results.Span(50 * time.Millisecond), Errors: 0.001}

// ParseSLO reads a bound as --slo gives it, "p99=50ms,errors=0.1%": the
// p99 a duration, the errors a percentage of the exchanges due. A part
// left out keeps DefaultSLO's.
func ParseSLO(s string) (results.SLO, error) {
	slo := DefaultSLO
	if strings.TrimSpace(s) == "" {
		return slo, fmt.Errorf("bound %q: want p99=DURATION,errors=PERCENT%%, e.g. %s", s, FormatSLO(DefaultSLO))
	}
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		key, value, found := strings.Cut(strings.TrimSpace(part), "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		switch {
		case !found:
			return slo, fmt.Errorf("bound %q: %q is not key=value (p99=50ms, errors=0.1%%)", s, part)
		case seen[key]:
			return slo, fmt.Errorf("bound %q: %s given twice", s, key)
		}
		seen[key] = true
		switch key {
		case "p99":
			d, err := time.ParseDuration(value)
			if err != nil || d <= 0 {
				return slo, fmt.Errorf("bound %q: p99 %q: want a duration above 0, e.g. 50ms", s, value)
			}
			slo.P99 = results.Span(d)
		case "errors":
			num, pct := strings.CutSuffix(value, "%")
			v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
			if err != nil || !pct || !(v >= 0 && v < 100) {
				return slo, fmt.Errorf("bound %q: errors %q: want a percentage of 0%% or more and below 100%%, e.g. 0.1%%", s, value)
			}
			slo.Errors = v / 100
		default:
			return slo, fmt.Errorf("bound %q: unknown key %q: want p99 and errors", s, key)
		}
	}
	return slo, nil
}

// FormatSLO writes a bound as ParseSLO reads it: "p99=50ms,errors=0.1%".
func FormatSLO(slo results.SLO) string {
	return "p99=" + time.Duration(slo.P99).String() + ",errors=" + strconv.FormatFloat(slo.Errors*100, 'f', -1, 64) + "%"
}

// Figures are what a step's window measured, as the pass rule reads it.
type Figures struct {
	Offered float64 // exchanges a second the window asked for
	Seconds float64 // its length
	// Answered are the exchanges answered whole and correctly and begun
	// on time; Due every exchange due in the window, answered or not;
	// Failed those of them that failed: errors, timeouts, late ones and
	// dropped ones.
	Answered, Due, Failed int64
	// P99 is the 99th percentile of the latency of every due exchange.
	P99 time.Duration
}

// FiguresOf reads a window of bench mix at a fixed rate.
func FiguresOf(r scenarios.MixResult) Figures {
	return Figures{
		Offered: r.Rate, Seconds: r.Seconds,
		Answered: r.Exchanges, Due: r.Due, Failed: r.Errors.Failed() + r.Errors.Timeout,
		P99: time.Duration(r.P99Ms * float64(time.Millisecond)),
	}
}

// FiguresOfRow reads a step's row of a session's file, as a resumed
// session replays its search: every exchange due answered or failed.
func FiguresOfRow(r *results.Row) Figures {
	f := Figures{Offered: r.OfferedRate, Seconds: r.Seconds, Answered: r.Requests,
		Failed: r.Errors + r.Timeouts, P99: time.Duration(r.P99Ms * float64(time.Millisecond))}
	f.Due = f.Answered + f.Failed
	return f
}

// verdict is a window judged by the bound: whether it passed, the bounds
// it missed, whether it failed on its failures (more than the budget
// explains by chance), with its p99 within the bound or not, and the
// share of its due exchanges that failed.
type verdict struct {
	pass, failures, latencyOK bool
	why                       string
	share                     float64
	// flat is set by the search: the window ends it, its load failing
	// at every rate.
	flat bool
}

// Pass says whether a window meets the bound slo: its exchanges answered
// on time at results.AchievedShare of the offered rate or more, its
// failures no more than slo.Errors of the exchanges due explains by
// chance (Beyond), and the p99 of every due exchange at most slo.P99.
// why names each bound it missed, with the figures, as a step's note
// gives it ("p99 63.2 ms over 50 ms"); empty when it passed.
func Pass(slo results.SLO, f Figures) (pass bool, why string) {
	v := judge(slo, f)
	return v.pass, v.why
}

func judge(slo results.SLO, f Figures) verdict {
	if f.Due == 0 || f.Seconds <= 0 {
		return verdict{why: "no exchange was due"}
	}
	v := verdict{latencyOK: f.P99 <= time.Duration(slo.P99), share: float64(f.Failed) / float64(f.Due)}
	var missed []string
	if !v.latencyOK {
		missed = append(missed, fmt.Sprintf("p99 %s over %s", ms(f.P99, 1), ms(time.Duration(slo.P99), -1)))
	}
	if v.failures = Beyond(f.Failed, f.Due, slo.Errors); v.failures {
		missed = append(missed, fmt.Sprintf("failures %s%% over %s%% (%d of %d due)",
			pct(v.share, 2), pct(slo.Errors, -1), f.Failed, f.Due))
	}
	if achieved := float64(f.Answered) / f.Seconds; achieved < results.AchievedShare*f.Offered {
		missed = append(missed, fmt.Sprintf("achieved %.0f/s of %.0f/s (%s%%, under %s%%)",
			achieved, f.Offered, pct(achieved/f.Offered, 1), pct(results.AchievedShare, -1)))
	}
	// One note a step: the bounds are joined with ", ", never with the
	// "; " that parts a row's notes.
	v.pass, v.why = len(missed) == 0, strings.Join(missed, ", ")
	return v
}

// Beyond says whether failed of due exchanges are more than a budget
// (a share) explains by chance: a share over the budget that the budget
// gives, or more, less often than Significance (a binomial bound), so
// that one failure in 20 at a budget of 0.1% fails a window, and 5 in
// 2500 (twice the budget, which gives as many one time in nine) does not. Any
// failure is beyond a budget of none.
func Beyond(failed, due int64, budget float64) bool {
	switch {
	case failed <= 0:
		return false
	case budget <= 0:
		return true
	case float64(failed) <= budget*float64(due):
		return false
	}
	return distuv.Binomial{N: float64(due), P: budget}.Survival(float64(failed-1)) < Significance
}

// Length is how long the search measures a window at rate, whose length
// would be base (StepWindow's or the session's window): long enough to
// hold MinDue exchanges at the budget slo.Errors, within MaxLength (or
// base where it is longer), in whole seconds.
func Length(slo results.SLO, rate float64, base time.Duration) time.Duration {
	need := time.Duration(math.Ceil(float64(results.MinDue(slo.Errors))/rate)) * time.Second
	return min(max(base, need), max(base, MaxLength))
}

// Floor is the least rate the search halves to under the bound slo: the
// rate at which a window of MaxLength holds MinDue exchanges, 50/s at
// 0.1%, and MinRate at least. Below it, no window tells the budget from
// chance.
func Floor(slo results.SLO) float64 {
	return max(MinRate, math.Ceil(float64(results.MinDue(slo.Errors))/MaxLength.Seconds()))
}

// ms writes d in milliseconds with digits decimals (-1: as few as it
// takes): "63.2 ms".
func ms(d time.Duration, digits int) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', digits, 64) + " ms"
}

// pct writes a share as a percentage with digits decimals (-1: as few as
// it takes).
func pct(share float64, digits int) string {
	return strconv.FormatFloat(share*100, 'f', digits, 64)
}

// StepWindow is how long a step of the search measures where the
// session's window is window: half of it, and at least a second (no more
// than window). The confirming window is window itself: the search's
// steps only need to tell a pass from a failure, the rate found is then
// measured as every other run is.
func StepWindow(window time.Duration) time.Duration {
	return min(window, max(window/2, time.Second))
}

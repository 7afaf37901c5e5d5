package results

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// LoadSweep is the load of a sweep's rows: one row a step of the search
// for a column's sustainable rate, each a fixed-rate window of a mix
// load, its offered rate in the offered_rate column and the step in the
// note (Step).
const LoadSweep = "sweep"

// AchievedShare is the least share of its offered rate a sweep's window
// achieves to pass (its exchanges answered whole and on time over its
// length): the pass rule's (harness/sweep) and the report's caption's.
const AchievedShare = 0.99

// Step is one window of a sweep, as its row's note tells it: its number
// in the search (1, 2, ...), or the confirming window of the rate found,
// whether it met the bounds and, if not, which it missed.
type Step struct {
	N       int    // the step's number; 0 for the confirming window
	Confirm bool   // the confirming window, of the full duration
	Pass    bool   // the window met every bound
	Why     string // the bound it missed, e.g. "p99 63.2 ms over 50 ms"; empty when it passed
	// Flat is a failed window that ended its search: its load fails at
	// every rate, about as large a share of its exchanges at this rate
	// as at one four times higher, and has no sustainable rate.
	Flat bool
}

// flatVerdict is a Flat step's verdict in its note, before why.
const flatVerdict = "fails at every rate: "

// stepPrefix begins the note of every sweep step.
const stepPrefix = "sweep "

// what is the step's name in the search: "step 3", or "confirm".
func (s Step) what() string {
	if s.Confirm {
		return "confirm"
	}
	return "step " + strconv.Itoa(s.N)
}

// String is the note of s: "sweep step 3: pass", "sweep step 7: fail:
// p99 63.2 ms over 50 ms", "sweep confirm: pass", "sweep step 3: fails
// at every rate: failures 6.72% over 0.1% (42 of 625 due), as 10.12% at
// 500/s".
func (s Step) String() string {
	what := s.what()
	switch {
	case s.Pass:
		return stepPrefix + what + ": pass"
	case s.Flat:
		return stepPrefix + what + ": " + flatVerdict + s.Why
	}
	return stepPrefix + what + ": fail: " + s.Why
}

// ParseStep reads the step of a sweep row's note, which begins with it
// (other notes may follow, after "; "); ok is false for a note that does
// not begin with a step.
func ParseStep(note string) (s Step, ok bool, err error) {
	rest, found := strings.CutPrefix(note, stepPrefix)
	if !found {
		return Step{}, false, nil
	}
	what, verdict, found := strings.Cut(rest, ": ")
	if !found {
		return Step{}, false, fmt.Errorf("sweep note %q: want \"sweep step N: pass\" or \"...: fail: why\"", note)
	}
	if what == "confirm" {
		s.Confirm = true
	} else if n, cut := strings.CutPrefix(what, "step "); cut {
		if s.N, err = strconv.Atoi(n); err != nil || s.N < 1 {
			return Step{}, false, fmt.Errorf("sweep note %q: step %q is not a number from 1", note, n)
		}
	} else {
		return Step{}, false, fmt.Errorf("sweep note %q: want \"step N\" or \"confirm\"", note)
	}
	verdict, _, _ = strings.Cut(verdict, "; ")
	switch {
	case verdict == "pass":
		s.Pass = true
	case strings.HasPrefix(verdict, "fail: ") && len(verdict) > len("fail: "):
		s.Why = strings.TrimPrefix(verdict, "fail: ")
	case strings.HasPrefix(verdict, flatVerdict) && len(verdict) > len(flatVerdict):
		s.Why, s.Flat = strings.TrimPrefix(verdict, flatVerdict), true
	default:
		return Step{}, false, fmt.Errorf("sweep note %q: want pass, \"fail: why\" or \"%swhy\"", note, flatVerdict)
	}
	return s, true, nil
}

// stepID is what tells a sweep's row apart from the other steps of its
// repetition (RunID.Step): its step, which a confirming window shares
// with the others of its search, and the rate it offered, which no two
// confirming windows of a search share ("step 3 at 2000.0/s", "confirm
// at 4375.0/s"); empty for a row of another load.
func (r *Row) stepID() string {
	if r.Load != LoadSweep {
		return ""
	}
	what := "step"
	if s, ok, _ := ParseStep(r.Note); ok {
		what = s.what()
	}
	return what + " at " + strconv.FormatFloat(r.OfferedRate, 'f', 1, 64) + "/s"
}

// Unconfirmed is the rate of a search that ended with no confirming
// window passed: the highest rate a step passed (passed) below its lowest
// failure (lowestFailed; 0 for none), a rate measured over a step's
// window but not confirmed over a whole one. found is false where no
// step passed below it.
func Unconfirmed(passed []float64, lowestFailed float64) (rate float64, found bool) {
	for _, p := range passed {
		if p > rate && (lowestFailed == 0 || p < lowestFailed) {
			rate = p
		}
	}
	return rate, rate > 0
}

// Significance is the chance the sweep's rule on failures takes of
// being wrong: a window fails on its failures where its budget would
// give as many less often than this, and holds enough exchanges to
// tell the budget from chance (MinDue).
const Significance = 0.05

// MinDue is how many exchanges a sweep's window needs due for its
// failures to tell a budget (a share) from chance: enough that a load
// failing three times the budget shows a failure in 1 - Significance of
// them, 998 at 0.1%; none for a budget of none, where any failure fails.
func MinDue(budget float64) int64 {
	switch {
	case budget <= 0:
		return 0
	case 3*budget >= 1:
		return 1
	}
	return int64(math.Ceil(math.Log(1/Significance) / -math.Log1p(-3*budget)))
}

// Package sweep is the search for a load's sustainable rate: the highest
// fixed rate whose window meets a latency and an error bound (the SLO).
// It starts at a rate, doubles it until a window fails, then halves the
// interval between the last pass and the first failure until the two are
// within a precision, and confirms the last pass in a window of the full
// length, which must pass too (else the search goes on below it with
// confirms alone, and a search whose confirms all fail ends with the
// highest rate a step passed below them, not confirmed). It is pure: the
// caller runs each window at the rate Next gives and tells Record what it
// measured.
package sweep

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"bench/results"
)

// The search's defaults and limits.
const (
	// DefaultFrom is the first step's rate, exchanges a second: below
	// what any proxy packaged here sustains on one CPU, so that the
	// first step passes and the doubling finds the range.
	DefaultFrom = 500
	// DefaultPrecision stops the halving when the first failure is
	// within 2% of the last pass: finer than the spread of a proxy's runs
	// from session to session (docs/noise.md).
	DefaultPrecision = 0.02
	// MaxWindows is the most windows of a search, its confirming ones
	// included: a confirm that fails is paid for out of the steps, which
	// leave confirmReserve windows after the first confirm.
	MaxWindows = 15
	// MaxSteps is the most windows of the search before its first
	// confirming one: from 500/s, enough to double to 32000/s and halve
	// to 2%, or to 64000/s and halve to 3%.
	MaxSteps = MaxWindows - 1 - confirmReserve
	// confirmReserve is how many windows the steps leave after the
	// first confirm, for a confirm below it should it fail (a step
	// passes a little above the rate a confirm sustains: a queue that
	// grows slowly): one, a precision below it at least; two would cost
	// the steps' precision above 8000/s (9999/s found at 9750/s).
	confirmReserve = 1
	// MinRate is the least rate the search halves to, an exchange a
	// second: below it a load that fails every step has no rate. A
	// bound on failures raises it (Floor).
	MinRate = 1
	// Significance is the chance the failures' rule takes of being
	// wrong: a window fails on its failures where the budget would give
	// as many less often than this (a binomial bound), and holds enough
	// exchanges (MinDue) to tell the budget from chance.
	Significance = results.Significance
	// MaxLength is the longest window the search measures: a window at
	// a low rate is lengthened until it holds MinDue exchanges, up to
	// this (Length), and the search halves no lower than the rate at
	// which it holds them (Floor).
	MaxLength = 20 * time.Second
	// flatRatio and flatShare are the failures' rule of a load that
	// fails at every rate: a window that failed on its failures, its p99
	// within the bound, at flatRatio of the rate of another that failed
	// on its failures or less, and with at least flatShare of that
	// one's share; a load whose failures come from its rate fails far
	// less at a quarter of it.
	flatRatio = 0.25
	flatShare = 0.5
)

// Defaults are the search's settings unless the session gives others.
func Defaults() results.Sweep {
	return results.Sweep{From: DefaultFrom, Precision: DefaultPrecision, SLO: DefaultSLO}
}

// Check says what is wrong with a search's settings.
func Check(s results.Sweep) error {
	switch {
	case !(s.From >= MinRate) || math.IsInf(s.From, 0) || s.From != math.Trunc(s.From):
		// whole, as every rate the search halves or bisects to, so
		// that a resumed session finds its steps in the file, which
		// writes a rate to a tenth
		return fmt.Errorf("a first rate of %g a second: want a whole number, %d or more", s.From, MinRate)
	case !(s.Precision > 0 && s.Precision < 1):
		return fmt.Errorf("a precision of %g%%: want more than 0%% and less than 100%%", s.Precision*100)
	case s.SLO.P99 <= 0:
		return fmt.Errorf("a p99 bound of %s: want more than 0", time.Duration(s.SLO.P99))
	case !(s.SLO.Errors >= 0 && s.SLO.Errors < 1):
		return fmt.Errorf("an error bound of %g%%: want 0%% or more and less than 100%%", s.SLO.Errors*100)
	case s.From < Floor(s.SLO):
		return fmt.Errorf("a first rate of %g a second under an error bound of %g%%: a window needs %d exchanges due to tell that bound from chance, "+
			"%g a second over %s, the longest window; want a first rate of %g or more, or a larger bound",
			s.From, s.SLO.Errors*100, results.MinDue(s.SLO.Errors), Floor(s.SLO), MaxLength, Floor(s.SLO))
	}
	return nil
}

// Longest is the most a search with the settings cfg takes, its windows
// and their warm-ups: the longest of every way its windows may pass or
// fail. A step is warmup and StepWindow(window), a confirm warmup and
// window, each lengthened at a low rate (Length); a confirm that fails
// is paid for out of the steps but costs a whole window, so the longest
// search is one whose confirms fail.
func Longest(cfg results.Sweep, window, warmup time.Duration) time.Duration {
	key := longestKey{cfg, window, warmup}
	if d, ok := longest.Load(key); ok {
		return d.(time.Duration)
	}
	var rest func(s *Search) time.Duration
	rest = func(s *Search) time.Duration {
		rate, c, done := s.Next()
		if done {
			return 0
		}
		d := warmup + s.Window(rate, c, window).Length
		var most time.Duration
		for _, pass := range []bool{true, false} {
			t := s.clone()
			t.record(verdict{pass: pass})
			most = max(most, rest(t))
		}
		return d + most
	}
	d := rest(New(cfg))
	longest.Store(key, d)
	return d
}

// longestKey is what Longest's answer depends on; longest keeps its
// answers, as the plan and the progress line ask for each search's.
type longestKey struct {
	cfg            results.Sweep
	window, warmup time.Duration
}

var longest sync.Map

// clone is a copy of s that records apart from it.
func (s *Search) clone() *Search {
	t := *s
	t.passes = slices.Clone(s.passes)
	t.failed = slices.Clone(s.failed)
	return &t
}

// Window is a window of the search as Run asks for it: its rate,
// whether it confirms the rate found, its warm-up and its length.
type Window struct {
	Rate           float64
	Confirm        bool
	Warmup, Length time.Duration
}

// Run runs what is left of the search: each window Next gives, of
// StepWindow(window) or, confirming, of window, each after warmup,
// measured by measure and recorded (Record), its step then given to done
// (its row written, its line printed), until the search ends or either
// fails.
func (s *Search) Run(window, warmup time.Duration, measure func(Window) (Figures, error), done func(Window, results.Step) error) error {
	for {
		rate, confirm, end := s.Next()
		if end {
			return nil
		}
		w := s.Window(rate, confirm, window)
		w.Warmup = warmup
		f, err := measure(w)
		if err != nil {
			return err
		}
		if err := done(w, s.Record(f)); err != nil {
			return err
		}
	}
}

// Window is the window Next gave (rate, and whether it confirms) where
// the session's window is window: a step of StepWindow(window), a
// confirm of window, each lengthened to hold the exchanges its failures
// are judged by (Length). Its warm-up is the caller's.
func (s *Search) Window(rate float64, confirm bool, window time.Duration) Window {
	base := StepWindow(window)
	if confirm {
		base = window
	}
	return Window{Rate: rate, Confirm: confirm, Length: Length(s.cfg.SLO, rate, base)}
}

// ErrReplay is the error of a search's recorded step that is not the one
// the search asks for at that point: its rate or its kind differ.
var ErrReplay = errors.New("not the step the search asks for")

// Search is one search for a sustainable rate. Next gives each window's
// rate, Record its verdict, until Next says the search is done.
type Search struct {
	cfg results.Sweep
	// lo is the highest rate that passed, hi the lowest that failed; 0
	// while there is none. lo < hi whenever both are set.
	lo, hi float64
	// passes are the rates of the steps that passed, of which the
	// highest below every failure is the rate of a search whose confirms
	// all failed (Unconfirmed).
	passes []float64
	// failed are the windows that failed on their failures, by rate and
	// share, as the rule of a load that fails at every rate reads them
	failed  []failing
	steps   int // the search's steps, confirms left out
	windows int // every window, confirms included
	// below counts the confirms that failed, while none has passed:
	// from the first, every window confirms, the next 2^(below-1)
	// precisions below the lowest failure (gallop).
	below int
	// confirmed is the highest rate a confirming window passed at; 0
	// while none has.
	confirmed float64
	// The window Next gave and Record has not had yet.
	asked         bool
	rate          float64
	confirm, done bool
	stopped       bool // ended by Stop or Abort, without a rate
	flat          bool // ended by a load that fails at every rate
}

// failing is a window that failed on its failures: its rate and the
// share of its due exchanges that failed.
type failing struct{ rate, share float64 }

// New starts a search with the settings cfg (Check them first).
func New(cfg results.Sweep) *Search { return &Search{cfg: cfg} }

// Next returns the rate of the next window, and whether it is the
// confirming window of the rate found; done is true when the search has
// ended (Result says what it found). It returns the same window until
// Record is given its verdict.
func (s *Search) Next() (rate float64, confirm, done bool) {
	if s.done {
		return 0, false, true
	}
	if !s.asked {
		var ok bool
		if s.rate, s.confirm, ok = s.plan(); !ok {
			s.done = true
			return 0, false, true
		}
		s.asked = true
	}
	return s.rate, s.confirm, false
}

// plan decides the next window: the first rate; double the last pass
// while none failed; halve the first failure while none passed (down to
// Floor); the middle of the last pass and the first failure while they
// are more than the precision apart (twice the precision, with one step
// left before the windows kept for confirms); else, or when no step is
// left, the confirming window of the last pass. Once a confirm has failed, every
// window confirms (planConfirm). ok is false when there is nothing left
// to try.
func (s *Search) plan() (rate float64, confirm, ok bool) {
	left := MaxWindows - s.windows
	if left <= 0 {
		return 0, false, false
	}
	if s.below > 0 {
		return s.planConfirm()
	}
	var next float64
	switch {
	case s.windows == 0:
		next = s.cfg.From
	case s.hi == 0:
		next = s.lo * 2
	case s.lo == 0:
		// no lower than the floor, which it tries once
		if next = max(math.Round(s.hi/2), Floor(s.cfg.SLO)); next >= s.hi {
			return 0, false, false
		}
	case s.hi > s.lo*(1+s.cfg.Precision) && (left > confirmReserve+2 || s.hi > s.lo*(1+2*s.cfg.Precision)):
		// Whole exchanges a second: where they cannot part the two any
		// more, the search has converged. With one step left before the
		// windows kept for confirms and the two within twice the
		// precision, it confirms now, so that a confirm that fails
		// leaves a window more to confirm below it.
		if mid := math.Round((s.lo + s.hi) / 2); mid > s.lo && mid < s.hi {
			next = mid
		}
	}
	if next > 0 && left > confirmReserve+1 {
		return next, false, true
	}
	if s.lo == 0 {
		return 0, false, false // nothing passed: nothing to confirm
	}
	return s.lo, true, true
}

// planConfirm decides the next window once a confirm has failed: a
// confirm again, a precision below the rate that failed, then two, four,
// ... precisions below the last while those fail (gallop, down to
// MinRate); once one passes, the middle of it and the lowest failure,
// while they are more than the precision apart.
//
// A confirm fails mostly a little above what the load sustains: a queue
// that grows slowly shows in the full window and not in a step's, so
// that a step passes above the rate a confirm fails at, and a step below
// a failed confirm says little. The search spends what windows it has
// left on confirms, so that a confirm that fails twice leaves it windows
// to confirm a rate lower still, rather than a step and a confirm a
// precision lower each time.
func (s *Search) planConfirm() (rate float64, confirm, ok bool) {
	if s.confirmed > 0 {
		if s.hi > s.confirmed*(1+s.cfg.Precision) {
			if mid := math.Round((s.confirmed + s.hi) / 2); mid > s.confirmed && mid < s.hi {
				return mid, true, true
			}
		}
		return 0, false, false
	}
	if g := s.gallop(); g > 0 {
		return g, true, true
	}
	return 0, false, false
}

// gallop is the next confirm below a confirm that failed: the lowest
// failure less 2^(below-1) precisions, in whole exchanges a second, and
// at least one less; 0 below Floor.
func (s *Search) gallop() float64 {
	g := min(math.Round(s.hi/math.Pow(1+s.cfg.Precision, math.Exp2(float64(s.below-1)))), s.hi-1)
	if g < Floor(s.cfg.SLO) {
		return 0
	}
	return g
}

// Record takes what the window Next gave measured, judges it by the
// search's bound (Pass) and returns the step as its row's note tells it.
// A window that fails on its failures, its p99 within the bound, at a
// quarter or less of the rate of another that failed on its failures
// and with half that one's share or more, ends the search: its load
// fails at every rate (results.Step.Flat), its failures coming from
// something else than its rate.
func (s *Search) Record(f Figures) results.Step {
	v := judge(s.cfg.SLO, f)
	v.flat = s.flatAt(v)
	return s.record(v)
}

// flatAt says whether v, the verdict of the window Next gave, ends the
// search as a load failing at every rate.
func (s *Search) flatAt(v verdict) bool {
	_, ok := s.flatAgainst(v)
	return ok && v.latencyOK
}

// flatAgainst is the window that failed on its failures at four times
// the rate of v's or more, with at most twice v's share, that v failing
// on its failures too would fail as much as; ok is false where none is.
func (s *Search) flatAgainst(v verdict) (f failing, ok bool) {
	if !v.failures {
		return failing{}, false
	}
	i := slices.IndexFunc(s.failed, func(f failing) bool {
		return s.rate <= flatRatio*f.rate && v.share >= flatShare*f.share
	})
	if i < 0 {
		return failing{}, false
	}
	return s.failed[i], true
}

// Replay records a step a session's file has, as a resumed session
// continues its search: rate and st must be the window Next gives, f
// what it measured (FiguresOfRow), st's verdict kept as the file has it.
func (s *Search) Replay(rate float64, st results.Step, f Figures) error {
	next, confirm, done := s.Next()
	switch {
	case done:
		return fmt.Errorf("%w: the search had ended", ErrReplay)
	case next != rate || confirm != st.Confirm || (!confirm && st.N != s.steps+1):
		return fmt.Errorf("%w: %s at %g/s where it asks for %s at %g/s", ErrReplay, st, rate, describe(confirm, s.steps+1), next)
	}
	v := judge(s.cfg.SLO, f)
	v.pass, v.why, v.flat = st.Pass, st.Why, st.Flat
	s.record(v)
	return nil
}

// Abort ends the search at the window Next gives, which could not be
// measured (the proxy died, the load tool failed): it returns that
// window's step, failed with why, and Next is done from then on. ok is
// false when the search had ended, with no window to fail.
func (s *Search) Abort(why string) (st results.Step, ok bool) {
	if _, _, done := s.Next(); done {
		return results.Step{}, false
	}
	st = s.record(verdict{why: why})
	s.Stop()
	return st, true
}

// Stop ends the search where it is, without a rate: Next is done from
// then on (a resumed session's search that a failed step had ended).
func (s *Search) Stop() { s.done, s.stopped, s.confirmed, s.asked = true, true, 0, false }

// describe names the window Next gives, as a note does.
func describe(confirm bool, n int) string {
	if confirm {
		return "the confirming window"
	}
	return "step " + strconv.Itoa(n)
}

func (s *Search) record(v verdict) results.Step {
	if !s.asked {
		panic("sweep: Record without Next")
	}
	pass, why := v.pass, v.why
	s.asked = false
	s.windows++
	if v.failures {
		s.failed = append(s.failed, failing{s.rate, v.share})
	}
	if v.flat {
		// no rate: whatever passed before, its failures are not the
		// rate's
		s.done, s.flat = true, true
		st := results.Step{Confirm: s.confirm, Flat: true, Why: why + s.flatAs(v)}
		if !s.confirm {
			s.steps++
			st.N = s.steps
		}
		return st
	}
	if s.confirm {
		switch {
		case pass && s.below == 0:
			// The first confirm passed: the rate found.
			s.done, s.confirmed = true, s.rate
		case pass:
			s.confirmed = s.rate
		case s.below == 0:
			// The rate found did not hold for the full window: it is
			// the lowest failure now, and every window from here on
			// confirms, below it.
			s.hi, s.below = s.rate, 1
		default:
			s.hi = s.rate
			if s.confirmed == 0 {
				s.below++
			}
		}
		return results.Step{Confirm: true, Pass: pass, Why: why}
	}
	s.steps++
	if pass {
		s.lo = s.rate
		s.passes = append(s.passes, s.rate)
		return results.Step{N: s.steps, Pass: true}
	}
	s.hi = s.rate
	return results.Step{N: s.steps, Why: why}
}

// Result is the rate the search found, the rate of its highest
// confirming window that passed; found is false while there is none (a
// search that ended without one found none; Unconfirmed may then have
// a rate).
func (s *Search) Result() (rate float64, found bool) { return s.confirmed, s.confirmed > 0 }

// Unconfirmed is the rate of a search that ended with no confirming
// window passed, every window it had spent or every rate below its
// failures tried: the highest rate a step passed below every rate that
// failed (results.Unconfirmed), measured but not confirmed over a whole
// window. found is false while the search goes on, where it found a
// confirmed rate, where it was stopped, and where no step passed below
// its failures.
func (s *Search) Unconfirmed() (rate float64, found bool) {
	if !s.done || s.stopped || s.flat || s.confirmed > 0 {
		return 0, false
	}
	return results.Unconfirmed(s.passes, s.hi)
}

// Flat reports whether the search ended as its load failed at every
// rate (Record): it found no rate.
func (s *Search) Flat() bool { return s.flat }

// flatAs is what a window v that ends the search adds to its bounds
// missed: the window whose share it kept, at a higher rate. ", as
// 10.12% at 500/s".
func (s *Search) flatAs(v verdict) string {
	f, ok := s.flatAgainst(v)
	if !ok {
		return ""
	}
	return fmt.Sprintf(", as %s%% at %g/s", pct(f.share, 2), f.rate)
}

// Windows is how many windows the search has had.
func (s *Search) Windows() int { return s.windows }

// Tried is a window of a search as Verify reads it: its rate and its
// step.
type Tried struct {
	Rate float64
	Step results.Step
}

// Verify says what a search's windows (tried, in the order they ran) and
// the rate it ended with (0 for none; confirmed whether a confirm passed
// at it) break of what every search owes, whatever its load did: at most
// MaxWindows windows; a confirmed rate is one a confirming window passed
// at, below every rate that failed; a rate not confirmed is one a step
// passed at, below every rate that failed, of a search with no confirm
// passed; none, of a search with no confirm passed. nil when it keeps
// them all.
func Verify(tried []Tried, rate float64, confirmed bool) error {
	if len(tried) > MaxWindows {
		return fmt.Errorf("%d windows: want at most %d", len(tried), MaxWindows)
	}
	lowest := math.Inf(1)
	var confirms, passes []float64
	for _, w := range tried {
		switch {
		case !w.Step.Pass:
			lowest = min(lowest, w.Rate)
		case w.Step.Confirm:
			confirms = append(confirms, w.Rate)
		default:
			passes = append(passes, w.Rate)
		}
	}
	switch {
	case confirmed && !slices.Contains(confirms, rate):
		return fmt.Errorf("confirmed %g/s: no confirm passed at it (passed at %v)", rate, confirms)
	case !confirmed && len(confirms) > 0:
		return fmt.Errorf("no confirmed rate, but confirms passed at %v", confirms)
	case rate > 0 && !confirmed && !slices.Contains(passes, rate):
		return fmt.Errorf("%g/s not confirmed: no step passed at it (passed at %v)", rate, passes)
	case rate >= lowest:
		return fmt.Errorf("%g/s: not below the lowest rate that failed, %g/s", rate, lowest)
	}
	return nil
}

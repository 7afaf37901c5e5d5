package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"bench/harness/host"
	"bench/harness/pace"
	"bench/results"
	"bench/scenarios"
)

// A load split over several client hosts (a hosts file with several
// client lines): each host runs its share of the scenario's load
// (scenarios.ShareOf) at once, its output in a folder of its own; bench
// mix's shares begin together, at a start the session gives each once
// every host's connections are open. Their figures add up and their
// latency merges whole (scenarios.MergeShares); hosts whose windows lie
// further apart than ClockShare of the window fail the run.

// sharePrefix names the folders of the client hosts' shares in a run's
// load folder: client-1, client-2, ...
const sharePrefix = "client-"

// Shares says which scenarios of the session cannot be split over its
// client hosts, where several share the load (scenarios.ShareOf).
func (s *Schedule) Shares() error {
	n := len(s.cfg.Host.Hosts.Of(host.RoleClient))
	var errs []error
	for _, sc := range s.cfg.Scenarios {
		if _, err := scenarios.ShareOf(sc, 0, n); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// shareDir is the folder of client host i's share (from 0) in a run's
// load folder.
func shareDir(dir string, i int) string { return filepath.Join(dir, sharePrefix+strconv.Itoa(i+1)) }

// share is what one client host's tool measured of its share.
type share struct {
	m     scenarios.Measurement
	ended time.Time
	err   error
}

// loadShares is load where several client hosts share it. opened, where
// set, is told the shared start of bench mix's warm-up; measured says
// that the hosts' windows must agree.
func (s *runner) loadShares(ctx context.Context, r RunSpec, t scenarios.Target, window time.Duration, dir string, opened func(time.Time), measured bool) (scenarios.Measurement, time.Time, error) {
	n := s.host.Clients()
	specs := make([]scenarios.Scenario, n)
	for i := range n {
		var err error
		if specs[i], err = scenarios.ShareOf(r.Scenario, i, n); err != nil {
			return scenarios.Measurement{}, time.Time{}, err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ready := make(chan int, n)
	shares := make([]share, n)
	var wg sync.WaitGroup
	for i := range n {
		ri := r
		ri.Scenario = specs[i]
		var said atomic.Bool
		watch := func(l []byte) {
			if string(bytes.TrimSpace(l)) == scenarios.ShareReady && said.CompareAndSwap(false, true) {
				ready <- i // once a host, so that the channel never fills
			}
		}
		wg.Go(func() {
			x := &shares[i]
			x.m, x.ended, x.err = s.runLoad(ctx, ri, t, window, shareDir(dir, i), i, watch)
			if x.err != nil || !said.Load() {
				cancel() // the others' shares are no run without it
			}
		})
	}
	start, startErr := s.startShares(ctx, ready, n, dir)
	if startErr != nil {
		cancel()
	} else if opened != nil {
		opened(start)
	}
	wg.Wait()
	return s.mergeShares(specs, shares, window, measured, startErr)
}

// startShares waits for every client host's tool to say it is ready
// (bench mix once its connections are open, wrk before its threads
// start), then gives every host its start file: the start they share,
// on the host's clock, far enough ahead that each has it before it
// comes, however late its copy goes. It returns the start on this
// machine's clock.
func (s *runner) startShares(ctx context.Context, ready <-chan int, n int, dir string) (time.Time, error) {
	for range n {
		select {
		case <-ctx.Done():
			return time.Time{}, errors.New("a client host's share ended before every host was ready")
		case <-ready:
		}
	}
	unknown, err := s.host.Clocks(ctx)
	if err != nil {
		return time.Time{}, err
	}
	start := time.Now().Add(shareStartAhead + 2*unknown)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		at := s.host.ToHostOn(host.RoleClient, i, start)
		d := shareDir(dir, i)
		if err := os.WriteFile(filepath.Join(d, scenarios.ShareStartFile), []byte(strconv.FormatInt(at.UnixNano(), 10)+"\n"), 0o644); err != nil {
			return time.Time{}, err
		}
		wg.Go(func() {
			if err := s.host.Send(host.RoleClient, i, d); err != nil {
				errs[i] = fmt.Errorf("give client host %d its start: %w", i+1, err)
			}
		})
	}
	wg.Wait()
	return start, errors.Join(errs...)
}

// shareStartAhead is how far ahead of the moment the last client host
// is ready the shared start is set, beside twice the clocks'
// uncertainty: time to give each host its start.
const shareStartAhead = 500 * time.Millisecond

// mergeShares merges the client hosts' measurements, their starts on
// this machine's clock, and fails the run where one failed or, where
// measured, their windows lie apart by more than ClockShare of window:
// their starts, or their ends beyond the tool's own slack at its end
// (scenarios.EndSlack). The hosts whose share lagged are in its Lags.
func (s *runner) mergeShares(specs []scenarios.Scenario, shares []share, window time.Duration, measured bool, startErr error) (scenarios.Measurement, time.Time, error) {
	var errs []error
	ms := make([]scenarios.Measurement, len(shares))
	var windows []results.HostWindow
	for i, x := range shares {
		if x.err != nil {
			errs = append(errs, fmt.Errorf("client host %d: %w", i+1, x.err))
			continue
		}
		ms[i] = x.m
		end := x.ended
		if !x.m.Started.IsZero() {
			ms[i].Started = s.host.ToLocalOn(host.RoleClient, i, x.m.Started)
			end = ms[i].Started.Add(time.Duration(x.m.Seconds * float64(time.Second)))
		}
		from := end.Add(-time.Duration(x.m.Seconds * float64(time.Second)))
		windows = append(windows, results.HostWindow{Host: s.host.ClientDest(i), Of: results.WindowLoad, From: from.UTC(), To: end.UTC()})
	}
	if err := errors.Join(startErr, errors.Join(errs...)); err != nil {
		return scenarios.Measurement{}, time.Time{}, err
	}
	starts, ends := spread(windows, func(w results.HostWindow) time.Time { return w.From }), spread(windows, func(w results.HostWindow) time.Time { return w.To })
	last := windows[0].To
	for _, w := range windows {
		if w.To.After(last) {
			last = w.To
		}
	}
	apart := max(starts, ends-scenarios.EndSlack(specs[0].Load.Tool))
	if measured && float64(apart) > ClockShare*float64(window) {
		var each []string
		for i, w := range windows {
			each = append(each, fmt.Sprintf("client host %d's %.3f s from +%v", i+1, w.To.Sub(w.From).Seconds(), w.From.Sub(windows[0].From).Round(time.Millisecond)))
		}
		return scenarios.Measurement{}, last, fmt.Errorf("the client hosts' windows started %v and ended %v apart, more than %g%% of the %v window (%s)",
			starts.Round(time.Millisecond), ends.Round(time.Millisecond), ClockShare*100, window, strings.Join(each, ", "))
	}
	m, err := scenarios.MergeShares(specs, ms)
	m.Windows, m.Lags = windows, scenarios.Lagging(specs, ms)
	return m, last, err
}

// lagged reads the client hosts whose share lagged the others' (lags)
// by their CPUs' busy share over the window (busy, by host): one at its
// limit (pace.Threshold) fell behind its share, and the run fails, its
// figure the host's and not the proxy's; the others were served less
// than the rest by the proxy or the origin, which the row's note says.
func lagged(lags []scenarios.Lag, busy []float64) (string, error) {
	var notes []string
	var errs []error
	for _, l := range lags {
		b := 0.0
		if l.Host < len(busy) {
			b = busy[l.Host]
		}
		if b >= pace.Threshold {
			errs = append(errs, fmt.Errorf("client host %d fell behind its share, its CPUs %.0f%% busy: %s", l.Host+1, b*100, l))
			continue
		}
		notes = append(notes, fmt.Sprintf("%s, its CPUs %.0f%% busy: the hosts were served unequally", l, b*100))
	}
	return strings.Join(notes, "; "), errors.Join(errs...)
}

// spread is how far apart the times at of windows lie.
func spread(windows []results.HostWindow, at func(results.HostWindow) time.Time) time.Duration {
	lo, hi := at(windows[0]), at(windows[0])
	for _, w := range windows[1:] {
		if t := at(w); t.Before(lo) {
			lo = t
		} else if t.After(hi) {
			hi = t
		}
	}
	return hi.Sub(lo)
}

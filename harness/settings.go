package harness

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"bench/harness/host"
	"bench/harness/sweep"
	"bench/inputerr"
	"bench/proxies"
	"bench/results"
	"bench/scenarios"
)

// checkSettings says what is wrong with the settings' numbers.
func checkSettings(st results.Settings) error {
	switch {
	case st.Reps < 1:
		return fmt.Errorf("%d repetitions: need at least 1", st.Reps)
	case time.Duration(st.Window) < time.Second:
		return fmt.Errorf("a window of %s: need at least 1s", time.Duration(st.Window))
	case st.Warmup < 0:
		return fmt.Errorf("a warm-up of %s: want 0 (none) or more", time.Duration(st.Warmup))
	case st.MixConns < 0:
		return fmt.Errorf("%d mix connections: want 0 (the catalog's) or more", st.MixConns)
	case st.ProxyCPU < 0:
		return fmt.Errorf("a proxy CPU quota of %g: want 0 (none) or more", st.ProxyCPU)
	case st.RepsAuto && st.Reps != AutoMinReps:
		return fmt.Errorf("automatic repetitions start from %d, not %d", AutoMinReps, st.Reps)
	case st.RepsAuto && st.RepsMax < st.Reps:
		return settingErrorf("at most %d repetitions with %v: need at least %d", st.RepsMax, SettingRepsAuto, st.Reps)
	case st.RepsAuto && (st.Precision <= 0 || st.Precision >= 1):
		return fmt.Errorf("a precision of %g%%: want more than 0%% and less than 100%%", st.Precision*100)
	case st.CallGraph != "" && st.CallGraph != results.CallGraphFP && st.CallGraph != results.CallGraphDWARF:
		return fmt.Errorf("call graph %q: want %s (frame pointers) or %s", st.CallGraph, results.CallGraphFP, results.CallGraphDWARF)
	case st.CallGraph != "" && !st.Profile:
		return settingErrorf("%v goes with %v", SettingCallGraph, SettingProfileOn)
	case !st.RepsAuto && (st.RepsMax != 0 || st.Precision != 0):
		return settingErrorf("a cap on the repetitions and a precision go with %v only", SettingRepsAuto)
	case st.RepsAuto && st.Sweep != nil:
		return settingErrorf("%v repeats a cell until its median settles, and a sweep's result is one rate a search: give the sweeps %v", SettingRepsAuto, SettingReps)
	}
	if st.Sweep != nil {
		if err := sweep.Check(*st.Sweep); err != nil {
			return fmt.Errorf("the sweep: %w", err)
		}
	}
	for m, own := range st.Methods {
		switch {
		case own.Reps < 1:
			return fmt.Errorf("%s: %d repetitions: need at least 1", m, own.Reps)
		case st.RepsAuto && own.Reps != st.Reps:
			return settingErrorf("%s: %d repetitions with %v: automatic repetitions start from %d", m, own.Reps, SettingRepsAuto, st.Reps)
		case time.Duration(own.Window) < time.Second:
			return fmt.Errorf("%s: a window of %s: need at least 1s", m, time.Duration(own.Window))
		case own.Warmup < 0:
			return fmt.Errorf("%s: a warm-up of %s: want 0 (none) or more", m, time.Duration(own.Warmup))
		}
	}
	return nil
}

// SweepRequest is what the user asked of the sweeps.
type SweepRequest struct {
	// Sweeps says that the scenarios are the sweeps of the mix modes
	// they select (scenarios.Sweeps) rather than their loads.
	Sweeps bool
	// Search is the search's settings, and SearchGiven says that the
	// user gave any of them, which without a sweep is refused.
	Search      results.Sweep
	SearchGiven bool
}

// Sweeping sets st for the sweeps asked for: with req.Sweeps its
// scenarios are the sweeps of the mix modes they select, and whenever
// they hold a sweep (named, or by req.Sweeps) st.Sweep is req.Search. A
// selection with nothing to sweep, a search given without a sweep, or
// settings that cannot be run (a first rate of 0 or below), are refused
// as inputerr.Error; its message names the settings (SettingError).
func Sweeping(st results.Settings, req SweepRequest) (results.Settings, error) {
	search := req.Search
	if req.Sweeps {
		scs, err := scenarios.Sweeps(st.Scenario)
		if err != nil {
			return st, inputerr.Bad(settingErrorf("%v: %w", SettingSweep, err))
		}
		names := make([]string, len(scs))
		for i, sc := range scs {
			names[i] = sc.Name
		}
		st.Scenario = strings.Join(names, ",")
	}
	scs, err := scenarios.Select(st.Scenario)
	if err != nil {
		return st, inputerr.Bad(err)
	}
	st.Sweep = nil
	for _, sc := range scs {
		if sc.Load.Sweep {
			st.Sweep = &search
		}
	}
	switch {
	case st.Sweep == nil && req.SearchGiven:
		return st, inputerr.Bad(settingErrorf("%v, %v and %v go with %v (or a sweep named: mix-http-sweep, ...)",
			SettingSweepFrom, SettingSweepPrecision, SettingSLO, SettingSweep))
	case st.Sweep != nil:
		if err := sweep.Check(search); err != nil {
			return st, inputerr.Bad(settingErrorf("%v, %v: %w", SettingSweepFrom, SettingSweepPrecision, err))
		}
	}
	return st, nil
}

// Given says which parts of the runs' method the user gave, rather than
// left to the defaults.
type Given struct{ Reps, Window, Warmup bool }

// OwnMethods returns the methods of the modes among st's scenarios that
// have one of their own (scenarios.OwnMethod), for st.Methods: what the
// user gave holds for them too, the rest is the family's. A mode whose
// method comes out the session's is left out.
func OwnMethods(st results.Settings, given Given) (map[results.Mode]results.Method, error) {
	scs, err := scenarios.Select(st.Scenario)
	if err != nil {
		return nil, inputerr.Bad(err)
	}
	var out map[results.Mode]results.Method
	for _, sc := range scs {
		own, ok := scenarios.OwnMethod(sc.Mode)
		if !ok {
			continue
		}
		if given.Reps || st.RepsAuto {
			own.Reps = st.Reps
		}
		if given.Window {
			own.Window = st.Window
		}
		if given.Warmup {
			own.Warmup = st.Warmup
		}
		if own == (results.Method{Reps: st.Reps, Window: st.Window, Warmup: st.Warmup}) {
			continue
		}
		if out == nil {
			out = map[results.Mode]results.Method{}
		}
		out[sc.Mode] = own
	}
	return out, nil
}

// Configure resolves the settings into a session's configuration on this
// machine: the scenarios, the columns found where found looks (here, or
// on the proxy's host) and in the columns file,
// the CPU layout, and the defaults of the machine's label and the session
// id. hc names the session's namespaces and cgroups; its layout and quota
// come from st. Nothing is started. Settings that cannot be run (a
// number out of range, a scenario or column that does not exist, a CPU
// layout that does not parse or fit, a bad columns file) are refused as
// inputerr.Error.
func Configure(st results.Settings, outDir string, resume bool, hc host.Config, found Finder) (SessionConfig, error) {
	if err := checkSettings(st); err != nil {
		return SessionConfig{}, inputerr.Bad(err)
	}
	scs, err := scenarios.Select(st.Scenario)
	if err != nil {
		return SessionConfig{}, inputerr.Bad(err)
	}
	for _, sc := range scs {
		if sc.Load.Sweep && st.Sweep == nil {
			d := sweep.Defaults()
			st.Sweep = &d // a sweep named in settings that have none
		}
	}
	if st.MixConns > 0 {
		for i := range scs {
			if scs[i].Load.Tool == scenarios.ToolBench {
				scs[i].Load.Conns = st.MixConns
			}
		}
	}
	cols, err := found.columns(st.ColumnsFile, st.Proxy)
	if err != nil {
		return SessionConfig{}, err
	}
	online, err := host.OnlineCPUs()
	if err != nil {
		return SessionConfig{}, err
	}
	if st.CPUs != "" {
		hc.Layout, err = host.ParseLayout(st.CPUs, online)
		err = inputerr.Bad(err)
	} else {
		hc.Layout, err = host.DefaultLayout(online) // a machine too small: no setting of the user's
	}
	if err != nil {
		return SessionConfig{}, err
	}
	hc.ProxyCPUQuota = st.ProxyCPU
	if err := hc.Check(online); err != nil { // the prefix, the layout and the quota asked for
		return SessionConfig{}, inputerr.Bad(err)
	}
	if st.Machine == "" {
		st.Machine = defaultMachineLabel()
	}
	if _, err := os.Lstat(outDir); err == nil { // one the session would make is checked then
		if err := checkSetting(SettingOut, func(what string) error { return results.CheckDir(what, outDir) }); err != nil {
			return SessionConfig{}, inputerr.Bad(err)
		}
	}
	if st.Session == "" {
		st.Session = freeSession(outDir, st.Machine, time.Now())
	}
	if err := errors.Join(checkName(SettingSession, st.Session), checkName(SettingMachine, st.Machine)); err != nil {
		return SessionConfig{}, inputerr.Bad(err) // the history files a session by them
	}
	return SessionConfig{Settings: st, Scenarios: scs, Columns: cols, OutDir: outDir, Resume: resume, Host: hc, Found: found}, nil
}

// freeSession is the default id of a session started at now: the minute
// it starts ("2026-10-13-1930"), or that with "-2", "-3", ... when a
// session of the machine in outDir has its files (the CSV, the metadata
// or the runs' output) under that id, so that two sessions started within
// a minute each have a file of their own.
func freeSession(outDir, machine string, now time.Time) string {
	base := now.Format("2006-01-02-1504")
	for n := 1; ; n++ {
		id := base
		if n > 1 {
			id = fmt.Sprintf("%s-%d", base, n)
		}
		csvPath, metaPath := SessionPaths(outDir, machine, id)
		if !exists(csvPath) && !exists(metaPath) && !exists(runsDir(csvPath)) {
			return id
		}
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return !errors.Is(err, os.ErrNotExist)
}

// LoadColumns returns the packaged columns found on the machine plus the
// user's file, narrowed to names (comma-separated) when given. A columns
// file that cannot be read or declares what cannot run, and a name of no
// column, are refused as inputerr.Error.
func LoadColumns(file, names string) ([]proxies.Column, error) {
	return Finder{}.columns(file, names)
}

// columns is LoadColumns with the packaged proxies looked for where f
// finds them.
func (f Finder) columns(file, names string) ([]proxies.Column, error) {
	f.named = names != ""
	cols := proxies.DefaultColumns(f.lookPath)
	if file != "" {
		b, err := results.ReadInput(file)
		if err != nil {
			return nil, fmt.Errorf("columns file: %w", err)
		}
		own, err := proxies.ParseColumns(bytes.NewReader(b), file)
		if err != nil {
			return nil, inputerr.Bad(err) // it names file:line itself
		}
		cols = append(cols, own...)
	}
	if err := proxies.Validate(cols, f.stat()); err != nil {
		return nil, inputerr.Bad(err)
	}
	if names == "" {
		return cols, nil
	}
	byName := map[string]proxies.Column{}
	var all []string
	for _, c := range cols {
		byName[c.Name] = c
		all = append(all, c.Name)
	}
	var picked []proxies.Column
	seen := map[string]bool{}
	for _, n := range strings.Split(names, ",") {
		n = strings.TrimSpace(n)
		if err := checkSetting(SettingProxyColumn, func(what string) error { return results.CheckLabel(what, n) }); err != nil {
			return nil, inputerr.Bad(err)
		}
		c, ok := byName[n]
		if !ok {
			return nil, inputerr.Bad(fmt.Errorf("no column %q (columns: %s)", n, strings.Join(all, ", ")))
		}
		if seen[n] {
			continue
		}
		seen[n] = true
		picked = append(picked, c)
	}
	return picked, nil
}

// ErrNoSession is the error of Resumable when there is no session to
// continue.
var ErrNoSession = errors.New("no session to resume")

// Resumable returns the settings of session id in dir, or of the newest
// session there that did not end when id is empty, as its metadata
// recorded them.
func Resumable(dir, id string) (results.Settings, error) {
	metas, _ := filepath.Glob(filepath.Join(dir, "*"+results.MetaSuffix))
	var best *results.Meta
	for _, p := range metas {
		m, err := results.ReadMeta(p)
		if err != nil {
			continue
		}
		switch {
		case id != "" && m.Session == id:
			best = m
		case id == "" && m.Ended == nil && (best == nil || m.Started.After(best.Started)):
			best = m
		default:
			continue
		}
		if id != "" {
			break
		}
	}
	switch {
	case best == nil && id != "":
		return results.Settings{}, fmt.Errorf("%w: no session %q in %s", ErrNoSession, id, dir)
	case best == nil:
		return results.Settings{}, fmt.Errorf("%w: no unfinished session in %s", ErrNoSession, dir)
	case best.Scenario == "":
		return results.Settings{}, fmt.Errorf("session %s: its metadata records no settings (it was written by an older bench)", best.Session)
	}
	st := best.Settings
	st.Machine, st.Session = best.Machine.Label, best.Session
	return st, nil
}

// SweepSettings are the session's search: its settings', or the
// defaults in a session whose settings have none (it named a sweep
// without --sweep's flags).
func (cfg SessionConfig) SweepSettings() results.Sweep {
	if cfg.Sweep != nil {
		return *cfg.Sweep
	}
	return sweep.Defaults()
}

package harness

import (
	"bench/internal/text"
	"errors"
	"fmt"
	"io"
	"maps"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"time"

	"bench/harness/host"
	"bench/harness/sweep"
	"bench/proxies"
	"bench/results"
	"bench/scenarios"
)

// AutoMinReps is how many repetitions --reps auto makes of every cell
// before it looks at their figures.
const AutoMinReps = 3

// Schedule is a session's runs in their order, before anything starts;
// with automatic repetitions Extend adds a repetition at a time.
type Schedule struct {
	cfg     SessionConfig
	Runs    []RunSpec
	Skipped int             // scenario x column pairs left out: the column cannot serve the mode
	Done    map[RunKey]bool // runs a resumed session has in its file
	// Steps are the rows of the sweeps a resumed session's file has
	// some steps of and whose search had not ended: the session replays
	// them and goes on (replaySweep).
	Steps map[RunKey][]results.Row
	reps  int    // the repetitions planned so far
	limit uint64 // the descriptor limit of a process, which scales the runs' connections
}

// NewSchedule orders the runs of cfg and, when resuming, reads which the
// session file has. It touches nothing but the file it reads.
func NewSchedule(cfg SessionConfig) (*Schedule, error) {
	s := &Schedule{cfg: cfg, Done: map[RunKey]bool{}, reps: cfg.Reps}
	s.Runs, s.Skipped = runsFor(cfg.Scenarios, cfg.Columns, func(m results.Mode) int { return cfg.MethodOf(m).Reps }, columnRuns)
	var err error
	if s.limit, err = host.NofileLimit(); err != nil {
		return nil, err
	}
	for i := range s.Runs {
		scaleToFit(&s.Runs[i], s.limit)
	}
	if cfg.Resume {
		csvPath, _ := SessionPaths(cfg.OutDir, cfg.Machine, cfg.Session)
		rows, err := results.ReadFiles([]string{csvPath})
		if err != nil && !errors.Is(err, results.ErrNoRuns) { // killed in its first run: none done
			return nil, fmt.Errorf("resume: %w", err)
		}
		if err := s.resume(rows); err != nil {
			return nil, fmt.Errorf("resume: %w", err)
		}
	}
	return s, nil
}

// resume marks the runs the session's file has done: every run with a
// row, and every sweep whose search had ended; a sweep with some steps
// and more to go keeps them in Steps.
func (s *Schedule) resume(rows []results.Row) error {
	steps := map[RunKey][]results.Row{}
	for _, r := range rows {
		k := RunKey{Cell: r.Cell(), Rep: r.Rep}
		if r.Load == results.LoadSweep {
			steps[k] = append(steps[k], r)
			continue
		}
		s.Done[k] = true
	}
	cfg := s.cfg.SweepSettings()
	s.Steps = map[RunKey][]results.Row{}
	for k, rs := range steps {
		_, done, err := replaySweep(cfg, rs)
		switch {
		case err != nil:
			return err
		case done:
			s.Done[k] = true
		default:
			s.Steps[k] = rs
		}
	}
	return nil
}

// scaleToFit lowers a run's connections to what a proxy can hold under
// the descriptor limit of a process (host.ProxyConns): the mix
// scenarios' 20000 do not fit a one-process proxy under a limit of 20000.
// The baseline is held to the same count, so that its figures compare.
func scaleToFit(r *RunSpec, limit uint64) {
	fit := host.ProxyConns(limit, r.Column.Group == results.Splice)
	if conns := r.Scenario.Load.Conns; conns > fit && fit > 0 {
		r.Asked = conns
		r.Scenario.Load.Conns = fit
	}
}

// Notes are what the session says of its runs beyond the plan: the
// connections it scaled down, and in which scenarios.
func (s *Schedule) Notes() []string {
	var texts []string
	scs := map[string][]string{}
	for _, r := range s.Runs {
		if r.Asked == 0 {
			continue
		}
		t := r.Scaled()
		if _, ok := scs[t]; !ok {
			texts = append(texts, t)
		}
		if !slices.Contains(scs[t], r.Scenario.Name) {
			scs[t] = append(scs[t], r.Scenario.Name)
		}
	}
	notes := make([]string, len(texts))
	for i, t := range texts {
		notes[i] = t + ": " + strings.Join(scs[t], ", ")
	}
	return notes
}

// Extend plans the next repetition of a session with automatic
// repetitions, from the rows of its file: the runs of the cells not yet
// settled (see settled) by the runs of the repetitions before it, in the
// order runsFor gives that repetition, so that the rotation is the one a
// session with that many repetitions has. It returns the runs added to
// Runs, none when every cell is settled or has RepsMax runs. A resumed
// session extends the same way: the rows of later repetitions do not
// enter the decision.
func (s *Schedule) Extend(rows []results.Row) []RunSpec {
	if !s.cfg.RepsAuto || s.reps >= s.cfg.RepsMax {
		return nil
	}
	rep := s.reps + 1
	runs := map[results.Cell]int{}
	figures := map[results.Cell][]float64{}
	for i := range rows {
		r := &rows[i]
		if r.Rep >= rep || r.Machine != s.cfg.Machine || r.Session != s.cfg.Session {
			continue
		}
		c := r.Cell()
		runs[c]++
		if r.Status == results.OK {
			figures[c] = append(figures[c], r.Figure())
		}
	}
	var added []RunSpec
	for _, r := range repetition(s.cfg.Scenarios, s.cfg.Columns, rep, columnRuns) {
		c := r.Cell()
		if settled(figures[c], runs[c], s.cfg.Precision) {
			continue
		}
		r.Index = len(s.Runs) + 1
		scaleToFit(&r, s.limit)
		s.Runs = append(s.Runs, r)
		added = append(added, r)
	}
	s.reps = rep
	return added
}

// settled reports whether a cell of a session with automatic repetitions
// needs no more runs: it has AutoMinReps ok runs or more and no single
// one moves their median by more than precision (results.MedianShift), or
// every run it had failed (more would fail too). A cell with some failed
// runs goes on until it has AutoMinReps ok ones; the cap on repetitions
// ends every cell.
func settled(figures []float64, runs int, precision float64) bool {
	switch {
	case runs >= AutoMinReps && len(figures) == 0:
		return true
	case len(figures) < AutoMinReps:
		return false
	}
	return results.MedianShift(figures) <= precision
}

// todo is the number of runs still to do.
func (s *Schedule) todo() int {
	n := 0
	for _, r := range s.Runs {
		if !s.Done[r.Key()] {
			n++
		}
	}
	return n
}

// Print writes the plan of the session: its runs, columns, CPU layout and
// estimated time. The file it writes (File) is the caller's to say.
func (s *Schedule) Print(w io.Writer) {
	cfg := s.cfg
	todo := s.todo()
	names, idle := s.columns()
	reps, runs := s.repsText()
	fmt.Fprintf(w, "session %s on %q: %s x %s x %s = %s",
		cfg.Session, cfg.Machine, text.Plural(len(cfg.Scenarios), "scenario"), text.Plural(len(names), "column"), reps, runs)
	if s.Skipped > 0 {
		fmt.Fprintf(w, " (%s skipped: mode not served)", text.Plural(s.Skipped, "scenario x column pair"))
	}
	fmt.Fprintln(w)
	if done := len(s.Runs) - todo; done > 0 || len(s.Steps) > 0 {
		fmt.Fprintf(w, "resuming: %d runs done, %d to go\n", done, todo)
	}
	for _, r := range s.Runs {
		if rows := s.Steps[r.Key()]; len(rows) > 0 {
			fmt.Fprintf(w, "resuming the search of %s in %s, rep %d, after the %s the file has of it\n",
				r.Column.Name, r.Scenario.Name, r.Rep, text.Plural(len(rows), "window"))
		}
	}
	var scs []string
	for _, sc := range cfg.Scenarios {
		scs = append(scs, sc.Name)
	}
	fmt.Fprintf(w, "scenarios: %s\n", strings.Join(scs, ", "))
	fmt.Fprintf(w, "columns: %s\n", strings.Join(names, ", "))
	if len(idle) > 0 {
		fmt.Fprintf(w, "not run (no scenario in their modes): %s\n", strings.Join(idle, ", "))
	}
	if cfg.Proxy == "" {
		if absent := absentProxies(cfg.Found.lookPath); len(absent) > 0 {
			fmt.Fprintf(w, "not installed%s, so not run: %s\n", cfg.Found.on(), strings.Join(absent, ", "))
		}
	}
	if hs := cfg.Host.Hosts; len(hs.Lines) > 0 {
		fmt.Fprintf(w, "hosts: %s", hostsLine(hs))
	} else {
		fmt.Fprintf(w, "cpus: %s", cfg.Host.Layout)
	}
	if cfg.Host.ProxyCPUQuota > 0 {
		fmt.Fprintf(w, ", proxy quota %g CPU", cfg.Host.ProxyCPUQuota)
	}
	fmt.Fprintln(w)
	if cfg.Host.Layout.Warning != "" && len(cfg.Host.Hosts.Lines) == 0 {
		fmt.Fprintf(w, "warning: %s\n", cfg.Host.Layout.Warning)
	}
	notes := s.Notes()
	switch {
	case !s.tunneled():
	case len(cfg.Host.Hosts.Lines) > 0: // the CPUs are the hosts', known once they are reached
		notes = append(notes, tunnelHostsNote)
	default:
		notes = append(notes, tunnelNote(cfg.Host.Layout))
	}
	for _, n := range notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	est := s.estimate()
	fmt.Fprintf(w, "each run: %s warm-up + %s window", time.Duration(cfg.Warmup), time.Duration(cfg.Window))
	for _, m := range slices.Sorted(maps.Keys(cfg.Methods)) {
		own := cfg.Methods[m]
		fmt.Fprintf(w, "; %s: %s of %s warm-up + %s window", m, text.Plural(own.Reps, "rep"), time.Duration(own.Warmup), time.Duration(own.Window))
	}
	fmt.Fprintf(w, "; estimated %s", est)
	if cfg.sweeps() {
		fmt.Fprint(w, " (each sweep at its longest)")
	}
	fmt.Fprintln(w)
	if cfg.sweeps() {
		s.printSweep(w)
	}
}

// File is the session's file, its CSV.
func (s *Schedule) File() string {
	csvPath, _ := SessionPaths(s.cfg.OutDir, s.cfg.Machine, s.cfg.Session)
	return csvPath
}

// columns are the names of the session's columns that run, and of those
// that do not (no scenario in their modes).
func (s *Schedule) columns() (names, idle []string) {
	used := map[string]bool{}
	for _, r := range s.Runs {
		used[r.Column.Name] = true
	}
	for _, c := range s.cfg.Columns {
		if used[c.Name] {
			names = append(names, c.Name)
		} else {
			idle = append(idle, c.Name)
		}
	}
	return names, idle
}

// repsText is the plan's repetitions and runs: "3 reps", "30 runs", each
// method's own, and with automatic repetitions their ranges.
func (s *Schedule) repsText() (reps, runs string) {
	cfg := s.cfg
	reps, runs = text.Plural(cfg.Reps, "rep"), text.Plural(len(s.Runs), "run")
	var own []string
	for _, m := range slices.Sorted(maps.Keys(cfg.Methods)) {
		if n := cfg.Methods[m].Reps; n != cfg.Reps {
			own = append(own, fmt.Sprintf("%s: %d", m, n))
		}
	}
	if len(own) > 0 {
		reps += " (" + strings.Join(own, ", ") + ")"
	}
	if cfg.RepsAuto {
		most := len(s.Runs) / cfg.Reps * cfg.RepsMax
		reps = fmt.Sprintf("%d..%d reps (until no run moves a median by more than %g%%)", cfg.Reps, cfg.RepsMax, cfg.Precision*100)
		runs = fmt.Sprintf("%d..%d runs", len(s.Runs), most)
	}
	return reps, runs
}

// estimate is the time the runs left take, "12m30s", and with automatic
// repetitions the most they take: "12m30s to 40m".
func (s *Schedule) estimate() string {
	cfg := s.cfg
	var left time.Duration
	for _, r := range s.Runs {
		if !s.Done[r.Key()] {
			left += cfg.runTime(r.Scenario)
		}
	}
	est := formatDuration(left)
	if cfg.RepsAuto {
		// At most every cell to the cap, less the runs the file has.
		most := left
		for _, r := range s.Runs {
			if r.Rep == 1 {
				most += time.Duration(cfg.RepsMax-cfg.Reps) * cfg.runTime(r.Scenario)
			}
		}
		est += " to " + formatDuration(most)
	}
	return est
}

// sweeps says whether the session runs a sweep.
func (cfg SessionConfig) sweeps() bool {
	for _, sc := range cfg.Scenarios {
		if sc.Load.Sweep {
			return true
		}
	}
	return false
}

// printSweep writes how the session's sweeps search: from where, to what
// precision, the bound a step must meet, and the windows of a search.
func (s *Schedule) printSweep(w io.Writer) {
	cfg := s.cfg
	sw := cfg.SweepSettings()
	n := 0
	for _, r := range s.Runs {
		if r.Scenario.Load.Sweep && !s.Done[r.Key()] {
			n++
		}
	}
	var own results.Method
	for _, sc := range cfg.Scenarios {
		if sc.Load.Sweep {
			own = cfg.MethodOf(sc.Mode)
			break
		}
	}
	window, warmup := time.Duration(own.Window), time.Duration(own.Warmup)
	fmt.Fprintf(w, "sweeps: from %g/s, doubled until a step fails, then halved to within %g%%; a step passes with %s, %g%% of its rate achieved\n",
		sw.From, sw.Precision*100, sweep.FormatSLO(sw.SLO), results.AchievedShare*100)
	fmt.Fprintf(w, "each sweep: at most %d windows, steps of %s warm-up + %s window (at most %d) and confirms of %s + %s: at most %s; %s, at most %d windows\n",
		sweep.MaxWindows, warmup, sweep.StepWindow(window), sweep.MaxSteps, warmup, window,
		formatDuration(sweep.Longest(sw, window, warmup)), text.Plural(n, "search"), n*sweep.MaxWindows)
	if need := results.MinDue(sw.SLO.Errors); need > 0 {
		fmt.Fprintf(w, "a window holds %d exchanges due at least, to tell %s of failures from chance: longer at low rates, up to %s; the search halves no lower than %g/s\n",
			need, text.SharePercent(sw.SLO.Errors), max(window, sweep.MaxLength), sweep.Floor(sw.SLO))
	}
}

// Fit says before anything starts what cannot fit this machine: a load
// with more connections than the descriptor limit gives a process (the
// client's and the proxy's counted as bench check counts them).
func (s *Schedule) Fit() error {
	limit, err := host.NofileLimit()
	if err != nil {
		return err
	}
	var errs []error
	seen := map[string]bool{}
	for _, r := range s.Runs {
		conns := r.Scenario.Load.Conns
		for _, need := range []struct {
			who string
			n   int64
		}{
			{"the client", host.ClientDescriptors(conns)},
			{r.Column.Name, host.ProxyDescriptors(conns, r.Column.Group == results.Splice)},
		} {
			key := r.Scenario.Name + "\x00" + need.who
			if uint64(need.n) > limit && !seen[key] {
				seen[key] = true
				errs = append(errs, fmt.Errorf("%s: %s needs %d file descriptors for %d connections; the limit here is %d (raise the hard nofile limit, or leave the scenario out)",
					r.Scenario.Name, need.who, need.n, conns, limit))
			}
		}
	}
	return errors.Join(errs...)
}

// MissingError names the programs a session needs that are not installed,
// and the packages that install them.
type MissingError struct {
	Programs []string
	Install  string // the command that installs them here
}

func (e *MissingError) Error() string {
	return "not installed: " + strings.Join(e.Programs, ", ")
}

// Tools makes sure the programs the runs need are installed: the origin's,
// the load tools, proxychains for the tunnels. It fails with a
// *MissingError.
func (s *Schedule) Tools() error {
	need := map[string]bool{}
	for _, p := range scenarios.OriginPrograms {
		need[p] = true
	}
	for _, r := range s.Runs {
		for _, p := range scenarios.Programs(r.Scenario) {
			need[p] = true
		}
	}
	var missing []string
	for t := range need {
		if _, err := exec.LookPath(t); err != nil {
			missing = append(missing, t)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(missing)
	return &MissingError{Programs: missing, Install: InstallAdvice(osRelease(), missing)}
}

// RunSpec is one run of a session: a column measured under one scenario in
// one repetition.
type RunSpec struct {
	Index    int // 1..N, in the order the runs happen
	Rep      int // 1..reps
	Scenario scenarios.Scenario
	Column   proxies.Column
	// Asked is the connections the scenario's load asks for when the
	// run holds fewer (Scenario.Load.Conns): what the descriptor limit
	// lets the proxy hold. 0 when it holds them all.
	Asked int
	// pin, when set, are the CPUs the load tool is held to (a
	// tls-tunnel's iperf3, off its client end's CPU).
	pin []int
}

// Scaled says how a run's connections were scaled down, or "".
func (r RunSpec) Scaled() string {
	if r.Asked == 0 {
		return ""
	}
	proxy := "a proxy"
	if r.Column.Group == results.Splice {
		proxy = "a splicing proxy" // its pipes counted
	}
	return fmt.Sprintf("%d of %d connections, what the descriptor limit lets %s hold", r.Scenario.Load.Conns, r.Asked, proxy)
}

// Cell is the run's cell: its column under its scenario.
func (r RunSpec) Cell() results.Cell {
	return results.Cell{Proxy: r.Column.Name, Mode: r.Scenario.Mode, Load: r.Scenario.Load.Name}
}

// Key identifies a run across a resumed session.
func (r RunSpec) Key() RunKey { return RunKey{Cell: r.Cell(), Rep: r.Rep} }

// RunKey is what makes a row of a session file unique: its cell and
// repetition.
type RunKey struct {
	results.Cell
	Rep int
}

// runsFor orders the runs of a session: repetition by repetition, each
// scenario in catalog order, and within it the columns that can serve its
// mode in their order rotated by one for each repetition, as the
// reference sessions did, so that no column always runs first after a
// scenario change. A scenario has the repetitions repsOf its mode gives.
// The columns that cannot serve a scenario's mode are left out and
// counted in skipped (once, not per repetition).
func runsFor(scs []scenarios.Scenario, cols []proxies.Column, repsOf func(results.Mode) int, serves func(proxies.Column, scenarios.Scenario) bool) (runs []RunSpec, skipped int) {
	most := 0
	for _, sc := range scs {
		most = max(most, repsOf(sc.Mode))
	}
	for rep := 1; rep <= most; rep++ {
		for _, r := range repetition(scs, cols, rep, serves) {
			if rep > repsOf(r.Scenario.Mode) {
				continue
			}
			r.Index = len(runs) + 1
			runs = append(runs, r)
		}
	}
	for _, sc := range scs {
		for _, c := range cols {
			if !serves(c, sc) {
				skipped++
			}
		}
	}
	return runs, skipped
}

// columnRuns reports whether column c runs scenario sc: it serves the
// scenario's mode, and the scenario is one for its group (the tunnels'
// plaintext loads are the baseline's alone, the cipher suites the
// proxies').
func columnRuns(c proxies.Column, sc scenarios.Scenario) bool {
	return proxies.Serves(c, sc.Mode) && scenarios.ForColumn(sc, c.Group == results.Baseline)
}

// repetition orders the runs of one repetition as runsFor does, without
// their indexes.
func repetition(scs []scenarios.Scenario, cols []proxies.Column, rep int, serves func(proxies.Column, scenarios.Scenario) bool) []RunSpec {
	var runs []RunSpec
	for _, sc := range scs {
		var able []proxies.Column
		for _, c := range cols {
			if serves(c, sc) {
				able = append(able, c)
			}
		}
		for i := range able {
			c := able[(i+rep-1)%len(able)]
			runs = append(runs, RunSpec{Rep: rep, Scenario: sc, Column: c})
		}
	}
	return runs
}

// estimate is the expected wall time of n runs of the given window and
// warm-up, with overhead for each run's start, readiness and stop.
func estimate(n int, window, warmup, overhead time.Duration) time.Duration {
	return time.Duration(n) * (window + warmup + overhead)
}

// runTime is the expected wall time of one run of scenario sc (the zero
// Scenario: of the session's own method): a sweep's at most, its search's
// every window (sweep.Longest).
func (cfg SessionConfig) runTime(sc scenarios.Scenario) time.Duration {
	own := cfg.MethodOf(sc.Mode)
	if sc.Load.Sweep {
		return sweep.Longest(cfg.SweepSettings(), time.Duration(own.Window), time.Duration(own.Warmup)) + runOverhead
	}
	return estimate(1, time.Duration(own.Window), time.Duration(own.Warmup), runOverhead)
}

// formatDuration prints d for people: 45s, 12m05s, 3h04m.
func formatDuration(d time.Duration) string {
	d = d.Round(time.Second)
	h, m, s := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	switch {
	case h > 0:
		return fmt.Sprintf("%dh%02dm", h, m)
	case m > 0:
		return fmt.Sprintf("%dm%02ds", m, s)
	default:
		return fmt.Sprintf("%ds", s)
	}
}

// hostsLine says where a hosts file puts the roles: "client on
// bench@load1 (data 192.0.2.11, cpus 0-15), proxy on ...".
func hostsLine(hs host.Hosts) string {
	var parts []string
	for _, l := range hs.Lines {
		cpus := "all but the first"
		if l.CPUs != nil {
			cpus = host.CPUList(l.CPUs)
		}
		parts = append(parts, fmt.Sprintf("%s on %s (data %s, cpus %s)", l.Role, l.Dest, l.Data, cpus))
	}
	line := strings.Join(parts, ", ")
	if n := len(hs.Of(host.RoleClient)); n > 1 {
		line += fmt.Sprintf("; the load split over the %d client hosts", n)
	}
	return line
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"bench/harness"
	"bench/harness/host"
	"bench/proxies"
	"bench/report"
	"bench/report/results"
	"bench/scenarios"
)

const runSynopsis = `[flags]

Runs a session: every selected scenario x every selected column x --reps
repetitions, in network namespaces of its own, writing a row per run to
<out>/<machine>-<session>.csv and the session's tables at the end.
Needs root.`

func cmdRun(stdout, stderr io.Writer, args []string) error {
	return runSession(stdout, stderr, args, false)
}

// resumeFlags are the flags a --resume command may give: what names the
// session and how the host is set up. The plan comes from the session's
// own command line, so that the runs it adds are like the ones it has.
var resumeFlags = map[string]bool{"resume": true, "session": true, "out": true, "dry-run": true, "prefix": true, "cgroup-parent": true}

// runSession runs `bench run args`; resuming says args are a session's
// own command line recovered from its metadata.
func runSession(stdout, stderr io.Writer, args []string, resuming bool) error {
	fs := newFlagSet("run", stderr, runSynopsis)
	scenario := fs.String("scenario", "all", "scenarios: all, a name, a comma list or globs (socks-*); see bench list")
	proxyList := fs.String("proxy", "", "columns to run, comma-separated (default: every column found)")
	columnsFile := fs.String("columns", "", "file declaring columns of your own builds (3proxy versions, envoy); see examples/columns.conf")
	reps := fs.Int("reps", 3, "repetitions of each run")
	window := fs.Duration("duration", 10*time.Second, "measured window of each run")
	warmup := fs.Duration("warmup", 2*time.Second, "load before each window, not measured")
	machine := fs.String("machine", "", "the machine's label in the tables (default: the CPU model)")
	out := fs.String("out", "data", "directory of the session files")
	session := fs.String("session", "", "session id (default: the start time, e.g. 2026-10-13-1930)")
	resume := fs.Bool("resume", false, "continue a killed session (--session names it; default the newest unfinished one in --out)")
	dryRun := fs.Bool("dry-run", false, "print the plan and stop")
	cpus := fs.String("cpus", "", "CPU layout, e.g. client=0-3,proxy=4,origin=5-7 (default on 8+ CPUs: client=0-3,proxy=4,origin=5-7; fewer: see README)")
	proxyCPU := fs.Float64("proxy-cpu", 0, "CPU quota of the proxy's cgroup in CPUs, e.g. 0.5 (default: none)")
	prefix := fs.String("prefix", "bench-", "prefix of the namespaces, links and cgroups the session creates")
	cgroupParent := fs.String("cgroup-parent", "", "cgroup beneath which the session's cgroups are created (default: this process's own)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("run: unexpected argument %q", fs.Arg(0))
	}
	if *resume && !resuming {
		return resumeSession(stdout, stderr, fs, *out, *session)
	}
	if *reps < 1 {
		return fmt.Errorf("--reps %d: need at least 1", *reps)
	}
	if *window < time.Second {
		return fmt.Errorf("--duration %s: need at least 1s", *window)
	}
	if *warmup < 0 {
		return fmt.Errorf("--warmup %s: want 0 (none) or more", *warmup)
	}

	scs, err := selectScenarios(*scenario)
	if err != nil {
		return err
	}
	cols, err := loadColumns(*columnsFile, *proxyList)
	if err != nil {
		return err
	}
	online, err := host.OnlineCPUs()
	if err != nil {
		return err
	}
	var layout host.Layout
	if *cpus != "" {
		layout, err = host.ParseLayout(*cpus, online)
	} else {
		layout, err = host.DefaultLayout(online)
	}
	if err != nil {
		return err
	}
	if *machine == "" {
		*machine = harness.DefaultMachineLabel()
	}
	if *session == "" {
		*session = time.Now().Format("2006-01-02-1504")
	}
	cfg := harness.SessionConfig{
		Scenarios: scs, Columns: cols, Reps: *reps, Window: *window, Warmup: *warmup,
		Machine: *machine, ID: *session, OutDir: *out, Resume: *resume,
		Host: host.Config{
			Prefix: *prefix, Layout: layout, ProxyCPUQuota: *proxyCPU, CgroupParent: *cgroupParent,
		},
		CommandLine: append([]string{"bench", "run"}, args...),
		Progress:    stderr,
		Live:        isTerminal(stderr),
	}
	if err := cfg.Host.Check(online); err != nil {
		return err
	}
	runs, skipped, done, err := harness.Plan(cfg)
	if err != nil {
		return err
	}
	if len(runs) == 0 {
		return fmt.Errorf("no runs: none of the columns serves the modes of the scenarios chosen (bench list shows which column serves which mode)")
	}
	printPlan(stderr, cfg, runs, skipped, done, *dryRun)
	if err := checkFit(runs); err != nil {
		return err
	}
	if *dryRun {
		return nil
	}
	if os.Geteuid() != 0 {
		return errors.New("run needs root (namespaces, cgroups): sudo bench run ...")
	}
	if err := requireTools(runs); err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	s, err := harness.NewSession(ctx, cfg)
	if err != nil {
		return err
	}
	execErr := s.Execute(ctx)
	closeErr := s.Close()
	if execErr != nil {
		if ctx.Err() != nil {
			again := fmt.Sprintf("sudo bench run --resume --session %s --out %s", cfg.ID, cfg.OutDir)
			if cfg.Host.Prefix != host.DefaultPrefix {
				again += " --prefix " + cfg.Host.Prefix
			}
			if cfg.Host.CgroupParent != "" {
				again += " --cgroup-parent " + cfg.Host.CgroupParent
			}
			fmt.Fprintf(stderr, "\ninterrupted: the runs done are in %s; continue with: %s\n", s.CSVPath, again)
			return errors.Join(errors.New("interrupted"), closeErr)
		}
		return errors.Join(execErr, closeErr)
	}
	if closeErr != nil {
		return closeErr
	}
	fmt.Fprintf(stderr, "session written to %s\n\n", s.CSVPath)
	rows, err := results.ReadFiles([]string{s.CSVPath})
	if err != nil {
		return err
	}
	return report.Render(stdout, rows, report.Options{Format: report.FormatMarkdown, Session: cfg.ID})
}

// loadColumns returns the packaged columns found on the machine plus the
// user's file, narrowed to names when given.
func loadColumns(file, names string) ([]proxies.Column, error) {
	cols := proxies.DefaultColumns(exec.LookPath)
	if file != "" {
		f, err := os.Open(file)
		if err != nil {
			return nil, fmt.Errorf("columns file: %w", err)
		}
		defer f.Close()
		own, err := proxies.ParseColumns(f, file)
		if err != nil {
			return nil, err
		}
		cols = append(cols, own...)
	}
	if err := proxies.Validate(cols, os.Stat); err != nil {
		return nil, err
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
		c, ok := byName[n]
		if !ok {
			return nil, fmt.Errorf("--proxy: no column %q (columns: %s)", n, strings.Join(all, ", "))
		}
		if seen[n] {
			continue
		}
		seen[n] = true
		picked = append(picked, c)
	}
	return picked, nil
}

func printPlan(w io.Writer, cfg harness.SessionConfig, runs []harness.RunSpec, skipped int, done map[harness.RunKey]bool, dryRun bool) {
	todo := 0
	used := map[string]bool{}
	for _, r := range runs {
		used[r.Column.Name] = true
		if !done[r.Key()] {
			todo++
		}
	}
	var names, idle []string
	for _, c := range cfg.Columns {
		if used[c.Name] {
			names = append(names, c.Name)
		} else {
			idle = append(idle, c.Name)
		}
	}
	fmt.Fprintf(w, "session %s on %q: %s x %s x %s = %s",
		cfg.ID, cfg.Machine, plural(len(cfg.Scenarios), "scenario"), plural(len(names), "column"),
		plural(cfg.Reps, "rep"), plural(len(runs), "run"))
	if skipped > 0 {
		fmt.Fprintf(w, " (%s skipped: mode not served)", plural(skipped, "scenario x column pair"))
	}
	fmt.Fprintln(w)
	if done := len(runs) - todo; done > 0 {
		fmt.Fprintf(w, "resuming: %d runs done, %d to go\n", done, todo)
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
	fmt.Fprintf(w, "cpus: %s", cfg.Host.Layout)
	if cfg.Host.ProxyCPUQuota > 0 {
		fmt.Fprintf(w, ", proxy quota %g CPU", cfg.Host.ProxyCPUQuota)
	}
	fmt.Fprintln(w)
	if cfg.Host.Layout.Warning != "" {
		fmt.Fprintf(w, "warning: %s\n", cfg.Host.Layout.Warning)
	}
	est := harness.Estimate(todo, cfg.Window, cfg.Warmup, harness.RunOverhead)
	fmt.Fprintf(w, "each run: %s warm-up + %s window; estimated %s\n",
		cfg.Warmup, cfg.Window, harness.FormatDuration(est))
	csvPath, _ := harness.SessionPaths(cfg.OutDir, cfg.Machine, cfg.ID)
	if dryRun {
		fmt.Fprintf(w, "would write %s\n", csvPath)
		return
	}
	fmt.Fprintf(w, "writing %s\n\n", csvPath)
}

// plural says "1 run", "2 runs".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// checkFit says before anything starts what cannot fit this machine: a
// load with more connections than the descriptor limit gives a process
// (the client's and the proxy's counted as bench check counts them).
func checkFit(runs []harness.RunSpec) error {
	limit, err := host.NofileLimit()
	if err != nil {
		return err
	}
	var errs []error
	seen := map[string]bool{}
	for _, r := range runs {
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

// requireTools makes sure the load tools the plan uses are installed.
func requireTools(runs []harness.RunSpec) error {
	need := map[string]bool{"nginx": true, "iperf3": true} // the origin
	for _, r := range runs {
		need[scenarios.DriverFor(r.Scenario).Tool()] = true
		switch r.Scenario.Mode {
		case results.Connect, results.Socks:
			need["proxychains4"] = true
		}
	}
	var missing []string
	for t := range need {
		if _, err := exec.LookPath(t); err != nil {
			missing = append(missing, t)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		return fmt.Errorf("not installed: %s (sudo make deps, or apt-get install %s)",
			strings.Join(missing, ", "), strings.Join(harness.PackagesFor(missing), " "))
	}
	return nil
}

// resumeSession continues the session named by id in dir (the newest
// unfinished one when id is empty) with the flags it was started with.
func resumeSession(stdout, stderr io.Writer, fs *flag.FlagSet, dir, id string) error {
	var extra []string
	var bad []string
	fs.Visit(func(f *flag.Flag) {
		switch {
		case !resumeFlags[f.Name]:
			bad = append(bad, "--"+f.Name)
		case f.Name != "resume" && f.Name != "session" && f.Name != "out":
			extra = append(extra, "--"+f.Name+"="+f.Value.String())
		}
	})
	if len(bad) > 0 {
		return fmt.Errorf("--resume continues a session with its own flags; leave out %s", strings.Join(bad, ", "))
	}
	m, err := findSession(dir, id)
	if err != nil {
		return err
	}
	if len(m.CommandLine) < 2 {
		return fmt.Errorf("--resume: session %s has no command line in its metadata", m.Session)
	}
	args := withoutFlags(m.CommandLine[2:], resumeFlags, "machine")
	args = append(args, "--session="+m.Session, "--machine="+m.Machine.Label, "--out="+dir)
	args = append(args, extra...)
	fmt.Fprintf(stderr, "resuming session %s: bench run %s\n", m.Session, strings.Join(args, " "))
	return runSession(stdout, stderr, append(args, "--resume"), true)
}

// findSession reads the metadata of session id in dir, or of the newest
// session there that has no end time when id is empty.
func findSession(dir, id string) (*harness.Meta, error) {
	metas, _ := filepath.Glob(filepath.Join(dir, "*.meta.json"))
	var best *harness.Meta
	for _, p := range metas {
		m, err := harness.ReadMeta(p)
		if err != nil {
			continue
		}
		switch {
		case id != "" && m.Session == id:
			return m, nil
		case id == "" && m.Ended == nil && (best == nil || m.Started.After(best.Started)):
			best = m
		}
	}
	if id != "" {
		return nil, fmt.Errorf("--resume: no session %q in %s", id, dir)
	}
	if best == nil {
		return nil, fmt.Errorf("--resume: no unfinished session in %s; name one with --session", dir)
	}
	return best, nil
}

// withoutFlags drops from args the flags named in drop (and in more),
// with their values, in the forms -f, --f, -f=v and -f v.
func withoutFlags(args []string, drop map[string]bool, more ...string) []string {
	isDropped := func(name string) bool { return drop[name] || slices.Contains(more, name) }
	boolean := map[string]bool{"resume": true, "dry-run": true}
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name := strings.TrimLeft(a, "-")
		if !strings.HasPrefix(a, "-") || name == "" {
			out = append(out, a)
			continue
		}
		if j := strings.IndexByte(name, '='); j >= 0 {
			if !isDropped(name[:j]) {
				out = append(out, a)
			}
			continue
		}
		if isDropped(name) {
			if !boolean[name] {
				i++ // its value
			}
			continue
		}
		out = append(out, a)
	}
	return out
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

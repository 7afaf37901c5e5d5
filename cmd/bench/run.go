package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"bench/harness"
	"bench/harness/host"
	"bench/inputerr"
	"bench/proxies"
	"bench/report"
	"bench/results"
	"bench/scenarios"

	"golang.org/x/sys/unix"
)

const runSynopsis = `[flags]

Runs a session: every selected scenario x every selected column x --reps
repetitions, in network namespaces of its own, writing a row per run to
<out>/<machine>-<session>.csv and the session's tables at the end.
With --sweep, each column's sustainable rate in the mix modes selected
instead: a search of fixed-rate steps, a row a step. Needs root;
--dry-run does not.

--reps auto repeats each cell at least 3 times, then more until no run
moves its median by more than --precision, at most --reps-max. Where
--reps, --duration and --warmup are not given, the tunnel and handshake
scenarios take stunnel's page's method (5 repetitions, 1s of warm-up).
--cpus defaults on 8 or more CPUs to client=0-3,proxy=4,origin=5-7; on
fewer the proxy keeps a CPU of its own and the client and the origin share
the rest. --profile=on profiles the proxy's CPUs over each run's window
with perf (<run>.cpu.pb.gz and .cpu.folded beside its data; bench profile
top prints it); it is off until its cost is measured. --call-graph fp
unwinds by frame pointers: cheap, and a binary built without them, as
Debian's proxies are, shows its functions under its caller's caller;
dwarf names them from the binaries' debug information, at more data and
CPU; the run's data says which. --cgroup-parent
defaults on cgroup v2 under systemd to a scope the session has systemd
delegate, elsewhere to this process's own cgroup.

--sweep searches each column's sustainable rate in the mix modes the
scenarios select, instead of their loads: steps at fixed rates over the
mix's connections, from --sweep-from doubled until one fails --slo, halved
to --sweep-precision, at most 13 of a --warmup and half a --duration each,
then a confirming window of --duration (docs/sweep.md). A step must also
achieve 99% of its rate.`

func cmdRun(stdout, stderr io.Writer, args []string) error {
	cfg, dryRun, checks, err := runConfig(stderr, args)
	if err != nil {
		return err
	}
	cfg.CommandLine = append([]string{"bench", "run"}, args...)
	cfg.Progress, cfg.Live = stderr, isTerminal(stderr)
	sched, err := harness.NewSchedule(cfg)
	if err != nil {
		return err
	}
	if len(sched.Runs) == 0 {
		return usageError{errors.New("no runs: none of the columns serves the modes of the scenarios chosen (bench list shows which column serves which mode)")}
	}
	sched.Print(stderr)
	if dryRun {
		fmt.Fprintf(stderr, "would write %s\n", sched.File())
	} else {
		fmt.Fprintf(stderr, "writing %s\n\n", sched.File())
	}
	if err := sched.Fit(); err != nil {
		return err
	}
	if err := sched.Shares(); err != nil {
		return usageError{fmt.Errorf("run: the client hosts cannot share these loads:\n%w", err)}
	}
	if dryRun {
		return nil
	}
	if os.Geteuid() != 0 {
		return errors.New("run needs root (namespaces, cgroups): sudo bench run ...")
	}
	if len(cfg.Host.Hosts.Lines) > 0 {
		if err := hostsReady(stderr, checks, cfg.Host, cfg.Columns); err != nil {
			return err
		}
	} else if err := sched.Tools(); err != nil {
		return withAdvice(err)
	}

	csvPath, err := execute(cfg, sched, stderr)
	if err != nil {
		return err
	}
	return summarize(stdout, stderr, csvPath, cfg.Session)
}

// runConfig parses bench run's flags and resolves the session's settings
// on this machine (harness.Configure); dryRun is --dry-run. A session
// across hosts, but for a dry run, has them checked first (checks): the
// proxy's host gives the machine's label unless --machine does, and the
// proxies found there are its columns.
func runConfig(stderr io.Writer, args []string) (cfg harness.SessionConfig, dryRun bool, checks []host.CheckItem, err error) {
	fs := newFlagSet("run", stderr, runSynopsis)
	var st results.Settings
	fs.StringVar(&st.Scenario, "scenario", "all", "scenarios: all, a name, a comma list or globs (socks-*); see bench list")
	fs.StringVar(&st.Proxy, "proxy", "", "columns to run, comma-separated (default: every column found)")
	fs.StringVar(&st.ColumnsFile, "columns", "", "file declaring columns of your own builds; see examples/columns.conf")
	reps := repsFlag{n: 3}
	fs.Var(&reps, "reps", "repetitions of each run, or auto: until each cell's median is settled")
	repsMax := fs.Int("reps-max", 10, "with --reps auto: the most repetitions of a cell")
	precision := percent{value: 5, set: true}
	fs.Var(&precision, "precision", "with --reps auto: how far one run may move a cell's median, in `percent`")
	window := fs.Duration("duration", 10*time.Second, "measured window of each run")
	warmup := fs.Duration("warmup", 2*time.Second, "load before each window, not measured")
	fs.StringVar(&st.Machine, "machine", "", "the machine's label in the tables (default: the CPU model; with --hosts the proxy host's)")
	out := fs.String("out", "data", "directory of the session files")
	fs.StringVar(&st.Session, "session", "", "session id (default: the minute it starts, e.g. 2026-10-13-1930, -2 if taken)")
	resume := fs.Bool("resume", false, "continue a killed session (--session's, else the newest unfinished one in --out)")
	fs.BoolVar(&dryRun, "dry-run", false, "print the plan and stop")
	fs.IntVar(&st.MixConns, "mix-conns", 0, "connections the mix scenarios hold open (default: 20000, or what the descriptors allow)")
	fs.StringVar(&st.CPUs, "cpus", "", "CPU layout, e.g. client=0-3,proxy=4,origin=5-7 (default: by the CPUs there are)")
	fs.Float64Var(&st.ProxyCPU, "proxy-cpu", 0, "CPU quota of the proxy's cgroup in CPUs, e.g. 0.5 (default: none)")
	profile := onOff{}
	fs.Var(&profile, "profile", "`off|on`: a CPU profile of the proxy over each run's window, with perf")
	fs.StringVar(&st.CallGraph, "call-graph", "", "with --profile=on, how perf unwinds the stacks: `fp` (the default) or dwarf")
	sw := sweepFlags(fs, "search each column's sustainable rate in the mix modes selected, instead of their loads")
	var hc host.Config
	fs.StringVar(&hc.Prefix, "prefix", host.DefaultPrefix, "prefix of the namespaces, links and cgroups the session creates")
	fs.StringVar(&hc.CgroupParent, "cgroup-parent", "", "cgroup beneath which the session's cgroups are created (default: see above)")
	hf := addHostsFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return harness.SessionConfig{}, false, nil, err
	}
	if *hf.file != "" {
		if hc, err = runHosts(fs, hf, hc, *sw.on); err != nil {
			return harness.SessionConfig{}, false, nil, err
		}
	}
	if fs.NArg() > 0 {
		return harness.SessionConfig{}, false, nil, usageError{fmt.Errorf("run: unexpected argument %q", fs.Arg(0))}
	}
	st.Window, st.Warmup = results.Span(*window), results.Span(*warmup)
	st.Profile = profile.on
	st.Reps, st.RepsAuto = reps.n, reps.auto
	if st.RepsAuto {
		st.RepsMax, st.Precision = *repsMax, precision.value/100
	} else if visited(fs, "reps-max", "precision") {
		return harness.SessionConfig{}, false, nil, usageError{errors.New("run: --reps-max and --precision go with --reps auto")}
	}
	given := harness.Given{Reps: visited(fs, "reps"), Window: visited(fs, "duration"), Warmup: visited(fs, "warmup")}
	search, err := sw.settings()
	if err != nil {
		return harness.SessionConfig{}, false, nil, usageError{fmt.Errorf("run: %w", err)}
	}
	req := harness.SweepRequest{Sweeps: *sw.on, Search: search, SearchGiven: visited(fs, "sweep-from", "sweep-precision", "slo")}
	if st, err = harness.Sweeping(st, req); err != nil {
		return harness.SessionConfig{}, false, nil, withAdvice(err)
	}
	if st.Methods, err = harness.OwnMethods(st, given); err != nil {
		return harness.SessionConfig{}, false, nil, withAdvice(err)
	}
	if *resume {
		if st, err = resumable(fs, *out, st.Session); err != nil {
			return harness.SessionConfig{}, false, nil, err
		}
		if err := sameHosts(*out, st, *hf.file != ""); err != nil {
			return harness.SessionConfig{}, false, nil, err
		}
		fmt.Fprintf(stderr, "resuming session %s\n", st.Session)
	}

	var found harness.Finder // the proxies: here, or where the session runs them
	if *hf.file != "" && !dryRun {
		checks = checkedHosts(hc, &st)
		found = harness.ProxyHostFinder(checks, hc.Hosts)
	}
	if cfg, err = harness.Configure(st, *out, *resume, hc, found); err != nil {
		return cfg, false, nil, withAdvice(err)
	}
	return cfg, dryRun, checks, nil
}

// execute runs the session of cfg's schedule, sched, and returns the path
// of its file; an interrupted session says how to continue it.
func execute(cfg harness.SessionConfig, sched *harness.Schedule, stderr io.Writer) (string, error) {
	hc := cfg.Host
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	s, err := harness.NewSession(ctx, sched)
	if err != nil {
		return "", withAdvice(err)
	}
	execErr := s.Execute(ctx)
	closeErr := s.Close()
	if execErr != nil {
		if lost := errors.Is(execErr, host.ErrHostLost); lost || ctx.Err() != nil {
			again := fmt.Sprintf("sudo bench run --resume --session %s --out %s", cfg.Session, shellWord(cfg.OutDir))
			if hc.Prefix != host.DefaultPrefix {
				again += " --prefix " + hc.Prefix
			}
			if hc.CgroupParent != "" {
				again += " --cgroup-parent " + hc.CgroupParent
			}
			again += hostsArgs(cfg.CommandLine)
			if lost {
				fmt.Fprintf(stderr, "\nstopped: %v; the runs done are in %s; once the host is back, continue with: %s\n", execErr, s.CSVPath, again)
				return "", errors.Join(execErr, closeErr)
			}
			fmt.Fprintf(stderr, "\ninterrupted: the runs done are in %s; continue with: %s\n", s.CSVPath, again)
			return "", errors.Join(errors.New("interrupted"), closeErr)
		}
		return "", errors.Join(execErr, closeErr)
	}
	return s.CSVPath, closeErr
}

// summarize prints the tables of the session file at csvPath, writes its
// page beside it, and fails when any of its runs failed.
func summarize(stdout, stderr io.Writer, csvPath, session string) error {
	fmt.Fprintf(stderr, "session written to %s\n\n", csvPath)
	rows, err := results.ReadFiles([]string{csvPath})
	if err != nil {
		return err
	}
	files, err := results.ReadMetas([]string{csvPath})
	if err != nil {
		return err
	}
	opt := report.Options{Session: session, Files: files}
	tables, err := report.Tables(rows, opt)
	if err != nil {
		return err
	}
	if err := (report.Markdown{}).Write(stdout, report.Document{Setups: report.Setups(rows, files, opt), Tables: tables}); err != nil {
		return err
	}
	report.WriteNoisy(stderr, tables)
	page := results.PagePath(csvPath)
	if err := writePage(page, []string{csvPath}, rows, report.Options{Session: session}); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "page written to %s\n", page)
	failed := 0
	for _, r := range rows {
		if r.Status != results.OK {
			failed++
		}
	}
	if failed > 0 {
		return failedRunsError{failed: failed, runs: len(rows)}
	}
	return nil
}

// repsFlag is --reps: a number of repetitions, or auto.
type repsFlag struct {
	n    int
	auto bool
}

func (r *repsFlag) String() string {
	if r == nil {
		return ""
	}
	if r.auto {
		return "auto"
	}
	return strconv.Itoa(r.n)
}

func (r *repsFlag) Set(s string) error {
	if s == "auto" {
		r.n, r.auto = harness.AutoMinReps, true
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return fmt.Errorf("want a number of repetitions of 1 or more, or auto; got %q", s)
	}
	r.n, r.auto = n, false
	return nil
}

// visited reports whether any of the named flags was given.
func visited(fs *flag.FlagSet, names ...string) bool {
	found := false
	fs.Visit(func(f *flag.Flag) { found = found || slices.Contains(names, f.Name) })
	return found
}

// resumeFlags are the flags a --resume command may give: what names the
// session and how the host is set up. The rest come from the session's
// own settings, so that the runs it adds are like the ones it has.
var resumeFlags = map[string]bool{"resume": true, "session": true, "out": true, "dry-run": true, "prefix": true, "cgroup-parent": true,
	"hosts": true, "ssh-config": true, "accept-new-host-keys": true}

// resumable returns the settings of the session to resume, refusing flags
// that would change them.
func resumable(fs *flag.FlagSet, out, id string) (results.Settings, error) {
	var bad []string
	fs.Visit(func(f *flag.Flag) {
		if !resumeFlags[f.Name] {
			bad = append(bad, "--"+f.Name)
		}
	})
	if len(bad) > 0 {
		return results.Settings{}, usageError{fmt.Errorf("--resume continues a session with its own settings; leave out %s", strings.Join(bad, ", "))}
	}
	st, err := harness.Resumable(out, id)
	switch {
	case errors.Is(err, harness.ErrNoSession) && id == "":
		return st, usageError{fmt.Errorf("--resume: %w; name one with --session", err)}
	case errors.Is(err, harness.ErrNoSession): // --session or --out names none
		return st, usageError{fmt.Errorf("--resume: %w", err)}
	case err != nil:
		return st, fmt.Errorf("--resume: %w", err)
	}
	return st, nil
}

// withAdvice adds to an error of the harness what the user can do.
func withAdvice(err error) error {
	var missing *harness.MissingError
	switch {
	case errors.As(err, &missing):
		return fmt.Errorf("%w (sudo make deps, or %s)", err, missing.Install)
	case errors.Is(err, harness.ErrSessionExists):
		return fmt.Errorf("%w: pick another --session or continue it with --resume", err)
	case errors.Is(err, host.ErrPrefixBusy):
		return fmt.Errorf("%w: wait for it to end, or stop it and run 'sudo bench clean'", err)
	case errors.Is(err, scenarios.ErrNoScenario):
		return fmt.Errorf("%w (bench list prints them all)", err)
	}
	return err
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// onOff is a flag of two values, off and on.
type onOff struct{ on bool }

func (o *onOff) String() string {
	if o.on {
		return "on"
	}
	return "off"
}

func (o *onOff) Set(v string) error {
	switch v {
	case "on":
		o.on = true
	case "off":
		o.on = false
	default:
		return fmt.Errorf("%q: want off or on", v)
	}
	return nil
}

// runHosts puts the session's roles on the hosts of the file the flags
// name: what a hosts file cannot go with yet is refused.
func runHosts(fs *flag.FlagSet, hf hostsFlags, hc host.Config, sweep bool) (host.Config, error) {
	for _, f := range []string{"cpus", "cgroup-parent"} {
		if visited(fs, f) {
			return hc, usageError{fmt.Errorf("run: --%s and --hosts: the hosts file gives each host's CPUs (cpus=), and each host places its roles in cgroups of its own", f)}
		}
	}
	if sweep {
		return hc, usageError{errors.New("run: --sweep runs on one machine only for now, not with --hosts")}
	}
	h, err := hf.read()
	if err != nil {
		return hc, err
	}
	hc.Hosts, hc.SSHOf = h, hf.sshOf
	return hc, nil
}

// checkedHosts checks a session's hosts, as bench check --hosts does,
// and labels the session by its proxy's host where st has no label.
func checkedHosts(hc host.Config, st *results.Settings) []host.CheckItem {
	checks := harness.HostChecks(context.Background(), hc.Hosts, hc.SSHOf)
	if st.Machine == "" {
		st.Machine = harness.HostsLabel(checks, hc.Hosts)
	}
	return checks
}

// hostsReady reads the checks of a session's hosts, items (as bench
// check --hosts makes them), and refuses the hosts, naming each that lacks what the session needs: the
// programs of its roles, and the proxies of its columns on the proxy's.
func hostsReady(stderr io.Writer, items []host.CheckItem, hc host.Config, cols []proxies.Column) error {
	var failed []string
	for _, it := range items {
		if !it.OK && it.Required {
			failed = append(failed, it.Name+": "+it.Detail)
		}
	}
	lacks, err := harness.HostsLack(context.Background(), items, hc.Hosts, hc.SSHOf, cols)
	if err != nil && len(failed) == 0 {
		failed = append(failed, err.Error())
	}
	for _, lack := range lacks {
		failed = append(failed, lack+" (install it there, or leave the column out with --proxy)")
	}
	if len(failed) > 0 {
		return &inputerr.Error{File: hc.Hosts.Name, Err: fmt.Errorf("a session cannot use these hosts:\n  %s", strings.Join(failed, "\n  "))}
	}
	fmt.Fprintf(stderr, "hosts: %d reached, each has what its roles need\n", len(hc.Hosts.Destinations()))
	return nil
}

// hostsArgs are the flags of a command line that put a session on hosts
// of their own, for the command that continues it: " --hosts FILE ...".
func hostsArgs(cmdline []string) string {
	var out string
	for i := 0; i < len(cmdline); i++ {
		name, value, inline := strings.Cut(strings.TrimLeft(cmdline[i], "-"), "=")
		switch {
		case !strings.HasPrefix(cmdline[i], "-"):
		case name == "accept-new-host-keys":
			out += " " + cmdline[i]
		case name == "hosts" || name == "ssh-config":
			if !inline && i+1 < len(cmdline) {
				i++
				value = cmdline[i]
			}
			out += " --" + name + " " + shellWord(value)
		}
	}
	return out
}

// safeWord is what a shell reads as one word as it is.
var safeWord = regexp.MustCompile(`^[A-Za-z0-9@%_+=:,./-]+$`)

// shellWord is s as a shell reads it back as one word: as it is, or in
// single quotes.
func shellWord(s string) string {
	if safeWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// sameHosts refuses to resume a session across hosts of their own on
// this machine, and one of this machine across hosts (hosts: whether
// --hosts is given): its rows would mix two setups.
func sameHosts(out string, st results.Settings, hosts bool) error {
	_, metaPath := harness.SessionPaths(out, st.Machine, st.Session)
	m, err := results.ReadMeta(metaPath)
	if err != nil {
		return nil // Resumable read it; a file gone since is the session's to say
	}
	switch {
	case len(m.Hosts) > 0 && !hosts:
		return usageError{fmt.Errorf("--resume: session %s ran on hosts of their own: give them again with --hosts", st.Session)}
	case len(m.Hosts) == 0 && hosts:
		return usageError{fmt.Errorf("--resume: session %s ran on one machine: leave out --hosts", st.Session)}
	}
	return nil
}

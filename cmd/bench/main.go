// Command bench measures forward proxies and TCP relays in network
// namespaces and renders the tables of what it measured.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"bench/harness/mix"
	"bench/inputerr"
	"bench/results"
)

// command is a subcommand: it writes its results to stdout, its progress
// and warnings to stderr, and returns an error for main to print.
type command struct {
	name    string
	summary string
	run     func(stdout, stderr io.Writer, args []string) error
}

var commands []command

func init() {
	commands = []command{
		{"run", "measure: every scenario x every proxy x N repetitions (root)", cmdRun},
		{"report", "render the median tables from session CSV files", cmdReport},
		{"compare", "compare old sessions with new ones: changes, and whether they are real", cmdCompare},
		{"history", "file a session in the history that bench trend reads", cmdHistory},
		{"profile", "print the functions of most self time in a run's CPU profile", cmdProfile},
		{"trend", "find the change points of each cell over a history of sessions", cmdTrend},
		{"list", "list the scenario catalog and the proxy columns found", cmdList},
		{"check", "say what is missing on this machine; changes nothing", cmdCheck},
		{"mix", "open many connections through a proxy and run checked exchanges on them (JSON)", cmdMix},
		{"clean", "remove what a killed session left behind (root)", cmdClean},
		{"agent", "what a session runs on a host of its own over ssh; not for direct use", cmdAgent},
		{"version", "print bench's version and the commit it was built from", cmdVersion},
	}
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "bench measures forward proxies and TCP relays.\n\nUsage:\n  bench <command> [flags]\n\nCommands:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun 'bench <command> -h' for a command's flags and what its exit status says.\n")
}

// errUsage is returned after usage has been printed; main exits 2.
var errUsage = errors.New("usage")

// usageError is a wrong command line: main prints it and exits 2.
type usageError struct{ error }

func dispatch(stdout, stderr io.Writer, args []string) error {
	if len(args) == 0 {
		usage(stderr)
		return errUsage
	}
	if helpAsked(args[0]) || args[0] == "help" {
		usage(stdout)
		return nil
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(stdout, stderr, args[1:])
		}
	}
	usage(stderr)
	return usageError{fmt.Errorf("unknown command %q", args[0])}
}

// helpAsked reports whether arg asks for help: -h, -help, --help.
func helpAsked(arg string) bool { return arg == "-h" || arg == "-help" || arg == "--help" }

// subcommand takes the one subcommand sub of command cmd (bench history
// add, bench profile top) from the front of args and returns the rest;
// help is true where help was asked for instead (and printed), and a
// missing or unknown subcommand is a usage error.
func subcommand(fs *flag.FlagSet, cmd, sub string, args []string) (rest []string, help bool, err error) {
	switch {
	case len(args) > 0 && args[0] == sub:
		return args[1:], false, nil
	case len(args) > 0 && helpAsked(args[0]):
		fs.Usage()
		return nil, true, nil
	case len(args) > 0:
		fs.Usage()
		return nil, false, usageError{fmt.Errorf("%s: unknown subcommand %q: want %s", cmd, args[0], sub)}
	default:
		fs.Usage()
		return nil, false, usageError{fmt.Errorf("%s: want a subcommand: %s", cmd, sub)}
	}
}

// The exit statuses of bench (README.md, "Exit status"; each command's -h).
const (
	exitOK         = 0 // done; help, when asked for, too
	exitError      = 1 // failed: what each command's help says
	exitUsage      = 2 // a wrong command line, or an input file that cannot be read or is invalid
	exitFailedRuns = 3 // bench run: the session completed, and some of its runs failed
)

// failures says what exit status 1 (and bench run's 3) means of each
// command, for its help; 0 and 2 mean the same for every one.
var failures = map[string][]exitMeaning{
	"run": {
		{exitError, "the session could not complete: interrupted or a host of its own lost (the --resume command that continues it is printed), or the host could not be set up"},
		{exitFailedRuns, "the session completed but some of its runs failed: its file and tables are whole, the failed runs listed under their tables"},
	},
	"report":  {{exitError, "the tables or the page could not be rendered or written"}},
	"compare": {{exitError, "with --fail-over, a real change for the worse past it, or a cell whose new runs all failed: the cells are named after the tables"}},
	"history": {{exitError, "the session could not be copied into the history (the folder being filled is removed)"}},
	"trend":   {{exitError, "with --fail-new, the newest session of a machine revealed a change for the worse past it: the changes are named after the text"}},
	"list":    {{exitError, "the listing could not be written"}},
	"check":   {{exitError, "a session cannot run here: a required check failed"}},
	"mix":     {{exitError, "the mix could not run (its connections could not be opened, the proxy failed it), or its origin could not serve"}},
	"mix tls": {{exitError, "a connection failed to connect or handshake, or the command after -- failed"}},
	"clean":   {{exitError, "something left behind could not be removed"}},
	"agent":   {{exitError, "what the session made on the host could not all be removed"}},
	"version": nil,
}

// exitMeaning is what an exit status says of a command.
type exitMeaning struct {
	status  int
	meaning string
}

// exitHelp writes the exit statuses of the command named name.
func exitHelp(w io.Writer, name string) {
	all := append([]exitMeaning{{exitOK, "done, and when help is asked for (-h, --help)"}}, failures[name]...)
	all = append(all, exitMeaning{exitUsage, "a wrong command line, or an input file that cannot be read or is invalid (named with its line)"})
	slices.SortStableFunc(all, func(a, b exitMeaning) int { return a.status - b.status })
	fmt.Fprintf(w, "\nExit status:\n")
	for _, e := range all {
		fmt.Fprintf(w, "  %d  %s\n", e.status, e.meaning)
	}
}

// failedRunsError is bench run's end when the session completed with
// failed runs: its files and tables are whole, the failed runs listed
// under their tables.
type failedRunsError struct{ failed, runs int }

func (e failedRunsError) Error() string {
	return fmt.Sprintf("the session completed with %d of its %d runs failed (listed under their tables)", e.failed, e.runs)
}

// terminal is text for a terminal: its lines as they are, and in each
// any rune a label may not hold (an escape, a carriage return, a tab)
// written visible (results.Visible), so that a name or a note of a file,
// in an error or a warning, cannot steer the terminal.
func terminal(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = results.Visible(l)
	}
	return strings.Join(lines, "\n")
}

// exitStatus is the status bench exits with after err, which it prints to
// stderr first unless it was help or usage already printed. Input refused
// is one status whoever refused it: the command line as bench parses it
// (usageError), or a setting, an option or a file as the packages below
// take them (inputerr.Error).
func exitStatus(err error, stderr io.Writer) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.Is(err, errUsage):
		return exitUsage
	}
	fmt.Fprintf(stderr, "bench: %s\n", terminal(flagText(err)))
	switch {
	case errors.As(err, new(usageError)), errors.As(err, new(*inputerr.Error)):
		return exitUsage
	case errors.As(err, new(failedRunsError)):
		return exitFailedRuns
	}
	return exitError
}

func main() {
	os.Exit(exitStatus(dispatch(os.Stdout, os.Stderr, os.Args[1:]), os.Stderr))
}

// hiddenFlags are the flags that are no part of the command line people
// use, left out of the help: bench mix's --worker, which it gives the
// processes it runs itself.
var hiddenFlags = map[string]bool{mix.WorkerFlag: true}

// newFlagSet returns a flag set for a subcommand that reports its own
// errors through the returned error rather than by exiting.
func newFlagSet(name string, stderr io.Writer, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet("bench "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: bench %s %s\n\nFlags:\n", name, synopsis)
		shown := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
		shown.SetOutput(stderr)
		fs.VisitAll(func(f *flag.Flag) {
			if !hiddenFlags[f.Name] {
				shown.Var(f.Value, f.Name, f.Usage)
				shown.Lookup(f.Name).DefValue = f.DefValue
			}
		})
		shown.PrintDefaults()
		exitHelp(stderr, name)
	}
	return fs
}

// parseFlags parses a subcommand's flags: a flag it does not know or a bad
// value is a wrong command line (usageError), help asked for is
// flag.ErrHelp.
func parseFlags(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		return usageError{err}
	}
	return err
}

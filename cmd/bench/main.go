// Command bench measures forward proxies and TCP relays in network
// namespaces and renders the tables of what it measured.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
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
		{"list", "list the scenario catalog and the proxy columns found", cmdList},
		{"check", "say what is missing on this machine; changes nothing", cmdCheck},
		{"mix", "open many connections through a proxy and run checked exchanges on them (JSON)", cmdMix},
		{"clean", "remove what a killed session left behind (root)", cmdClean},
	}
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "bench measures forward proxies and TCP relays.\n\nUsage:\n  bench <command> [flags]\n\nCommands:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun 'bench <command> -h' for a command's flags.\n")
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
	switch args[0] {
	case "-h", "-help", "--help", "help":
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

func main() {
	err := dispatch(os.Stdout, os.Stderr, os.Args[1:])
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp), errors.Is(err, errUsage):
		os.Exit(2)
	case errors.As(err, new(usageError)):
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(2)
	default:
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}

// newFlagSet returns a flag set for a subcommand that reports its own
// errors through the returned error rather than by exiting.
func newFlagSet(name string, stderr io.Writer, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet("bench "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: bench %s %s\n\nFlags:\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

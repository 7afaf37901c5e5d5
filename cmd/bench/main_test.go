package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"bench/harness/host"
	"bench/inputerr"
	"bench/internal/testenv"
	"bench/results"
)

// TestMain lets the test binary be bench for the programs a session
// starts of its own: the mix scenarios run `bench mix` as the
// session's executable, which in a test is this binary, and a test runs
// `bench history add` in a process of its own environment. Before the
// tests it cleans up after the test binaries that were killed.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && (os.Args[1] == "mix" || os.Args[1] == "history" || os.Args[1] == host.AgentCommand) {
		main()
		os.Exit(0)
	}
	if spec, ok := os.LookupEnv(orchestrateEnv); ok {
		orchestrate(spec)
	}
	testenv.CleanKilled(host.CleanKilled)
	os.Exit(m.Run())
}

// Help asked for, of bench or of any subcommand, exits 0, shows no
// hidden flag and, of a subcommand, what its exit statuses mean; a wrong
// command line exits 2.
func TestHelpExits(t *testing.T) {
	cmds := [][]string{{}, {"mix", "tls"}, {"history", "add"}, {"profile", "top"}}
	for _, c := range commands {
		cmds = append(cmds, []string{c.name})
	}
	for _, c := range cmds {
		for _, h := range []string{"-h", "-help", "--help"} {
			var stdout, stderr bytes.Buffer
			err := dispatch(&stdout, &stderr, append(slices.Clone(c), h))
			name := strings.Join(append(slices.Clone(c), h), " ")
			if got := exitStatus(err, io.Discard); got != exitOK {
				t.Errorf("bench %s: exit %d (%v); want %d", name, got, err, exitOK)
			}
			help := stdout.String() + stderr.String()
			if !strings.Contains(help, "Usage") && !strings.Contains(help, "usage") {
				t.Errorf("bench %s printed no usage:\n%s", name, help)
			}
			if len(c) > 0 && (!strings.Contains(help, "\nExit status:\n  0  done") || !strings.Contains(help, "\n  2  a wrong command line, or an input file")) {
				t.Errorf("bench %s says nothing of its exit statuses 0 and 2:\n%s", name, help)
			}
			for f := range hiddenFlags {
				if strings.Contains(help, "-"+f) {
					t.Errorf("bench %s shows the hidden flag --%s:\n%s", name, f, help)
				}
			}
		}
		if len(c) == 0 {
			continue
		}
		err := dispatch(io.Discard, io.Discard, append(slices.Clone(c), "--no-such-flag"))
		if got := exitStatus(err, io.Discard); got != exitUsage {
			t.Errorf("bench %s --no-such-flag: exit %d (%v); want %d", strings.Join(c, " "), got, err, exitUsage)
		}
	}
}

// The exit statuses: an error 1, a wrong command line or input refused
// 2, a session that completed with failed runs 3, and what is printed of
// each.
func TestExitStatus(t *testing.T) {
	for _, c := range []struct {
		err    error
		status int
		says   string
	}{
		{nil, exitOK, ""},
		{flag.ErrHelp, exitOK, ""},
		{errUsage, exitUsage, ""},
		{usageError{errors.New("run: unexpected argument")}, exitUsage, "bench: run: unexpected argument\n"},
		{fmt.Errorf("run: %w", errors.New("no root")), exitError, "bench: run: no root\n"},
		// a file's place refused, however deep in the error
		{&inputerr.Error{File: "a.csv", Line: 3, Err: errors.New(`column "bytes": "-1" is negative`)}, exitUsage, "bench: a.csv:3: column \"bytes\": \"-1\" is negative\n"},
		{fmt.Errorf("resume: %w", &inputerr.Error{File: "a.csv", Err: results.ErrNoRuns}), exitUsage, "bench: resume: a.csv: " + results.ErrNoRuns.Error() + "\n"},
		// a setting refused, of no file
		{inputerr.Bad(errors.New("a window of -5s: need at least 1s")), exitUsage, "bench: a window of -5s: need at least 1s\n"},
		{failedRunsError{failed: 2, runs: 54}, exitFailedRuns, "bench: the session completed with 2 of its 54 runs failed (listed under their tables)\n"},
	} {
		var stderr bytes.Buffer
		if got := exitStatus(c.err, &stderr); got != c.status || stderr.String() != c.says {
			t.Errorf("%v: exit %d, %q; want %d, %q", c.err, got, stderr.String(), c.status, c.says)
		}
	}
}

// TestFlagHelpOneLine holds each flag's help to one line, its detail in the
// command's usage paragraph: no sentence inside it, no more than a line.
func TestFlagHelpOneLine(t *testing.T) {
	const most = 110
	for _, c := range append(commands, command{name: "mix tls"}) {
		var out bytes.Buffer
		if err := dispatch(&out, &out, append(strings.Fields(c.name), "-h")); err != nil && !errors.Is(err, flag.ErrHelp) {
			t.Fatalf("bench %s -h = %v", c.name, err)
		}
		after := false // the line before was a flag's help
		for _, line := range strings.Split(out.String(), "\n") {
			if !strings.HasPrefix(line, "    \t") {
				after = false
				continue
			}
			if after {
				t.Errorf("bench %s -h: flag help runs to a second line %q", c.name, line)
			}
			after = true
			help := strings.TrimSpace(line)
			if i := strings.LastIndex(help, " (default "); i > 0 && strings.HasSuffix(help, ")") {
				help = help[:i] // the default flag adds
			}
			if len(help) > most || strings.Contains(strings.ReplaceAll(help, "e.g. ", ""), ". ") {
				t.Errorf("bench %s -h: flag help %q: want one line of at most %d characters, no sentence inside; its detail goes in the usage paragraph", c.name, help, most)
			}
		}
	}
}

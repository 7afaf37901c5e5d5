// Package testenv says what a test needs from the machine. Outside CI a
// test whose need is not met is skipped with the reason; in CI (CI set in
// the environment, as .ci/run runs) it fails, since CI installs
// everything and a skip there would hide a missing install step.
package testenv

import (
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// testPackages is the table of the programs only the tests run, which
// make test-deps installs (scripts/deps --tests).
//
//go:embed packages.txt
var testPackages string

// installer is the command that installs program name: make test-deps
// for a program of the tests alone, make deps for the rest.
func installer(name string) string {
	for line := range strings.Lines(testPackages) {
		if f := strings.Fields(line); len(f) > 0 && !strings.HasPrefix(f[0], "#") && f[0] == name {
			return "sudo make test-deps"
		}
	}
	return "sudo make deps"
}

// Skip skips the test with the reason, or fails it in CI.
func Skip(t testing.TB, format string, args ...any) {
	t.Helper()
	reason := fmt.Sprintf(format, args...)
	if os.Getenv("CI") != "" {
		t.Fatalf("CI lacks what this test needs: %s", reason)
	}
	t.Skip(reason)
}

// NeedRoot skips (or fails in CI) unless the test runs as root.
func NeedRoot(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() != 0 {
		Skip(t, "needs root: %s", why)
	}
}

// NeedProgram skips (or fails in CI) unless name is on PATH.
func NeedProgram(t testing.TB, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		Skip(t, "%s not installed (%s): %v", name, installer(name), err)
	}
}

// PrefixStart starts every prefix the tests give the harness's names
// (namespaces, links, cgroups, lock and run directory), and no session's.
const PrefixStart = "bt-"

// Prefix returns a prefix of the harness's names that no other test
// shares: PrefixStart and six hex digits.
func Prefix(t testing.TB) string {
	b := make([]byte, 3)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return PrefixStart + hex.EncodeToString(b) + "-"
}

// CleanKilled, run by a TestMain before the tests, cleans up (with
// clean, the harness's host.CleanKilled) after the test binaries that
// were killed: a killed binary cleans nothing, and its sessions'
// namespaces, cgroups and processes (spinners at nice -20 among them)
// would stay and slow every test after them. It needs root, as they
// did; it exits the binary if what they left cannot be removed.
func CleanKilled(clean func(start string, age time.Duration) ([]string, error)) {
	if os.Geteuid() != 0 {
		return
	}
	// A minute: a prefix's lock file is opened, then locked, by a test of
	// another binary that runs beside this one.
	removed, err := clean(PrefixStart, time.Minute)
	if len(removed) > 0 {
		fmt.Fprintf(os.Stderr, "removed what killed tests left: %s\n", strings.Join(removed, ", "))
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "cleaning up after killed tests: %v\n", err)
		os.Exit(1)
	}
}

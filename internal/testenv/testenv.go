// Package testenv says what a test needs from the machine. Outside CI a
// test whose need is not met is skipped with the reason; in CI (CI set in
// the environment, as .ci/run runs) it fails, since CI installs
// everything and a skip there would hide a missing install step.
package testenv

import (
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
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

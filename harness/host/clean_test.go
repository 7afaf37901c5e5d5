package host

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"bench/internal/testenv"
)

// ownNames returns every name a prefix makes: namespaces and cgroups,
// links, its lock, its systemd scope and a run directory.
func ownNames(prefix string) []string {
	var names []string
	for _, r := range roles {
		names = append(names, prefix+string(r))
	}
	names = append(names, linkNames(prefix)...)
	return append(names, filepath.Base(lockPath(prefix)), scopeUnit(prefix), prefix+"run-0123abcd")
}

// No name of a prefix is another prefix's, nor one of its run
// directories; a prefix whose names could be another's is refused.
func TestPrefixesOwnTheirNames(t *testing.T) {
	for _, p := range []string{"bench", "bench-p", "bench-run", "x", "Bench-", "-x-", "abcdefghijklm-"} {
		if validatePrefix(p) == nil {
			t.Errorf("prefix %q accepted; want it refused", p)
		}
	}
	valid := []string{DefaultPrefix, "bench-run-", "bench-p-", "bench-c-", "bench-pc-", "bench-lock-",
		"session-", "b-run-run-", "b-", "0123abcd-", "run-0123abcd-", "abcdefghijkl-"}
	base := t.TempDir()
	owner := map[string]string{}
	for _, p := range valid {
		if err := validatePrefix(p); err != nil {
			t.Errorf("prefix %q refused: %v", p, err)
		}
		for _, n := range ownNames(p) {
			if other, ok := owner[n]; ok {
				t.Errorf("%s is a name of prefix %q and of %q", n, other, p)
			}
			owner[n] = p
			if err := os.WriteFile(filepath.Join(base, n), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, p := range valid {
		if got, want := runDirs(base, p), []string{filepath.Join(base, p+"run-0123abcd")}; !slices.Equal(got, want) {
			t.Errorf("run directories of %q: %v; want %v", p, got, want)
		}
	}
}

// bench clean of a prefix leaves the run directory and the lock of a
// prefix that starts with it: "bench-run-"'s of "bench-".
func TestCleanLeavesLongerPrefix(t *testing.T) {
	testenv.NeedRoot(t, "cleans /run and the network namespaces")
	prefix := testPrefix(t)
	other := prefix + "run-"
	runDir := filepath.Join(runBase, other+"run-0123abcd")
	if err := os.Mkdir(runDir, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(runDir); os.Remove(lockPath(other)) })
	if err := os.WriteFile(filepath.Join(runDir, "kept"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lockPath(other), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	removed, err := Clean(prefix)
	if err != nil {
		t.Fatalf("Clean(%q): %v", prefix, err)
	}
	for _, r := range removed {
		if strings.Contains(r, other) {
			t.Errorf("Clean(%q) removed %s, of prefix %q", prefix, r, other)
		}
	}
	for _, p := range []string{filepath.Join(runDir, "kept"), lockPath(other)} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("Clean(%q) removed %s of prefix %q: %v", prefix, p, other, err)
		}
	}
}

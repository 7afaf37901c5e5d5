// Package golden compares what a test rendered with a file under
// testdata, or rewrites the file when the test runs with -update. Every
// golden file of the project goes through it, so one flag rewrites them
// all: go test ./... -update.
package golden

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata with what the tests render")

// Updating reports whether the tests run with -update.
func Updating() bool { return *update }

// Check compares got with the file at path, or writes got there with
// -update. A difference is reported at its first differing line.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (%s writes it)", err, hint(t))
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from what the test rendered (%s rewrites it; review the diff): %s", path, hint(t), FirstDiff(string(got), string(want)))
	}
}

// hint is the command that rewrites the test's golden files.
func hint(t testing.TB) string {
	name, _, _ := strings.Cut(t.Name(), "/")
	return fmt.Sprintf("go test %s -run '^%s$' -update", packageDir(), name)
}

// packageDir is the test's package directory relative to the module's.
func packageDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return "its package"
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if rel, err := filepath.Rel(dir, wd); err == nil {
				return "./" + filepath.ToSlash(rel)
			}
		}
		if filepath.Dir(dir) == dir {
			return wd
		}
	}
}

// FirstDiff describes the first line where got and want part.
func FirstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d:\n got %q\nwant %q", i+1, clip(gl), clip(wl))
		}
	}
	return "no line differs"
}

// clip shortens a long line for a failure message, on a rune boundary.
func clip(s string) string {
	const most = 200
	if len(s) <= most {
		return s
	}
	cut := most
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

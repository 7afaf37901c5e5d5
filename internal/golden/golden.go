// Package golden compares what a test rendered with a file under
// testdata, or rewrites the file when the test runs with -update.
package golden

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// Check compares got with the file at path, or writes got there when
// update is set. hint is the command that rewrites the file, for the
// failure message.
func Check(t testing.TB, path string, got []byte, update bool, hint string) {
	t.Helper()
	if update {
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
		t.Fatalf("%v (%s writes it)", err, hint)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (%s rewrites it):\n--- got\n%s\n--- want\n%s", path, hint, got, want)
	}
}

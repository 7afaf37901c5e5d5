package history

import (
	"bench/inputerr"
	"bench/results"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// The reader of a history's entry takes any file: it reads it or refuses
// it with an inputerr.Error naming it, and reads none larger than results.MaxMeta.
// Its seeds are the generated history's entries.
func FuzzReadEntry(f *testing.F) {
	seeds, err := filepath.Glob("../testdata/history/*/*/" + File)
	if err != nil || len(seeds) == 0 {
		f.Fatalf("no entry of the generated history to seed with: %v", err)
	}
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	dir := f.TempDir()
	path := filepath.Join(dir, File)
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadEntry(dir)
		if ie := (*inputerr.Error)(nil); err != nil && (!errors.As(err, &ie) || ie.File != path) {
			t.Errorf("ReadEntry refused it with %v; want an inputerr.Error naming %s", err, path)
		}
		if err == nil && len(data) > results.MaxMeta {
			t.Errorf("ReadEntry read an entry of %d bytes", len(data))
		}
	})
}

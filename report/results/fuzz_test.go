package results

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The reader of session files takes any file: it reads it or refuses it
// with an error, and every row it reads has a status, mode and group of
// those the columns may hold, and a bound of theirs or none given. go test runs the seeds (the
// report's and the CLI's test files and the reference session); a longer
// run is in the README (Tests).
func FuzzRead(f *testing.F) {
	var files []string
	for _, g := range []string{"../testdata/csv/*.csv", "../../testdata/*/*.csv", "../../data/*.csv"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	if len(files) == 0 {
		f.Fatal("no session files to seed with")
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := read(nil, data, "fuzz.csv")
		if err != nil {
			return
		}
		for _, r := range rows {
			if !slices.Contains(Statuses, r.Status) || !slices.Contains(Modes, r.Mode) || !slices.Contains(Groups, r.Group) ||
				r.Bound != "" && !slices.Contains(Bounds, r.Bound) {
				t.Errorf("line %d read as %+v", r.Line, r)
			}
		}
	})
}

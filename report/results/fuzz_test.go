package results

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The reader of session files takes any file: it reads it or refuses it
// with an error naming the file, and every row it reads has a status,
// mode and group of those the columns may hold, a bound of theirs or none
// given, figures that are finite and not negative, and a run of its own.
// go test runs the seeds (the report's and the CLI's test files and the
// reference session); a longer run is in docs/tests.md.
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
		var rd reader
		if err := rd.read(data, "fuzz.csv"); err != nil {
			if ie := (*InputError)(nil); !errors.As(err, &ie) || ie.File != "fuzz.csv" {
				t.Errorf("read refused the file with %v; want an InputError naming fuzz.csv", err)
			}
			return
		}
		if len(rd.rows) == 0 {
			t.Errorf("read a file of no runs without an error")
		}
		seen := map[RunID]bool{}
		for _, r := range rd.rows {
			if !slices.Contains(Statuses, r.Status) || !slices.Contains(Modes, r.Mode) || !slices.Contains(Groups, r.Group) ||
				r.Bound != "" && !slices.Contains(Bounds, r.Bound) {
				t.Errorf("line %d read as %+v", r.Line, r)
			}
			for _, v := range []float64{r.Seconds, r.P50Ms, r.P99Ms, r.P999Ms, r.CPUProxy, r.CPUClient, r.CPUOrigin,
				r.BusyProxy, r.BusyClient, r.BusyOrigin, r.ThreadProxy, r.ThreadClient, r.ThreadOrigin, r.ThrottledS,
				float64(r.Requests), float64(r.Bytes), float64(r.Errors), float64(r.Timeouts), float64(r.PeakMemBytes),
				float64(r.ThrottledPeriods), float64(r.SplicePipes), float64(r.Rep)} {
				if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
					t.Errorf("line %d read with a figure %v: %+v", r.Line, v, r)
				}
			}
			if seen[r.ID()] {
				t.Errorf("line %d read as a run read before: %+v", r.Line, r)
			}
			seen[r.ID()] = true
		}
	})
}

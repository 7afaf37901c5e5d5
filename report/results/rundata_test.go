package results

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// A run's data written beside a session file is read back by the run it
// names; a session without a runs directory has none, and a bad file is
// an error naming it.
func TestRunData(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "arm-m4-s.csv")
	if got := RunsDir(csv); got != filepath.Join(dir, "arm-m4-s.runs") {
		t.Errorf("RunsDir(%q) = %q", csv, got)
	}
	if err := os.Mkdir(RunsDir(csv), 0o755); err != nil {
		t.Fatal(err)
	}
	row := Row{Machine: "ARM (M4)", Session: "s", Proxy: "nginx", Mode: MixHTTP, Load: "mix-3k", Rep: 2}
	d := RunData{RunID: row.ID(), Started: time.Date(2026, 10, 13, 18, 0, 0, 0, time.UTC),
		Intervals: []Interval{{Seconds: 1, Requests: 3000, Bytes: 1.3e8}, {Seconds: 0.5, Requests: 1500, Bytes: 6.5e7}},
		CPU:       map[string][]float64{"proxy": {0.9, 0.95}, "client": {0.3, 0.3}, "origin": {0.2, 0.1}},
		Histogram: "HISTFAAAA"}
	if err := WriteRunData(RunsDir(csv), "0007-nginx-mix-http-3k-2", d); err != nil {
		t.Fatal(err)
	}
	got, err := ReadRunData([]string{csv, filepath.Join(dir, "none.csv")})
	if err != nil {
		t.Fatal(err)
	}
	// what was read names where the run's files are
	d.Files = filepath.Join(RunsDir(csv), "0007-nginx-mix-http-3k-2")
	if len(got) != 1 || !reflect.DeepEqual(got[row.ID()], &d) {
		t.Errorf("ReadRunData = %+v; want %+v", got, d)
	}
	// 3000 exchanges in the first second: 3 k req/s.
	if v := d.Intervals[0].Of(KReqs); v != 3 {
		t.Errorf("Interval.Of(k req/s) = %v; want 3", v)
	}
	bad := filepath.Join(RunsDir(csv), "0008-x"+RunDataSuffix)
	if err := os.WriteFile(bad, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRunData([]string{csv}); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("ReadRunData of a bad file: %v; want an error naming %s", err, bad)
	}
}

package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seedCaptures adds to f the captured outputs of a tool under
// testdata/captured whose names begin with prefix.
func seedCaptures(f *testing.F, prefix string) {
	files, err := filepath.Glob(filepath.Join("testdata", "captured", prefix+"*"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no captures %s*: %v", prefix, err)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// fuzzParse holds a driver's parser to what it must do with any output:
// return, and when it accepts it, a measurement of no negative count and a
// window of some length.
func fuzzParse(f *testing.F, d Driver, prefix string) {
	seedCaptures(f, prefix)
	f.Fuzz(func(t *testing.T, out []byte) {
		m, err := d.Parse(out)
		if err != nil {
			return
		}
		if m.Requests < 0 || m.Bytes < 0 || m.Errors < 0 || m.Timeouts < 0 || !(m.Seconds > 0) {
			t.Errorf("%s accepted %q as %+v", d.Tool(), clip(out), m)
		}
	})
}

func clip(b []byte) string {
	s := string(b)
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

// The parsers of what the load tools print. go test runs their seeds,
// the captures; a longer run is in docs/tests.md.
func FuzzWrkParse(f *testing.F)    { fuzzParse(f, Wrk{}, "wrk-") }
func FuzzIperf3Parse(f *testing.F) { fuzzParse(f, Iperf3{}, "iperf3-") }
func FuzzMixParse(f *testing.F)    { fuzzParse(f, Mix{}, "mix-") }

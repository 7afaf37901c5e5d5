package profile

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseScript holds the parser of perf script's output to what it
// must do with any input: return, and when it accepts it, samples of a
// positive period whose profile pprof accepts and whose top view counts
// them all. go test runs its seeds, the captures.
func FuzzParseScript(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "captured", "perf-*"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no captures perf-*: %v", err)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		s, err := ParseScript(bytes.NewReader(out))
		if err != nil {
			return
		}
		for _, x := range s {
			if x.Period <= 0 || x.PID < 0 || x.TID < 0 {
				t.Fatalf("ParseScript accepted a sample %+v", x)
			}
		}
		p := Proto(s)
		if err := p.CheckValid(); err != nil {
			t.Fatalf("Proto of %d samples: %v", len(s), err)
		}
		if _, n := Top(p, TopN); n != int64(len(s)) {
			t.Fatalf("Top counted %d samples of %d", n, len(s))
		}
		var b bytes.Buffer
		if err := Folded(&b, s); err != nil {
			t.Fatal(err)
		}
	})
}

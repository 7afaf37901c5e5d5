package profile

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/results"
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

// FuzzParseFolded holds the reader of folded stacks to what it must do
// with any input: return, and when it accepts it, stacks of a positive
// count whose counts come to at most 2^53, each line within
// MaxFoldedLine, whose top view counts them all. go test runs its seeds,
// the captures' folded stacks and the committed corpus.
func FuzzParseFolded(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "parsed", "*.folded"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no folded stacks: %v", err)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := ParseFolded(bytes.NewReader(in))
		if err != nil {
			return
		}
		var all int64
		for _, x := range s {
			if x.Count <= 0 || x.Count > results.MaxCount-all {
				t.Fatalf("ParseFolded accepted a stack %+v after %d samples", x, all)
			}
			all += x.Count
			if n := len(strings.Join(x.Frames, ";")); n > MaxFoldedLine {
				t.Fatalf("ParseFolded accepted a stack of %d bytes", n)
			}
		}
		if _, n := TopFolded(s, TopN); n != all {
			t.Fatalf("TopFolded counted %d samples of %d", n, all)
		}
	})
}

// FuzzReadProto holds the reader of profiles (bench profile top's) to
// what it must do with any input: return, and when it accepts it, a
// profile whose samples are none negative and at most 2^53 in all,
// which the top view counts. go test runs its seeds, the captures'
// profiles gzipped and not, and the committed corpus.
func FuzzReadProto(f *testing.F) {
	for _, name := range captures {
		p := Proto(readCapture(f, name))
		var gz, raw bytes.Buffer
		if err := p.Write(&gz); err != nil {
			f.Fatal(err)
		}
		if err := p.WriteUncompressed(&raw); err != nil {
			f.Fatal(err)
		}
		f.Add(gz.Bytes())
		f.Add(raw.Bytes())
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		p, err := ReadProto(bytes.NewReader(in))
		if err != nil {
			return
		}
		var all int64
		for _, s := range p.Sample {
			if len(s.Value) == 0 {
				continue
			}
			if v := s.Value[0]; v < 0 || v > results.MaxCount-all {
				t.Fatalf("ReadProto accepted a sample of %d after %d", v, all)
			}
			all += s.Value[0]
		}
		if _, n := Top(p, TopN); n != all {
			t.Fatalf("Top counted %d samples of %d", n, all)
		}
	})
}

// TestMaxSamples: a profile's bound on its samples is every count's bound
// in a session's files.
func TestMaxSamples(t *testing.T) {
	if MaxSamples != results.MaxCount {
		t.Errorf("MaxSamples %d, results.MaxCount %d: a profile's samples are a count of a session's files", int64(MaxSamples), int64(results.MaxCount))
	}
}

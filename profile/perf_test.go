package profile

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"bench/internal/golden"

	"github.com/google/pprof/profile"

	"bench/internal/child"
)

// captures are perf script's outputs of a real perf record on this
// project's machines (-F ScriptFields): dd piping zeros to gzip -1, with
// frame pointers (-g) and with DWARF unwinding (--call-graph dwarf);
// gzip is stripped, libc and the kernel are named.
var captures = []string{"perf-fp-gzip", "perf-dwarf-gzip"}

func readCapture(t testing.TB, name string) []Sample {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "captured", name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := ParseScript(f)
	if err != nil {
		t.Fatalf("ParseScript(%s) = %v", name, err)
	}
	if len(s) == 0 {
		t.Fatalf("ParseScript(%s) read no sample", name)
	}
	return s
}

// TestFoldedGolden folds each capture; the golden files are what a flame
// graph is drawn from.
func TestFoldedGolden(t *testing.T) {
	for _, name := range captures {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Folded(&b, readCapture(t, name)); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "parsed", name+".folded"), b.Bytes())
		})
	}
}

// TestTopGolden prints each capture's top view from its pprof profile,
// written and read back, so that what the files keep is what it shows.
func TestTopGolden(t *testing.T) {
	for _, name := range captures {
		t.Run(name, func(t *testing.T) {
			p := roundTrip(t, Proto(readCapture(t, name)))
			funcs, n := Top(p, TopN)
			var b bytes.Buffer
			if err := WriteTop(&b, funcs, n); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "parsed", name+".top"), b.Bytes())
		})
	}
}

// roundTrip writes p as profile.proto and reads it back, checked.
func roundTrip(t testing.TB, p *profile.Profile) *profile.Profile {
	t.Helper()
	if err := p.CheckValid(); err != nil {
		t.Fatalf("Proto: %v", err)
	}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	q, err := profile.Parse(&b)
	if err != nil {
		t.Fatalf("profile.Parse(Proto) = %v", err)
	}
	return q
}

// TestProtoKeepsSamples holds the profile to the capture: a sample each,
// its count and CPU time, its labels and its frames leaf first.
func TestProtoKeepsSamples(t *testing.T) {
	s := readCapture(t, "perf-fp-gzip")
	p := roundTrip(t, Proto(s))
	if len(p.Sample) != len(s) {
		t.Fatalf("Proto(%d samples) has %d", len(s), len(p.Sample))
	}
	for i, ps := range p.Sample {
		want := []int64{1, s[i].Period}
		if !reflect.DeepEqual(ps.Value, want) {
			t.Errorf("sample %d: Value = %v; want %v", i, ps.Value, want)
		}
		if got := ps.Label["comm"]; !reflect.DeepEqual(got, []string{s[i].Comm}) {
			t.Errorf("sample %d: comm = %v; want %v", i, got, s[i].Comm)
		}
		if got := ps.NumLabel["pid"]; !reflect.DeepEqual(got, []int64{int64(s[i].PID)}) {
			t.Errorf("sample %d: pid = %v; want %v", i, got, s[i].PID)
		}
		var names []string
		for _, l := range ps.Location {
			names = append(names, l.Line[0].Function.Name)
		}
		var want2 []string
		for _, f := range s[i].Stack {
			want2 = append(want2, f.Func)
		}
		if !reflect.DeepEqual(names, want2) {
			t.Errorf("sample %d: frames = %v; want %v", i, names, want2)
		}
	}
}

// TestPprofReadsProto runs go tool pprof -top on a written profile: it
// must read it and name the capture's functions.
func TestPprofReadsProto(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pb.gz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := Proto(readCapture(t, "perf-fp-gzip")).Write(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	out, err := child.CombinedOutput(exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "tool", "pprof", "-top", "-sample_index=samples", path))
	if err != nil {
		t.Fatalf("go tool pprof -top: %v\n%s", err, out)
	}
	for _, want := range []string{"[gzip]", "entry_SYSCALL_64_after_hwframe"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("go tool pprof -top names no %q:\n%s", want, out)
		}
	}
}

func TestParseScript(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Sample
	}{
		// A sample with a kernel frame, a named library's, a stripped
		// binary's and the end of a broken chain.
		{"frames", "gzip 13190/13191    5025125 \n\tffffffff81000130 entry_SYSCALL_64 ([kernel.kallsyms])\n\t  f82ad read (/usr/lib/x86_64-linux-gnu/libc.so.6)\n\t  cc5c [unknown] (/usr/bin/gzip)\n\t     0 [unknown] ([unknown])\n\n",
			[]Sample{{Comm: "gzip", PID: 13190, TID: 13191, Period: 5025125, Stack: []Frame{
				{0xffffffff81000130, "entry_SYSCALL_64", "[kernel.kallsyms]"},
				{0xf82ad, "read", "/usr/lib/x86_64-linux-gnu/libc.so.6"},
				{0xcc5c, "[gzip]", "/usr/bin/gzip"},
				{0, Unknown, Unknown},
			}}}},
		// A command with a space (Chromium's threads), a C++ symbol with
		// spaces and parentheses, two samples and no blank line at the end.
		{"spaces", "Web Content 7/8 10\n\t10 foo(int, char const*) (/usr/lib/libx.so)\n\nx 9/9 20\n\t20 bar (/bin/x)",
			[]Sample{
				{Comm: "Web Content", PID: 7, TID: 8, Period: 10, Stack: []Frame{{0x10, "foo(int, char const*)", "/usr/lib/libx.so"}}},
				{Comm: "x", PID: 9, TID: 9, Period: 20, Stack: []Frame{{0x20, "bar", "/bin/x"}}},
			}},
		// A sample without a call chain.
		{"no chain", "swapper 0/0 10101010\n\n", []Sample{{Comm: "swapper", PID: 0, TID: 0, Period: 10101010}}},
		// A thread perf had no name for, as perf script prints it for a
		// thread that ended before perf read it (seen in a relay run).
		{"unknown thread", ":-1 23268/-1      10101010 \n\tffffffff81000130 entry_SYSCALL_64 ([kernel.kallsyms])\n\n",
			[]Sample{{Comm: ":-1", PID: 23268, TID: -1, Period: 10101010, Stack: []Frame{{0xffffffff81000130, "entry_SYSCALL_64", "[kernel.kallsyms]"}}}}},
		// Nothing recorded.
		{"empty", "", nil},
	}
	for _, tt := range tests {
		got, err := ParseScript(strings.NewReader(tt.in))
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseScript(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseScriptErrors(t *testing.T) {
	tests := []struct {
		in   string
		line int
	}{
		{"\tffff foo (bar)\n", 1},             // a frame before any sample
		{"gzip 1/1\n", 1},                     // no period
		{"gzip 1/1 x\n", 1},                   // a period that is not a number
		{"gzip 1/1 0\n", 1},                   // a period of nothing
		{"gzip 1-1 5\n", 1},                   // no pid/tid
		{"gzip 1/-2 5\n", 1},                  // a tid below perf's -1
		{"gzip 1/1 5\n\tzz foo (bar)\n", 2},   // an address that is not hexadecimal
		{"gzip 1/1 5\n\tff foo bar\n", 2},     // a frame without its mapping
		{"gzip 1/1 5\n\n\tff foo (bar)\n", 3}, // a frame after a sample's end
	}
	for _, tt := range tests {
		_, err := ParseScript(strings.NewReader(tt.in))
		var se *SyntaxError
		if !errors.As(err, &se) || se.Line != tt.line {
			t.Errorf("ParseScript(%q) = %v; want a SyntaxError on line %d", tt.in, err, tt.line)
		}
	}
}

func TestFolded(t *testing.T) {
	s := []Sample{
		{Comm: "a b", Stack: []Frame{{Func: "leaf"}, {Func: "mid;dle"}, {Func: "root"}}},
		{Comm: "x", Stack: nil},
		{Comm: "a b", Stack: []Frame{{Func: "leaf"}, {Func: "mid;dle"}, {Func: "root"}}},
	}
	var b bytes.Buffer
	if err := Folded(&b, s); err != nil {
		t.Fatal(err)
	}
	// Root first, ';' in a name made ':', a stack counted once a line in
	// the order of first appearance.
	want := "a b;root;mid:dle;leaf 2\nx 1\n"
	if b.String() != want {
		t.Errorf("Folded(%+v) = %q; want %q", s, b.String(), want)
	}
}

func TestTop(t *testing.T) {
	s := []Sample{
		{Period: 1, Stack: []Frame{{Func: "f"}, {Func: "g"}, {Func: "main"}}},
		{Period: 1, Stack: []Frame{{Func: "f"}, {Func: "f"}, {Func: "main"}}},
		{Period: 1, Stack: []Frame{{Func: "g"}, {Func: "main"}}},
		{Period: 1, Stack: []Frame{{Func: "h"}}},
	}
	got, n := Top(Proto(s), 3)
	// f leads by self, a recursive f counted once in its sample's
	// total; ties on self go by total, g (1, 2) before h (1, 1); main
	// (0, 3), never a leaf, is the fourth, left out by n.
	want := []Func{{"f", 2, 2}, {"g", 1, 2}, {"h", 1, 1}}
	if n != 4 || !reflect.DeepEqual(got, want) {
		t.Errorf("Top(%+v, 3) = %+v, %d; want %+v, 4", s, got, n, want)
	}
}

func TestOfProcesses(t *testing.T) {
	s := []Sample{{PID: 1}, {PID: 2}, {PID: 1, TID: 3}, {PID: 4}}
	got := OfProcesses(s, []int{1, 4})
	want := []Sample{{PID: 1}, {PID: 1, TID: 3}, {PID: 4}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("OfProcesses(%v, [1 4]) = %v; want %v", s, got, want)
	}
}

package harness

import (
	"bench/results"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestResumable: the settings a session's metadata records are the ones
// a resumption runs with, and the newest unfinished session is the one
// taken when none is named.
func TestResumable(t *testing.T) {
	dir := t.TempDir()
	write := func(id string, started time.Time, ended bool, st results.Settings) {
		m := &results.Meta{Session: id, Machine: results.MachineInfo{Label: "ARM (M4)"}, Settings: st, Started: started}
		if ended {
			e := started.Add(time.Hour)
			m.Ended = &e
		}
		_, path := SessionPaths(dir, "ARM (M4)", id)
		if err := m.Write(path); err != nil {
			t.Fatal(err)
		}
	}
	base := time.Date(2026, 10, 13, 18, 0, 0, 0, time.UTC)
	old := results.Settings{Scenario: "http-*", Reps: 3, Window: results.Span(10 * time.Second), Warmup: results.Span(2 * time.Second)}
	newer := results.Settings{Scenario: "socks-ka-1k,relay-*", Proxy: "nginx,dante", ColumnsFile: "cols.conf", Reps: AutoMinReps,
		RepsAuto: true, RepsMax: 8, Precision: 0.04,
		Window: results.Span(3 * time.Second), CPUs: "client=0,proxy=1,origin=0", ProxyCPU: 0.5,
		Methods: map[results.Mode]results.Method{results.TLSTunnel: {Reps: AutoMinReps, Window: results.Span(10 * time.Second), Warmup: results.Span(time.Second)}}}
	write("a", base, false, old)
	write("b", base.Add(time.Hour), false, newer)
	write("c", base.Add(2*time.Hour), true, old)

	got, err := Resumable(dir, "")
	want := newer
	want.Machine, want.Session = "ARM (M4)", "b"
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Resumable(newest) = %+v, %v; want %+v", got, err, want)
	}
	got, err = Resumable(dir, "a")
	if err != nil || got.Session != "a" || got.Scenario != "http-*" || got.Window != results.Span(10*time.Second) {
		t.Errorf("Resumable(a) = %+v, %v", got, err)
	}
	if _, err := Resumable(dir, "zz"); !errors.Is(err, ErrNoSession) {
		t.Errorf("Resumable(unknown) = %v; want ErrNoSession", err)
	}
	if _, err := Resumable(t.TempDir(), ""); !errors.Is(err, ErrNoSession) {
		t.Errorf("Resumable(empty dir) = %v; want ErrNoSession", err)
	}

	// The file holds the settings readably.
	_, path := SessionPaths(dir, "ARM (M4)", "b")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`"scenario": "socks-ka-1k,relay-*"`, `"window": "3s"`, `"warmup": "0s"`, `"proxy_cpu_quota": 0.5`, `"session": "b"`,
		`"reps_auto": true`, `"reps_max": 8`, `"precision": 0.04`, `"tls-tunnel": {`} {
		if !strings.Contains(string(b), s) {
			t.Errorf("%s lacks %s:\n%s", filepath.Base(path), s, b)
		}
	}
}

func TestSettingsCheck(t *testing.T) {
	ok := results.Settings{Scenario: "all", Reps: 1, Window: results.Span(time.Second)}
	auto := results.Settings{Scenario: "all", Reps: AutoMinReps, RepsAuto: true, RepsMax: 10, Precision: 0.05, Window: results.Span(time.Second)}
	dwarf := results.Settings{Scenario: "all", Reps: 1, Window: results.Span(time.Second), Profile: true, CallGraph: results.CallGraphDWARF}
	for _, st := range []results.Settings{ok, auto, dwarf} {
		if err := checkSettings(st); err != nil {
			t.Errorf("check(%+v) = %v", st, err)
		}
	}
	for _, bad := range []results.Settings{
		{Reps: 0, Window: results.Span(time.Second)},
		{Reps: 1, Window: results.Span(time.Millisecond)},
		{Reps: 1, Window: results.Span(time.Second), Warmup: results.Span(-time.Second)},
		{Reps: 1, Window: results.Span(time.Second), ProxyCPU: -1},
		{Reps: AutoMinReps, RepsAuto: true, RepsMax: 2, Precision: 0.05, Window: results.Span(time.Second)}, // a cap below the least
		{Reps: AutoMinReps, RepsAuto: true, RepsMax: 10, Window: results.Span(time.Second)},                 // no precision
		{Reps: 3, RepsMax: 10, Window: results.Span(time.Second)},                                           // a cap without auto
		{Reps: 1, Window: results.Span(time.Second), Profile: true, CallGraph: "lbr"},                       // no such call graph
		{Reps: 1, Window: results.Span(time.Second), CallGraph: results.CallGraphDWARF},                     // a call graph without profiling
		{Reps: 1, Window: results.Span(time.Second), Methods: map[results.Mode]results.Method{results.TLSTunnel: {Reps: 0, Window: results.Span(time.Second)}}},
		{Reps: 1, Window: results.Span(time.Second), Methods: map[results.Mode]results.Method{results.TLSTunnel: {Reps: 1, Window: results.Span(time.Millisecond)}}},
		{Reps: AutoMinReps, RepsAuto: true, RepsMax: 10, Precision: 0.05, Window: results.Span(time.Second),
			Methods: map[results.Mode]results.Method{results.TLSTunnel: {Reps: 5, Window: results.Span(time.Second)}}}, // auto starts every cell alike
	} {
		if err := checkSettings(bad); err == nil {
			t.Errorf("check(%+v) = nil; want an error", bad)
		}
	}
}

// TestOwnMethods: the tunnel and handshake scenarios run by stunnel's
// page's method where the flags left the method to the defaults; what
// the user gave holds for them too.
func TestOwnMethods(t *testing.T) {
	sec := func(n float64) results.Span { return results.Span(time.Duration(n * float64(time.Second))) }
	defaults := results.Settings{Scenario: "all", Reps: 3, Window: sec(10), Warmup: sec(2)}
	page := results.Method{Reps: 5, Window: sec(10), Warmup: sec(1)}
	for _, c := range []struct {
		name  string
		st    results.Settings
		given Given
		want  map[results.Mode]results.Method
	}{
		{"defaults", defaults, Given{}, map[results.Mode]results.Method{results.TLSTunnel: page, results.TLSHandshake: page}},
		{"reps given", results.Settings{Scenario: "tls-*", Reps: 3, Window: sec(10), Warmup: sec(2)}, Given{Reps: true},
			map[results.Mode]results.Method{results.TLSTunnel: {Reps: 3, Window: sec(10), Warmup: sec(1)}, results.TLSHandshake: {Reps: 3, Window: sec(10), Warmup: sec(1)}}},
		{"a short window given", results.Settings{Scenario: "tls-handshake-full", Reps: 1, Window: sec(1), Warmup: sec(0)}, Given{Reps: true, Window: true},
			map[results.Mode]results.Method{results.TLSHandshake: {Reps: 1, Window: sec(1), Warmup: sec(1)}}},
		{"everything given", results.Settings{Scenario: "all", Reps: 1, Window: sec(3), Warmup: sec(0)}, Given{Reps: true, Window: true, Warmup: true}, nil},
		{"auto", results.Settings{Scenario: "tls-tunnel-*", Reps: AutoMinReps, RepsAuto: true, RepsMax: 10, Precision: 0.05, Window: sec(10), Warmup: sec(2)}, Given{Reps: true},
			map[results.Mode]results.Method{results.TLSTunnel: {Reps: AutoMinReps, Window: sec(10), Warmup: sec(1)}}},
		{"no such scenario selected", results.Settings{Scenario: "http-*", Reps: 3, Window: sec(10), Warmup: sec(2)}, Given{}, nil},
	} {
		got, err := OwnMethods(c.st, c.given)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: OwnMethods = %v, %v; want %v", c.name, got, err, c.want)
		}
		c.st.Methods = got
		if err := checkSettings(c.st); err != nil {
			t.Errorf("%s: its settings do not pass the check: %v", c.name, err)
		}
	}
}

// A session's default id is the minute it starts, and the next free one
// of that minute when a session of the machine has its files under it:
// the CSV, the metadata or the runs' output.
func TestFreeSession(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 12, 1, 12, 35, 40, 0, time.Local)
	if got := freeSession(dir, "amd epyc", now); got != "2026-12-01-1235" {
		t.Fatalf("first id %q", got)
	}
	csv1, _ := SessionPaths(dir, "amd epyc", "2026-12-01-1235")
	if err := os.WriteFile(csv1, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := freeSession(dir, "amd epyc", now.Add(10*time.Second)); got != "2026-12-01-1235-2" {
		t.Errorf("id after a session of the minute: %q", got)
	}
	if got := freeSession(dir, "other", now); got != "2026-12-01-1235" {
		t.Errorf("another machine's id: %q", got)
	}
	_, meta2 := SessionPaths(dir, "amd epyc", "2026-12-01-1235-2")
	if err := os.WriteFile(meta2, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	csv3, _ := SessionPaths(dir, "amd epyc", "2026-12-01-1235-3")
	if err := os.Mkdir(runsDir(csv3), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := freeSession(dir, "amd epyc", now); got != "2026-12-01-1235-4" {
		t.Errorf("id past a metadata file and a runs directory: %q", got)
	}
}

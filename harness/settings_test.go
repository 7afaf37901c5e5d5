package harness

import (
	"bench/report/results"
	"errors"
	"os"
	"path/filepath"
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
		Window: results.Span(3 * time.Second), CPUs: "client=0,proxy=1,origin=0", ProxyCPU: 0.5}
	write("a", base, false, old)
	write("b", base.Add(time.Hour), false, newer)
	write("c", base.Add(2*time.Hour), true, old)

	got, err := Resumable(dir, "")
	want := newer
	want.Machine, want.Session = "ARM (M4)", "b"
	if err != nil || got != want {
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
		`"reps_auto": true`, `"reps_max": 8`, `"precision": 0.04`} {
		if !strings.Contains(string(b), s) {
			t.Errorf("%s lacks %s:\n%s", filepath.Base(path), s, b)
		}
	}
}

func TestSettingsCheck(t *testing.T) {
	ok := results.Settings{Scenario: "all", Reps: 1, Window: results.Span(time.Second)}
	auto := results.Settings{Scenario: "all", Reps: AutoMinReps, RepsAuto: true, RepsMax: 10, Precision: 0.05, Window: results.Span(time.Second)}
	for _, st := range []results.Settings{ok, auto} {
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
	} {
		if err := checkSettings(bad); err == nil {
			t.Errorf("check(%+v) = nil; want an error", bad)
		}
	}
}

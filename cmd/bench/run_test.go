package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"bench/harness"
	"bench/harness/host"
	"bench/internal/testenv"
	"bench/proxies"
	"bench/results"
	"bench/scenarios"
)

// leftovers lists what carries prefix on this machine: namespaces, links,
// cgroups and processes in them.
func leftovers(t testing.TB, prefix string) []string {
	t.Helper()
	var found []string
	if ents, err := os.ReadDir("/run/netns"); err == nil {
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), prefix) {
				found = append(found, "netns "+e.Name())
			}
		}
	}
	if ents, err := os.ReadDir("/run"); err == nil {
		for _, e := range ents {
			if !strings.HasPrefix(e.Name(), prefix) {
				continue
			}
			// The lock file stays while the prefix is in use; empty,
			// it records nothing left behind.
			if info, err := e.Info(); err == nil && e.Name() == prefix+"lock" && info.Size() == 0 {
				continue
			}
			found = append(found, "/run/"+e.Name())
		}
	}
	if ents, err := os.ReadDir("/sys/class/net"); err == nil {
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), prefix) {
				found = append(found, "link "+e.Name())
			}
		}
	}
	filepath.WalkDir("/sys/fs/cgroup", func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if strings.HasPrefix(d.Name(), prefix) {
			found = append(found, "cgroup "+p)
			return filepath.SkipDir
		}
		return nil
	})
	procs, _ := filepath.Glob("/proc/[0-9]*/cgroup")
	for _, p := range procs {
		b, _ := os.ReadFile(p)
		if strings.Contains(string(b), "/"+prefix) {
			found = append(found, "process "+filepath.Base(filepath.Dir(p)))
		}
	}
	return found
}

// sessionFixture skips unless the test can run sessions, and returns a
// prefix of its own and an output directory; its cleanup removes what the
// prefix names and fails the test if anything was left.
func sessionFixture(t testing.TB, tools ...string) (prefix, out string) {
	t.Helper()
	testenv.NeedRoot(t, "network namespaces and cgroups")
	for _, tool := range tools {
		testenv.NeedProgram(t, tool)
	}
	prefix = testenv.Prefix(t)
	t.Cleanup(func() {
		host.Clean(prefix)
		if err := host.ForgetPrefix(prefix); err != nil {
			t.Errorf("forget prefix: %v", err)
		}
		if l := leftovers(t, prefix); len(l) > 0 {
			t.Errorf("left behind: %v", l)
		}
		if _, err := os.Stat("/run/" + prefix + "lock"); err == nil {
			t.Errorf("left behind: /run/%slock", prefix)
		}
	})
	return prefix, t.TempDir()
}

// TestRunSession runs a short real session across the four modes with the
// packaged proxies, checks that every column that can serve a scenario's
// mode wrote an ok row, that the report renders them, and that nothing is
// left behind.
func TestRunSession(t *testing.T) {
	prefix, out := sessionFixture(t, "wrk", "iperf3", "proxychains4", "nginx")
	const scenarioList = "http-ka-1k,http-ka-1m,connect-ka-1k,connect-stream1-down,socks-close-1k,socks-stream16,relay-ka-1k,relay-stream1"
	ts := runTestSession(t, prefix, out, "test", scenarioList, "--reps", "1", "--duration", "1s", "--warmup", "300ms")
	if l := leftovers(t, prefix); len(l) > 0 {
		t.Errorf("left behind after the session: %v", l)
	}
	csvPath, rows, stdout := ts.csvPath, ts.rows, ts.report
	_, metaPath := harness.SessionPaths(out, "test machine", "test")
	want := ts.each(t, func(s scenarios.Scenario, c proxies.Column, row *results.Row) {
		ok := row != nil
		var r results.Row
		if ok {
			r = *row
		}
		{
			switch {
			case !ok:
				t.Errorf("%s / %s: no row", s.Name, c.Name)
			case r.Status != "ok":
				t.Errorf("%s / %s: status %s: %s", s.Name, c.Name, r.Status, r.Note)
			case r.Requests == 0 && s.Load.Tool == scenarios.ToolWrk:
				t.Errorf("%s / %s: no requests", s.Name, c.Name)
			case r.Bytes == 0:
				t.Errorf("%s / %s: no bytes", s.Name, c.Name)
			case r.CPUProxy <= 0 && c.Kind != "direct":
				t.Errorf("%s / %s: proxy CPU %g", s.Name, c.Name, r.CPUProxy)
			case r.PeakMemBytes <= 0 && c.Kind != "direct":
				t.Errorf("%s / %s: peak memory %d", s.Name, c.Name, r.PeakMemBytes)
			case r.Bound == "":
				t.Errorf("%s / %s: no bound", s.Name, c.Name)
			}
		}
	})
	if len(rows) != want {
		t.Errorf("%d rows; want %d", len(rows), want)
	}
	// The rate in the CSV is the one wrk printed for the run.
	runs := strings.TrimSuffix(csvPath, ".csv") + ".runs"
	checked := 0
	for _, r := range rows {
		if r.Status != "ok" || r.Requests == 0 {
			continue
		}
		c := proxies.Column{Name: r.Proxy}
		pattern := fmt.Sprintf("*-%s-%s-%s-%d.load.wrk.out", results.Slug(c.Name), r.Mode, r.Load, r.Rep)
		files, _ := filepath.Glob(filepath.Join(runs, pattern))
		if len(files) != 1 {
			t.Errorf("%s %s-%s: wrk output %v; want one file %s", r.Proxy, r.Mode, r.Load, files, pattern)
			continue
		}
		b, err := os.ReadFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		printed := wrkRequestsPerSec(t, string(b))
		if got := float64(r.Requests) / r.Seconds; math.Abs(got-printed) > printed*1e-3 {
			t.Errorf("%s %s-%s: CSV gives %.2f requests/s, wrk printed %.2f", r.Proxy, r.Mode, r.Load, got, printed)
		}
		checked++
	}
	if checked == 0 {
		t.Error("no wrk run to compare with wrk's own figure")
	}
	if m, err := results.ReadMeta(metaPath); err != nil || m.Bench == nil || m.Bench.Go != runtime.Version() {
		t.Errorf("metadata: %v; bench's build %+v, want one built with %s", err, m.Bench, runtime.Version())
	} else if m.MixAccounting != results.MixDue {
		t.Errorf("metadata: mix accounting %q, want %q", m.MixAccounting, results.MixDue)
	}
	// The session's page is beside its CSV, with its charts.
	if page, err := os.ReadFile(results.PagePath(csvPath)); err != nil || !strings.Contains(string(page), `<figure class="chart bar">`) {
		t.Errorf("the session's page %s: %v; want one with its bar charts", results.PagePath(csvPath), err)
	}
	// Each ok run's data is kept for the charts: the roles' CPU each
	// second of its window, and iperf3's intervals where it ran.
	data, err := results.ReadRunData([]string{csvPath})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		d := data[r.ID()]
		switch {
		case r.Status != results.OK:
		case d == nil:
			t.Errorf("%s %s-%s: no run data kept", r.Proxy, r.Mode, r.Load)
		case len(d.CPU["proxy"]) < 1 || len(d.CPU["client"]) != len(d.CPU["proxy"]) || len(d.CPU["origin"]) != len(d.CPU["proxy"]):
			t.Errorf("%s %s-%s: CPU series %v; want a point a second for each role", r.Proxy, r.Mode, r.Load, d.CPU)
		case results.Stream(r.Load) != (len(d.Intervals) > 0):
			t.Errorf("%s %s-%s: %d intervals; want iperf3's and none of wrk", r.Proxy, r.Mode, r.Load, len(d.Intervals))
		}
	}
	// Each run's rendered configuration is kept beside its output.
	for _, r := range rows {
		if r.Kind == "direct" {
			continue
		}
		pattern := fmt.Sprintf("*-%s-%s-%d.proxy.*", results.Slug(r.Proxy), results.ScenarioName(r.Mode, r.Load), r.Rep)
		if files, _ := filepath.Glob(filepath.Join(runs, pattern)); len(files) < 2 {
			t.Errorf("%s %s-%s: kept %v; want its configuration and command line, %s", r.Proxy, r.Mode, r.Load, files, pattern)
		}
	}
	for _, h := range []string{"HTTP proxy", "CONNECT tunnel", "SOCKSv5 tunnel", "TCP relay"} {
		if !strings.Contains(stdout, h) {
			t.Errorf("report lacks %q:\n%s", h, stdout)
		}
	}
}

// TestRunInterruptResume interrupts a session after its first run, as
// Ctrl-C would, checks that it tore everything down and kept the finished
// run, then resumes it and checks that only the missing runs were done.
func TestRunInterruptResume(t *testing.T) {
	prefix, out := sessionFixture(t, "wrk", "nginx")
	args := []string{"run", "--scenario", "relay-ka-1k,relay-close-1k", "--proxy", "nginx,no proxy",
		"--reps", "1", "--duration", "1s", "--warmup", "0s",
		"--out", out, "--session", "interrupted", "--machine", "m", "--prefix", prefix}
	csvPath, metaPath := harness.SessionPaths(out, "m", "interrupted")
	rowsIn := func() []results.Row {
		rows, err := results.ReadFiles([]string{csvPath})
		if err != nil {
			return nil
		}
		return rows
	}

	errc := make(chan error, 1)
	var stderr bytes.Buffer
	go func() { errc <- dispatch(io.Discard, &syncWriter{w: &stderr}, args) }()
	deadline := time.Now().Add(60 * time.Second)
	for len(rowsIn()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no run finished within 60s")
		}
		select {
		case err := <-errc:
			t.Fatalf("session ended before it was interrupted: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := <-errc
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("interrupted session returned %v; want an interruption", err)
	}
	if l := leftovers(t, prefix); len(l) > 0 {
		t.Errorf("left behind after the interruption: %v", l)
	}
	before := rowsIn()
	if len(before) == 0 || len(before) >= 4 {
		t.Fatalf("%d rows after the interruption; want 1 to 3", len(before))
	}
	m, err := results.ReadMeta(metaPath)
	if err != nil || m.Ended != nil {
		t.Fatalf("metadata after the interruption: %+v, %v; want no end time", m, err)
	}

	stderr.Reset()
	// A resumption takes the session's own flags; others are refused.
	if err := dispatch(io.Discard, &stderr, append(slices.Clone(args), "--resume")); err == nil || !strings.Contains(err.Error(), "leave out") || !strings.Contains(err.Error(), "--scenario") {
		t.Errorf("resume with the plan's flags: %v; want a refusal naming --scenario", err)
	}
	resumeArgs := []string{"run", "--resume", "--out", out, "--prefix", prefix}
	if err := dispatch(io.Discard, &stderr, resumeArgs); err != nil {
		t.Fatalf("resume: %v\n%s", err, stderr.String())
	}
	after := rowsIn()
	if len(after) != 4 {
		t.Fatalf("%d rows after resuming; want 4", len(after))
	}
	seen := map[string]bool{}
	for _, r := range after {
		k := r.Proxy + "/" + string(r.Mode) + "-" + r.Load
		if seen[k] {
			t.Errorf("run %s done twice", k)
		}
		seen[k] = true
	}
	if want := fmt.Sprintf("resuming: %d runs done, %d to go", len(before), 4-len(before)); !strings.Contains(stderr.String(), want) {
		t.Errorf("resume said:\n%s\nwant %q", stderr.String(), want)
	}
	if m, err := results.ReadMeta(metaPath); err != nil || m.Ended == nil || len(m.Resumed) != 1 {
		t.Errorf("metadata after resuming: %+v, %v; want an end time and one resumption", m, err)
	}
}

// TestRunSameMinute runs two sessions without --session one after the
// other, within a minute as a script would: each gets a file of its own.
// An id given with --session whose file is there is still refused.
func TestRunSameMinute(t *testing.T) {
	prefix, out := sessionFixture(t, "wrk")
	args := []string{"run", "--scenario", "relay-ka-1k", "--proxy", "no proxy", "--reps", "1",
		"--duration", "1s", "--warmup", "0s", "--out", out, "--machine", "m", "--prefix", prefix}
	for i := 0; i < 2; i++ {
		var stderr bytes.Buffer
		if err := dispatch(io.Discard, &stderr, args); err != nil {
			t.Fatalf("session %d: %v\n%s", i+1, err, stderr.String())
		}
	}
	files, _ := filepath.Glob(filepath.Join(out, "m-*.csv"))
	if len(files) != 2 {
		t.Fatalf("session files %v; want two", files)
	}
	for _, f := range files {
		rows, err := results.ReadFiles([]string{f})
		if err != nil || len(rows) != 1 || rows[0].Status != results.OK {
			t.Errorf("%s: %d rows, %v; want one ok run", f, len(rows), err)
		}
	}
	id := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(files[0]), "m-"), ".csv")
	err := dispatch(io.Discard, io.Discard, append(slices.Clone(args), "--session", id))
	if !errors.Is(err, harness.ErrSessionExists) {
		t.Errorf("a session named %s again: %v; want %v", id, err, harness.ErrSessionExists)
	}
}

// wrkRequestsPerSec reads wrk's own "Requests/sec:" line.
func wrkRequestsPerSec(t *testing.T, out string) float64 {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(l, "Requests/sec:"); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatalf("wrk printed %q: %v", l, err)
			}
			return f
		}
	}
	t.Fatalf("no Requests/sec line in wrk's output:\n%s", out)
	return 0
}

// syncWriter serialises writes from the session's goroutine.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// --reps takes a number or auto; the cap and the precision go with auto.
func TestRunRepsFlag(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := cmdRun(&stdout, &stderr, []string{"--dry-run", "--scenario", "relay-ka-1k", "--proxy", "no proxy",
		"--reps", "auto", "--reps-max", "6", "--precision", "4%", "--out", t.TempDir()})
	if err != nil {
		t.Fatalf("--reps auto --dry-run: %v\n%s", err, stderr.String())
	}
	plan := stderr.String()
	for _, want := range []string{"3..6 reps (until no run moves a median by more than 4%)", "= 3..6 runs", "estimated 41s to 1m21s"} {
		if !strings.Contains(plan, want) {
			t.Errorf("the plan lacks %q:\n%s", want, plan)
		}
	}
	for _, args := range [][]string{
		{"--reps", "0"},
		{"--reps", "many"},
		{"--reps", "3", "--reps-max", "6"},
		{"--reps", "3", "--precision", "2%"},
		{"--reps", "auto", "--reps-max", "2"},
	} {
		stderr.Reset()
		args = append(args, "--dry-run", "--scenario", "relay-ka-1k", "--proxy", "no proxy", "--out", t.TempDir())
		if err := cmdRun(&stdout, &stderr, args); err == nil {
			t.Errorf("bench run %s = nil error; want one", strings.Join(args, " "))
		}
	}
}

// The tunnel and handshake scenarios run by stunnel's page's method (5
// runs, a 1 s warm-up) unless the flags say otherwise; the plan says so.
func TestRunPageMethod(t *testing.T) {
	plan := func(args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		args = append(args, "--dry-run", "--scenario", "relay-ka-1k,tls-tunnel-plaintext-up", "--proxy", "no proxy", "--out", t.TempDir())
		if err := cmdRun(&stdout, &stderr, args); err != nil {
			t.Fatalf("%q: %v\n%s", args, err, stderr.String())
		}
		return stderr.String()
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{nil, []string{"x 3 reps (tls-tunnel: 5) = 8 runs", "each run: 2s warm-up + 10s window; tls-tunnel: 5 reps of 1s warm-up + 10s window; estimated 1m43s"}},
		{[]string{"--reps", "2"}, []string{"x 2 reps = 4 runs", "tls-tunnel: 2 reps of 1s warm-up + 10s window;"}},
		{[]string{"--reps", "1", "--duration", "3s", "--warmup", "0s"}, []string{"x 1 rep = 2 runs", "each run: 0s warm-up + 3s window; estimated"}},
	} {
		got := plan(c.args...)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%q: the plan lacks %q:\n%s", c.args, w, got)
			}
		}
	}
}

// bench run refuses an --out another user owns, or every user may write
// in without the sticky bit, before it plans anything: exit 2, saying
// why. Such a folder lets them plant links where root writes.
func TestRunRefusesOut(t *testing.T) {
	testenv.NeedRoot(t, "gives a folder to another user")
	t.Setenv("SUDO_UID", "")
	mk := func(mode os.FileMode, uid int) string {
		d := filepath.Join(t.TempDir(), "out")
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(d, uid, uid); err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, c := range []struct{ out, says string }{
		{mk(0o777, 0), "a folder every user may write in (mode 777)"},
		{mk(0o755, 65534), "a folder of user nobody's"},
	} {
		var cmdErr, stderr bytes.Buffer
		status := exitStatus(dispatch(io.Discard, &cmdErr, []string{"run", "--dry-run", "--out", c.out}), &stderr)
		want := "bench: --out " + c.out + ": " + c.says
		if status != exitUsage || !strings.HasPrefix(stderr.String(), want) {
			t.Errorf("bench run --out %s: exit %d, %q; want %d, %q", c.out, status, stderr.String(), exitUsage, want)
		}
		if strings.Contains(cmdErr.String(), "\nscenarios: ") {
			t.Errorf("bench run --out %s planned the session before refusing it:\n%s", c.out, cmdErr.String())
		}
	}
}

package main

import (
	"bytes"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"bench/internal/hotproxy"

	"bench/profile"
	"bench/results"

	"bench/internal/child"
)

// hotColumns writes a columns file of one column, "hotloop": the stand-in
// proxy as tinyproxy's kind, serving modes (http where none is given),
// and returns its path.
func hotColumns(t *testing.T, modes ...string) string {
	t.Helper()
	if len(modes) == 0 {
		modes = []string{"http"}
	}
	cols := filepath.Join(t.TempDir(), "columns.conf")
	if err := os.WriteFile(cols, []byte(fmt.Sprintf("hotloop tinyproxy binary=%s modes=%s\n", hotproxy.Build(t), strings.Join(modes, ","))), 0o644); err != nil {
		t.Fatal(err)
	}
	return cols
}

// runData reads the data of the session's one run.
func runData(t *testing.T, ts testSession) *results.RunData {
	t.Helper()
	data, err := results.ReadRunData([]string{ts.csvPath})
	if err != nil || len(ts.rows) != 1 {
		t.Fatalf("%d rows, %v; want one run", len(ts.rows), err)
	}
	if r := ts.rows[0]; r.Status != results.OK || len(data) != 1 {
		t.Fatalf("the run: %s, %q, its data %d files; want ok, with its data", r.Status, r.Note, len(data))
	}
	return data[ts.rows[0].ID()]
}

// TestRunProfile runs a session with --profile=on on a stand-in proxy
// whose CPU goes to a function it names: the function must be on the
// stack of at least 80% of the proxy's samples in the run's profile, go tool pprof -top and
// bench profile top must name it, and the metadata must say the session
// profiled.
func TestRunProfile(t *testing.T) {
	prefix, out := sessionFixture(t, "wrk", "nginx", "perf")
	ts := runTestSession(t, prefix, out, "profile", "http-ka-1k", "--columns", hotColumns(t), "--proxy", "hotloop",
		"--reps", "1", "--duration", "3s", "--warmup", "300ms", "--profile=on")
	d := runData(t, ts)
	if d.Profile == nil || d.Profile.Absent != "" || d.Profile.CallGraph != "fp" || d.Profile.Samples == 0 {
		t.Fatalf("the run's data says of its profile %+v; want samples recorded with frame pointers", d.Profile)
	}
	meta, err := results.ReadMeta(results.MetaPath(ts.csvPath))
	if err != nil {
		t.Fatal(err)
	}
	if !meta.Profile || meta.Tools["perf"] == "" {
		t.Errorf("metadata: profile %v, perf %q; want the session's profiling and perf's version", meta.Profile, meta.Tools["perf"])
	}
	runs, _ := filepath.Glob(filepath.Join(results.RunsDir(ts.csvPath), "*"+results.ProfileSuffix))
	if len(runs) != 1 {
		t.Fatalf("profiles %v; want the run's one", runs)
	}
	p, err := readProfile(runs[0])
	if err != nil {
		t.Fatal(err)
	}
	// The function holds a sample it is on the stack of: the kernel's
	// interrupts land in it too, as they do in a proxy's own functions.
	funcs, samples := profile.Top(p, 1)
	t.Logf("%s: on the stack of %d of the proxy's %d samples, the leaf of %d; %d samples of other processes left out", hotproxy.HotFunc, funcs[0].Total, samples, funcs[0].Self, d.Profile.Others)
	if samples != int64(d.Profile.Samples) || funcs[0].Name != hotproxy.HotFunc || profile.Share(funcs[0].Total, samples) < 0.8 {
		folded, _ := os.ReadFile(strings.TrimSuffix(runs[0], results.ProfileSuffix) + results.FoldedSuffix)
		t.Errorf("the profile's top function %+v of %d samples (the data counts %d); want %s on the stack of 80%% or more:\n%s", funcs[0], samples, d.Profile.Samples, hotproxy.HotFunc, folded)
	}
	top, err := child.CombinedOutput(exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "tool", "pprof", "-top", runs[0]))
	if err != nil || !bytes.Contains(top, []byte(hotproxy.HotFunc)) {
		t.Errorf("go tool pprof -top: %v; want it to name %s:\n%s", err, hotproxy.HotFunc, top)
	}
	var stdout, stderr bytes.Buffer
	if err := dispatch(&stdout, &stderr, []string{"profile", "top", strings.TrimSuffix(runs[0], results.ProfileSuffix)}); err != nil || !strings.Contains(stdout.String(), hotproxy.HotFunc) {
		t.Errorf("bench profile top: %v; want it to name %s:\n%s%s", err, hotproxy.HotFunc, stdout.String(), stderr.String())
	}
	// The session's page links the run's profile from its cell and draws
	// it, a frame titled with the hot function.
	frame := "<title>" + html.EscapeString(hotproxy.HotFunc) + ": "
	page, err := os.ReadFile(results.PagePath(ts.csvPath))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(page, []byte(`<a class="profile" href="#profile-`)) || !bytes.Contains(page, []byte(frame)) {
		t.Errorf("the session's page links no profile, or its flame graph has no frame %q", frame)
	}
}

// TestRunProfileDWARF profiles a real run with --call-graph dwarf: the
// run's data says so, and the hot function is the profile's top one.
func TestRunProfileDWARF(t *testing.T) {
	prefix, out := sessionFixture(t, "wrk", "nginx", "perf")
	ts := runTestSession(t, prefix, out, "dwarf", "http-ka-1k", "--columns", hotColumns(t), "--proxy", "hotloop",
		"--reps", "1", "--duration", "3s", "--warmup", "300ms", "--profile=on", "--call-graph", "dwarf")
	d := runData(t, ts)
	if d.Profile == nil || d.Profile.Absent != "" || d.Profile.CallGraph != results.CallGraphDWARF || d.Profile.Samples == 0 {
		t.Fatalf("the run's data says of its profile %+v; want samples recorded with DWARF unwinding", d.Profile)
	}
	var stdout, stderr bytes.Buffer
	if err := dispatch(&stdout, &stderr, []string{"profile", "top", "-n", "1", ts.csvPath, "http-ka-1k", "hotloop"}); err != nil || !strings.Contains(stdout.String(), hotproxy.HotFunc) {
		t.Errorf("bench profile top of the cell: %v; want it to name %s:\n%s%s", err, hotproxy.HotFunc, stdout.String(), stderr.String())
	}
}

// TestRunProfileFails runs a session with --profile=on whose perf fails
// (a perf first in PATH that refuses, as perf does without the right to
// sample a CPU): the run completes with its figures, and its data says
// why it has no profile.
func TestRunProfileFails(t *testing.T) {
	prefix, out := sessionFixture(t, "wrk", "nginx", "perf")
	bin := t.TempDir()
	refusal := "#!/bin/sh\necho 'Error: Access to performance monitoring and observability operations is limited.' >&2\nexit 255\n"
	if err := os.WriteFile(filepath.Join(bin, "perf"), []byte(refusal), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	ts := runTestSession(t, prefix, out, "refused", "http-ka-1k", "--columns", hotColumns(t), "--proxy", "hotloop",
		"--reps", "1", "--duration", "3s", "--warmup", "300ms", "--profile=on")
	d := runData(t, ts)
	if r := ts.rows[0]; r.Requests == 0 || r.CPUProxy <= 0 {
		t.Errorf("the run: %d requests, %g s of proxy CPU; want its figures", r.Requests, r.CPUProxy)
	}
	if d.Profile == nil || !strings.Contains(d.Profile.Absent, "performance monitoring") {
		t.Errorf("the run's data says of its profile %+v; want why it has none, in perf's words", d.Profile)
	}
	if runs, _ := filepath.Glob(filepath.Join(results.RunsDir(ts.csvPath), "*.cpu.*")); len(runs) != 0 {
		t.Errorf("profile files %v of a run without a profile", runs)
	}
}

// BenchmarkProfileCost measures what profiling costs the proxies' figures:
// nginx and haproxy in http-ka-1k and relay-stream16, 5 sessions each with
// --profile=off and =on, interleaved (off, on; on, off; ...), 10 s
// windows. Its metrics are each cell's median with profiling on against
// off, in percent, of the figure (fig%) and of the proxy's CPU a second
// (cpu%). Run it alone on a quiet machine, as root:
//
//	go test -run '^$' -bench BenchmarkProfileCost -benchtime 1x ./cmd/bench
func BenchmarkProfileCost(b *testing.B) {
	prefix, out := sessionFixture(b, "wrk", "iperf3", "nginx", "haproxy", "perf")
	type key struct{ cell, profile string }
	figs, cpus := map[key][]float64{}, map[key][]float64{}
	for n := 0; n < b.N; n++ {
		for pair := range 5 {
			order := []string{"off", "on"}
			if pair%2 == 1 {
				order = []string{"on", "off"}
			}
			for _, p := range order {
				ts := runTestSession(b, prefix, out, fmt.Sprintf("cost-%d-%d-%s", n, pair, p), "http-ka-1k,relay-stream16",
					"--proxy", "nginx,haproxy", "--reps", "1", "--duration", "10s", "--profile="+p)
				for i := range ts.rows {
					r := &ts.rows[i]
					if r.Status != results.OK {
						b.Fatalf("%s %s-%s: %s", r.Proxy, r.Mode, r.Load, r.Status)
					}
					k := key{fmt.Sprintf("%s-%s-%s", r.Proxy, r.Mode, r.Load), p}
					figs[k] = append(figs[k], r.Figure())
					cpus[k] = append(cpus[k], r.CPUProxy/r.Seconds)
				}
			}
		}
	}
	for k, off := range figs {
		if k.profile != "off" {
			continue
		}
		on := key{k.cell, "on"}
		// every run's figure and proxy CPU, for the spread beside the
		// medians (a benchmark's log keeps its first lines alone)
		fmt.Fprintf(os.Stderr, "%s: figures off %.4g on %.4g; proxy CPU off %.3f on %.3f\n", k.cell, off, figs[on], cpus[k], cpus[on])
		b.ReportMetric(100*(medianOf(figs[on])/medianOf(off)-1), k.cell+"-fig%")
		b.ReportMetric(100*(medianOf(cpus[on])/medianOf(cpus[k])-1), k.cell+"-cpu%")
	}
}

// medianOf is the median of x, as the tables take it (results.Median),
// x left as it was.
func medianOf(x []float64) float64 {
	return results.Median(slices.Clone(x))
}

// TestRunSweepProfile sweeps mix-http through the stand-in proxy with
// --profile=on: every step of the search keeps a profile of its own
// window (its data says perf recorded the proxy's CPUs, its files are
// named by the step), and the step of most samples of the proxy's has
// the hot function on top: which steps ran and how busy each was is the
// machine's to say, not this test's.
func TestRunSweepProfile(t *testing.T) {
	prefix, out := sessionFixture(t, "nginx", "perf")
	ts := runTestSession(t, prefix, out, "sweep-profile", "mix-http", "--sweep", "--columns", hotColumns(t, "mix-http"), "--proxy", "hotloop",
		"--mix-conns", "50", "--reps", "1", "--duration", "1s", "--warmup", "300ms", "--profile=on")
	data, err := results.ReadRunData([]string{ts.csvPath})
	if err != nil {
		t.Fatal(err)
	}
	busiest := ""
	most := 0
	for i := range ts.rows {
		r := &ts.rows[i]
		if r.Status != results.OK {
			continue
		}
		d := data[r.ID()]
		// perf recorded the CPUs of the proxy over the window; how many of
		// the samples were the proxy's, at a step's rate, is the machine's.
		if d == nil || d.Profile == nil || d.Profile.Absent != "" || d.Profile.Samples+d.Profile.Others == 0 {
			t.Errorf("step at %g/s (%q): its profile %+v; want its window recorded", r.OfferedRate, r.Note, profileOf(d))
			continue
		}
		if _, err := os.Stat(d.Files + results.ProfileSuffix); err != nil {
			t.Errorf("step at %g/s: %v", r.OfferedRate, err)
		}
		if d.Profile.Samples > most {
			busiest, most = d.Files, d.Profile.Samples
		}
	}
	if busiest == "" {
		t.Fatalf("no step of the search kept a profile: %d rows", len(ts.rows))
	}
	p, err := readProfile(busiest + results.ProfileSuffix)
	if err != nil {
		t.Fatal(err)
	}
	funcs, samples := profile.Top(p, 1)
	t.Logf("%d steps; the busiest, %s: %s on the stack of %d of %d samples", len(ts.rows), filepath.Base(busiest), funcs[0].Name, funcs[0].Total, samples)
	if funcs[0].Name != hotproxy.HotFunc {
		t.Errorf("the busiest step's top function %+v; want %s", funcs[0], hotproxy.HotFunc)
	}
}

// profileOf is what d says of its profile, nil where d is.
func profileOf(d *results.RunData) *results.ProfileNote {
	if d == nil {
		return nil
	}
	return d.Profile
}

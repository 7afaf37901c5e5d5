package main

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"bench/internal/golden"
	"bench/profile"
	"bench/results"
)

// profileRun writes the profile of a capture of perf's (profile's
// test data) as a run's, in a runs folder, and returns the run's path
// without the suffix.
func profileRun(t *testing.T) string {
	t.Helper()
	f, err := os.Open("../../profile/testdata/captured/perf-fp-gzip.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := profile.ParseScript(f)
	if err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(t.TempDir(), "x.runs", "0001-nginx-relay-stream16-1")
	if err := os.MkdirAll(filepath.Dir(run), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(run + results.ProfileSuffix)
	if err != nil {
		t.Fatal(err)
	}
	if err := profile.Proto(s).Write(out); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return run
}

func TestProfileTop(t *testing.T) {
	run := profileRun(t)
	tests := []struct {
		name string
		args []string
	}{
		{"top", []string{"top", run + results.ProfileSuffix}}, // the profile's file
		{"top", []string{"top", run}},                         // the run's name: the same
		{"top-3", []string{"top", "-n", "3", run}},            // the first three
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		if err := cmdProfile(&stdout, &stderr, tt.args); err != nil {
			t.Fatalf("bench profile %q = %v; stderr: %s", tt.args, err, stderr.String())
		}
		golden.Check(t, filepath.Join("..", "..", "testdata", "profile", tt.name+".txt"), stdout.Bytes())
	}
}

func TestProfileTopErrors(t *testing.T) {
	run := profileRun(t)
	notProto := filepath.Join(t.TempDir(), "x"+results.ProfileSuffix)
	if err := os.WriteFile(notProto, []byte("not a profile"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args  []string
		usage bool
	}{
		{nil, true},                             // no subcommand
		{[]string{"bottom", run}, true},         // an unknown one
		{[]string{"top"}, true},                 // no run
		{[]string{"top", run, run}, true},       // two
		{[]string{"top", "-n", "0", run}, true}, // none to print
		{[]string{"top", run + "-2"}, false},    // a run without a profile
		{[]string{"top", notProto}, false},      // a file that is no profile
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		err := cmdProfile(&stdout, &stderr, tt.args)
		var ue usageError
		if err == nil || errors.As(err, &ue) != tt.usage || exitStatus(err, io.Discard) != exitUsage {
			t.Errorf("bench profile %q = %v (exit %d); want an error, a wrong command line: %v, exit %d", tt.args, err, exitStatus(err, io.Discard), tt.usage, exitUsage)
		}
	}
}

// profileSession writes a session file of nginx's three runs of
// relay-stream16, the median (rep 3, by its bytes) with the profile of
// profileRun and the others with their data alone, and returns the
// file's path.
func profileSession(t *testing.T) string {
	t.Helper()
	run := profileRun(t)
	dir := filepath.Dir(run)
	csv := filepath.Join(filepath.Dir(dir), "x.csv")
	w, err := results.Create(csv)
	if err != nil {
		t.Fatal(err)
	}
	for rep, gb := range []int64{1, 3, 2} {
		r := results.Row{Machine: "m", Session: "x", Proxy: "nginx", Kind: "nginx", Group: results.Copy, Mode: results.Relay, Load: "stream16",
			Rep: rep + 1, Seconds: 1, Bytes: gb << 30, Status: results.OK, Bound: results.BoundProxy}
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("%04d-nginx-relay-stream16-%d", rep+1, rep+1)
		d := results.RunData{RunID: r.ID()}
		if rep == 2 {
			name, d.Profile = filepath.Base(run), &results.ProfileNote{CallGraph: results.CallGraphFP, Samples: 1}
		}
		if rep == 1 {
			d.Profile = &results.ProfileNote{Absent: "perf not found"}
		}
		if err := results.WriteRunData(dir, name, d); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return csv
}

// TestProfileTopCell: a cell, a session's scenario and proxy, prints its
// median run's top functions, as the run's name does.
func TestProfileTopCell(t *testing.T) {
	csv := profileSession(t)
	var stdout, stderr bytes.Buffer
	if err := cmdProfile(&stdout, &stderr, []string{"top", csv, "relay-stream16", "nginx"}); err != nil {
		t.Fatalf("bench profile top %s relay-stream16 nginx = %v; stderr: %s", csv, err, stderr.String())
	}
	golden.Check(t, filepath.Join("..", "..", "testdata", "profile", "top.txt"), stdout.Bytes())
	for _, args := range [][]string{
		{"top", csv, "relay-stream1", "nginx"},  // no such cell
		{"top", csv, "relay-stream16", "squid"}, // nor this
		{"top", csv, "relay-stream16"},          // a cell wants its proxy
	} {
		err := cmdProfile(io.Discard, io.Discard, args)
		if err == nil || exitStatus(err, io.Discard) != exitUsage {
			t.Errorf("bench profile %q = %v; want an error, exit %d", args, err, exitUsage)
		}
	}
}

// TestRelayProfiles: the manual's example of reading why, two runs of
// relay-stream16 profiled by bench run --profile=on on a 2-CPU machine
// (testdata/profile/relay-stream16.runs): nginx copies each byte in and
// out of its buffers (the kernel's _copy_to_iter and _copy_from_iter on
// over a quarter of its stacks), haproxy with option splice moves them
// pipe to socket (do_splice on over half of its stacks) and copies none.
func TestRelayProfiles(t *testing.T) {
	dir := filepath.Join(docRoot, "testdata", "profile", "relay-stream16.runs")
	total := func(run string) (map[string]float64, int64) {
		t.Helper()
		p, err := readProfile(filepath.Join(dir, run))
		if err != nil {
			t.Fatal(err)
		}
		funcs, n := profile.Top(p, 1<<20)
		share := map[string]float64{}
		for _, f := range funcs {
			share[f.Name] = profile.Share(f.Total, n)
		}
		return share, n
	}
	nginx, n := total("0001-nginx-relay-stream16-1")
	if copies := nginx["_copy_to_iter"] + nginx["_copy_from_iter"]; copies < 0.25 || nginx["do_splice"] > 0 {
		t.Errorf("nginx's %d samples: copies on %.0f%% of stacks, do_splice on %.0f%%; want copies on a quarter or more, no splice", n, 100*copies, 100*nginx["do_splice"])
	}
	haproxy, n := total("0002-haproxy-splice-relay-stream16-1")
	if haproxy["do_splice"] < 0.5 || haproxy["_copy_to_iter"] > 0 {
		t.Errorf("haproxy splice's %d samples: do_splice on %.0f%% of stacks, _copy_to_iter on %.0f%%; want splice on half or more, no copy to user space", n, 100*haproxy["do_splice"], 100*haproxy["_copy_to_iter"])
	}
}

// A profile that inflates past any profile's size (a gzip bomb: twice
// profile.MaxProto of zeros from a file of some hundred kilobytes) is
// refused as input (exit 2), without being inflated further than the
// bound: the command makes no more than a few times the bound of memory
// on it, where inflating it whole makes several times the bomb's.
func TestProfileTopBomb(t *testing.T) {
	var member bytes.Buffer
	z := gzip.NewWriter(&member)
	z.Write(make([]byte, 16<<20))
	z.Close()
	bomb := filepath.Join(t.TempDir(), "bomb"+results.ProfileSuffix)
	if err := os.WriteFile(bomb, bytes.Repeat(member.Bytes(), 2*profile.MaxProto/(16<<20)), 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := cmdProfile(io.Discard, io.Discard, []string{"top", bomb})
	runtime.ReadMemStats(&after)
	if err == nil || exitStatus(err, io.Discard) != exitUsage || !strings.Contains(err.Error(), fmt.Sprintf("larger than %d bytes inflated", profile.MaxProto)) {
		t.Errorf("bench profile top of a bomb: %v (exit %d); want it refused, exit %d", err, exitStatus(err, io.Discard), exitUsage)
	}
	if made := after.TotalAlloc - before.TotalAlloc; made > 3*profile.MaxProto {
		t.Errorf("bench profile top of a bomb made %d MiB; want at most %d", made>>20, 3*profile.MaxProto>>20)
	}
}

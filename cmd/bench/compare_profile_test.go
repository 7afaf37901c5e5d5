package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/results"
)

// profiledSessionFile writes session id's file of nginx's ka-1k runs at
// kreqs k req/s in dir, each run's data with the profile of the folded
// stacks of report's fixture, and returns its path.
func profiledSessionFile(t *testing.T, dir, id, fixture string, kreqs ...int64) string {
	t.Helper()
	folded, err := os.ReadFile(filepath.Join("..", "..", "report", "testdata", "profile", fixture+results.FoldedSuffix))
	if err != nil {
		t.Fatal(err)
	}
	csv := filepath.Join(dir, id+".csv")
	runs := results.RunsDir(csv)
	if err := os.Mkdir(runs, 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := results.Create(csv)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range kreqs {
		r := results.Row{Machine: "m", Session: id, Proxy: "nginx", Kind: "nginx", Group: results.Copy, Mode: results.HTTP, Load: "ka-1k",
			Rep: i + 1, Seconds: 1, Requests: k * 1000, Bytes: k * 1000, Status: results.OK, Bound: results.BoundProxy}
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("%04d-nginx-http-ka-1k-%d", i+1, i+1)
		d := results.RunData{RunID: r.ID(), Profile: &results.ProfileNote{CallGraph: results.CallGraphFP, Samples: 100}}
		if err := results.WriteRunData(runs, name, d); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(runs, name+results.FoldedSuffix), folded, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return csv
}

// TestCompareProfiles: bench compare of two sessions whose runs kept
// profiles says where a real change's CPU went.
func TestCompareProfiles(t *testing.T) {
	dir := t.TempDir()
	old := profiledSessionFile(t, dir, "a", "hot", 30, 32, 31)
	new := profiledSessionFile(t, dir, "b", "hot-after", 20, 22, 21)
	for _, format := range []string{"md", "json", "html"} {
		var stdout, stderr bytes.Buffer
		if err := cmdCompare(&stdout, &stderr, []string{"--format", format, old, new}); err != nil {
			t.Fatalf("bench compare --format %s = %v; stderr: %s", format, err, stderr.String())
		}
		if !strings.Contains(stdout.String(), "main.benchHotLoop") || !strings.Contains(stdout.String(), "copy_user_enhanced_fast_string") {
			t.Errorf("bench compare --format %s names not the functions whose share moved:\n%s", format, stdout.String())
		}
	}
}

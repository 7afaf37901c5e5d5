package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sweepDir holds two generated sessions of sweeps, one day apart, with
// their metadata (report's TestSweepSessionFiles writes them): the second
// has haproxy's sustainable rates 20% higher and squid's 20% lower.
var sweepDir = filepath.Join("..", "..", "report", "testdata", "sweep")

// TestCmdReportSweep: bench report of a session of sweeps prints the
// Sustainable rate table with the bounds its metadata records, as the
// report's golden has it.
func TestCmdReportSweep(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := cmdReport(&stdout, &stderr, inDir(sweepDir, "xeon-2-cpus-2026-12-01-sweep.csv")); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(sweepDir, "..", "golden", "sweep.md"))
	if err != nil {
		t.Fatal(err)
	}
	if got := stdout.String(); got != string(want) {
		t.Errorf("bench report of the sweeps differs from the report's golden sweep.md:\n%s", got)
	}
}

// TestCmdCompareSweep: bench compare of the two sessions names squid's
// lower sustainable rate, past the gate, as the regression, haproxy's
// higher one an improvement.
func TestCmdCompareSweep(t *testing.T) {
	var stdout, stderr bytes.Buffer
	args := append([]string{"--fail-over", "10%"}, inDir(sweepDir, "xeon-2-cpus-2026-12-01-sweep.csv", "xeon-2-cpus-2026-12-02-sweep.csv")...)
	err := cmdCompare(&stdout, &stderr, args)
	if err == nil || !strings.Contains(err.Error(), "1 cell regressed beyond 10%") || !strings.Contains(err.Error(), "Sustainable rate mix-http-sweep, squid") {
		t.Errorf("bench compare %s = %v; want squid's mix-http-sweep regressed", strings.Join(args, " "), err)
	}
	out := stdout.String()
	for _, want := range []string{"1 real regression (largest: squid mix-http-sweep", "2 real improvements (largest: haproxy mix-http-sweep", "## Sustainable rate\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("bench compare's output lacks %q:\n%s", want, out)
		}
	}
}

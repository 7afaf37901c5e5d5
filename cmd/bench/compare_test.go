package main

import (
	"bench/internal/golden"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// compareDir holds bench compare's goldens: input CSVs and, for each case,
// the expected standard output (<case>.out) and error (<case>.err).
//
// old.csv and new.csv are one machine's sessions of 12 and 13 October.
// Under ka-1k: nginx regressed by 11% (U), haproxy splice-auto improved
// (U), squid ran alike (a tie), devel -s0 moved by noise that is not a
// change (U), tinyproxy ran in the old session only; under ka-1m devel
// improved and nginx did not change (3 runs a side: by the ranges); dante
// ran in the new session only. intel.csv is another machine's.
// p99-doubled.csv is new.csv with nginx's p99 under ka-1k doubled (9.8
// to 19.4-19.8 ms), every other latency as in old.csv.
var compareDir = filepath.Join("..", "..", "testdata", "compare")

func TestCmdCompare(t *testing.T) {
	in := func(names ...string) []string { return inDir(compareDir, names...) }
	cases := []struct {
		name string
		args []string
	}{
		{"md", in("old.csv", "new.csv")},
		{"tsv", append([]string{"--format", "tsv"}, in("old.csv", "--", "new.csv")...)},
		{"json", append([]string{"--format", "json"}, in("old.csv", "new.csv")...)},
		// nginx's regression is past the gate: the tables, then the error
		{"fail-over", append([]string{"--fail-over", "10%"}, in("old.csv", "new.csv")...)},
		// the latency: nginx's doubled p99 is a real change, and past the
		// gate a regression; the other cells tie
		{"p99", append([]string{"--metric", "p99"}, in("old.csv", "p99-doubled.csv")...)},
		{"p99-fail-over", append([]string{"--metric", "p99", "--fail-over", "50%"}, in("old.csv", "p99-doubled.csv")...)},
		{"unknown-metric", append([]string{"--metric", "p42"}, in("old.csv", "new.csv")...)},
		{"machines-refused", in("old.csv", "intel.csv")},
		{"across-machines", append([]string{"--across-machines"}, in("old.csv", "intel.csv")...)},
		{"three-files", in("old.csv", "new.csv", "intel.csv")},
		{"missing-file", in("old.csv", "--", "new.csv", "no-such-file.csv")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := cmdCompare(&stdout, &stderr, c.args)
			out, errPath := filepath.Join(compareDir, c.name+".out"), filepath.Join(compareDir, c.name+".err")
			if golden.Updating() { // either may be stale
				os.Remove(out)
				os.Remove(errPath)
			}
			if stdout.Len() > 0 || err == nil {
				golden.Check(t, out, stdout.Bytes())
			}
			if err != nil {
				golden.Check(t, errPath, []byte(printed(err, compareDir, "testdata/compare/")))
			} else if _, statErr := os.Stat(errPath); statErr == nil && !golden.Updating() {
				t.Errorf("bench compare %s succeeded; %s expects an error", strings.Join(c.args, " "), errPath)
			}
		})
	}
}

// A gate the regression does not pass lets the comparison succeed.
func TestCmdCompareUnderTheGate(t *testing.T) {
	var stdout, stderr bytes.Buffer
	args := append([]string{"--fail-over", "15%"}, inDir(compareDir, "old.csv", "new.csv")...)
	if err := cmdCompare(&stdout, &stderr, args); err != nil {
		t.Errorf("bench compare %s: %v; want no error", strings.Join(args, " "), err)
	}
}

func TestCmdCompareBadGate(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := cmdCompare(&stdout, &stderr, []string{"--fail-over", "ten", "a.csv", "b.csv"})
	if err == nil || !strings.Contains(stderr.String(), "want a percentage") {
		t.Errorf("--fail-over ten: err %v, stderr %q; want the flag refused", err, stderr.String())
	}
}

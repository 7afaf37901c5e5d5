package main

import (
	"bench/internal/chromium"
	"bench/internal/golden"
	"bench/report/results"
	"bytes"
	"encoding/csv"
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"slices"
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

// lowered writes to a temporary directory a copy of the session files
// with the runs of nginx's HTTP cells (proxy nginx, mode http) lowered:
// their requests and bytes scaled by factor. It returns the copy's path
// and how many such cells it lowered (machine and load).
func lowered(t *testing.T, files []string, factor float64) (string, map[string]bool) {
	t.Helper()
	rows, err := results.ReadFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "lowered.csv")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := csv.NewWriter(f)
	w.Write(results.Header)
	lows, highs := map[string]float64{}, map[string]float64{}
	for _, r := range rows {
		if r.Proxy == "nginx" && r.Mode == results.HTTP {
			v := r.Figure()
			if low, ok := lows[r.Load]; !ok || v < low {
				lows[r.Load] = v
			}
			highs[r.Load] = max(highs[r.Load], v)
			r.Requests = int64(math.Round(float64(r.Requests) * factor))
			r.Bytes = int64(math.Round(float64(r.Bytes) * factor))
		}
		w.Write(r.Record())
	}
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	// lowered, a cell's fastest run is slower than its slowest was, or its
	// runs spread wider than the change
	apart := map[string]bool{}
	for load, low := range lows {
		apart[load] = highs[load]*factor < low
	}
	return path, apart
}

// TestCompareReferenceLowered compares the reference session with a copy
// of it whose nginx HTTP cells ran 20% slower: its first line counts
// them, and them only, as real regressions, but for a cell whose runs
// spread wider than that, which it says is within noise; every other cell is within
// noise ("~"); each table has its geomean row. The page of the same
// comparison opens in Chromium with its tables and a chart under each,
// laid out as the session's page is (chromium.CheckLayout) at 1400 and
// 420 px: a bar with its title for each side of each cell.
func TestCompareReferenceLowered(t *testing.T) {
	ref, err := filepath.Glob(filepath.Join("..", "..", "data", "*.csv"))
	if err != nil || len(ref) == 0 {
		t.Fatalf("the reference session's files: %v, %v", ref, err)
	}
	low, apart := lowered(t, ref, 0.8)
	nginx := 0
	for _, a := range apart {
		if a {
			nginx++
		}
	}
	if nginx == 0 {
		t.Fatalf("the reference session has no nginx HTTP cell whose runs spread less than 20%%: %v", apart)
	}
	args := append(append(slices.Clone(ref), "--"), low)
	var stdout, stderr bytes.Buffer
	if err := cmdCompare(&stdout, &stderr, args); err != nil {
		t.Fatalf("bench compare %s: %v", strings.Join(args, " "), err)
	}
	lines := strings.Split(stdout.String(), "\n")

	var family string
	tables, geomeans, others, bars := 0, 0, 0, 0
	var regressed []string
	for _, l := range lines {
		if f, ok := strings.CutPrefix(l, "## "); ok {
			family = f
		}
		if strings.HasPrefix(l, "### ") {
			tables++
		}
		if !strings.HasPrefix(l, "| ") || strings.HasPrefix(l, "| scenario ") {
			continue
		}
		cols := strings.Split(strings.Trim(l, "|"), "|")
		for i := range cols {
			cols[i] = strings.TrimSpace(cols[i])
		}
		scenario, proxy, change, test := cols[0], cols[1], cols[4], cols[5]
		if scenario != "geomean" {
			// a bar for each side's median
			for _, median := range cols[2:4] {
				if median != "" && median != "-" {
					bars++
				}
			}
		}
		switch {
		case scenario == "geomean":
			geomeans++
		case family == "HTTP proxy" && proxy == "nginx":
			load, _, _ := strings.Cut(scenario, ",")
			if !apart[load] {
				// its runs spread wider than the change: within noise
				if change != "~" || !strings.HasPrefix(test, "ranges overlap") {
					t.Errorf("nginx %s, its runs spread over 20%%: change %q, test %q; want ~ and ranges overlap", scenario, change, test)
				}
				others++
				continue
			}
			if !strings.HasPrefix(change, "-20.0% ±") || !strings.HasPrefix(test, "ranges apart") {
				t.Errorf("nginx %s: change %q, test %q; want -20.0%% ±... and ranges apart", scenario, change, test)
			}
			regressed = append(regressed, scenario)
		default:
			others++
			if change != "~" {
				t.Errorf("%s, %s %s: change %q; want ~ (left alone)", family, scenario, proxy, change)
			}
		}
	}
	if len(regressed) != nginx {
		t.Errorf("nginx HTTP rows %q; want %d", regressed, nginx)
	}
	want := fmt.Sprintf("%d real regressions (largest: nginx http-", nginx)
	tail := fmt.Sprintf("no real improvement, %d cells within noise", others)
	if !strings.HasPrefix(lines[0], want) || !strings.Contains(lines[0], "-20.0% ±") || !strings.HasSuffix(lines[0], tail) {
		t.Errorf("first line %q; want %q..., -20.0%% ±..., ...%q", lines[0], want, tail)
	}
	if tables == 0 || geomeans != tables {
		t.Errorf("%d tables, %d geomean rows; want one per table", tables, geomeans)
	}

	stdout.Reset()
	if err := cmdCompare(&stdout, &stderr, append([]string{"--format", "html"}, args...)); err != nil {
		t.Fatalf("bench compare --format html: %v", err)
	}
	page := stdout.Bytes()
	for what, n := range map[string]int{`<table class="compare">`: tables, `<tr class="geomean">`: tables, `<p class="summary"><strong>` + html.EscapeString(lines[0]) + `</strong>`: 1} {
		if got := bytes.Count(page, []byte(what)); got != n {
			t.Errorf("the page has %d of %s; want %d", got, what, n)
		}
	}
	// a bar chart of old against new under each table, no other chart,
	// drawn to fit a desktop's window and a phone's
	chromium.CheckPage(t, page, "compare-page", tables, 0, 0)
	for _, width := range []int{1400, 420} {
		chromium.CheckLayout(t, page, fmt.Sprintf("compare-page-%d", width), width, bars)
	}
}

package main

import (
	"bench/internal/chromium"
	"bench/internal/golden"
	"bench/report/compare"
	"bench/results"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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
// with the runs of nginx's cells lowered: their requests and bytes scaled
// by factor. It returns the copy's path.
func lowered(t *testing.T, files []string, factor float64) string {
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
	for _, r := range rows {
		if r.Proxy == "nginx" {
			r.Requests = int64(math.Round(float64(r.Requests) * factor))
			r.Bytes = int64(math.Round(float64(r.Bytes) * factor))
		}
		w.Write(r.Record())
	}
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	return path
}

// mdTables are the markdown tables of a text under its "## " headings,
// each a list of rows of trimmed cells, its header and rule left out.
func mdTables(text string) map[string][][][]string {
	out := map[string][][][]string{}
	var heading string
	inTable := false
	for _, l := range strings.Split(text, "\n") {
		if h, ok := strings.CutPrefix(l, "## "); ok {
			heading = h
		}
		if strings.HasPrefix(l, "|:") {
			continue // the rule under the header
		}
		if !strings.HasPrefix(l, "| ") {
			inTable = false
			continue
		}
		if !inTable {
			inTable = true
			out[heading] = append(out[heading], nil)
			continue // the header
		}
		cols := strings.Split(strings.Trim(l, "|"), "|")
		for i := range cols {
			cols[i] = strings.TrimSpace(cols[i])
		}
		ts := out[heading]
		ts[len(ts)-1] = append(ts[len(ts)-1], cols)
	}
	return out
}

// TestCompareReferenceLowered compares the reference session with a copy
// of it whose nginx cells all ran 15% slower: the first table lists the
// real changes, its first row the largest of them, every one nginx's;
// the roll-up by column names nginx first, with as many real changes for
// the worse and none for the better, and its geomean the 15%; every
// other column has no real change. The json says the same. The page of
// the same comparison holds the same tables, and opens in Chromium laid
// out as the session's page is (chromium.CheckLayout) at 1400 and 420
// px: a bar with its title for each cell compared; its tables fit as
// the session's page's do (chromium.CheckTables).
func TestCompareReferenceLowered(t *testing.T) {
	ref := []string{referenceSession}
	low := lowered(t, ref, 0.85)
	args := append(append(slices.Clone(ref), "--"), low)
	var stdout, stderr bytes.Buffer
	if err := cmdCompare(&stdout, &stderr, args); err != nil {
		t.Fatalf("bench compare %s: %v", strings.Join(args, " "), err)
	}
	text := stdout.String()
	tables := mdTables(text)
	changes, columns := tables["Real changes, largest first"], tables["By column"]
	if len(changes) != 1 || len(changes[0]) == 0 || len(columns) != 1 {
		t.Fatalf("%d tables of changes (%v), %d of columns; want one each, with rows", len(changes), changes, len(columns))
	}
	// every table's real changes, from the tables of the families
	largest, real, compared := 0.0, 0, 0
	for heading, ts := range tables {
		if heading == "Real changes, largest first" || heading == "By column" {
			continue
		}
		for _, rows := range ts {
			for _, r := range rows {
				scenario, proxy, change := r[0], r[1], r[4]
				if scenario == "geomean" {
					continue
				}
				if change != "–" {
					compared++
				}
				if change == "~" || change == "–" {
					continue
				}
				real++
				if proxy != "nginx" {
					t.Errorf("%s, %s %s: change %q; want ~ (left alone)", heading, scenario, proxy, change)
				}
				pct, _, _ := strings.Cut(change, "%")
				v, err := strconv.ParseFloat(pct, 64)
				if err != nil {
					t.Fatalf("%s, %s %s: change %q: %v", heading, scenario, proxy, change, err)
				}
				largest = math.Max(largest, math.Abs(v))
			}
		}
	}
	first := changes[0][0]
	if got, want := first[5], fmt.Sprintf("%+.1f%%", -largest); !strings.HasPrefix(got, want) || first[2] != "nginx" {
		t.Errorf("first row of the changes %q: change %q of %s; want nginx's %s..., the largest", first, got, first[2], want)
	}
	if len(changes[0]) != real {
		t.Errorf("%d rows of changes; want %d, the tables' real changes", len(changes[0]), real)
	}
	top := columns[0][0]
	if want := fmt.Sprintf("%d worse, 0 better", real); top[0] != "nginx" || top[2] != want || !strings.HasPrefix(top[1], "-15.0% of ") {
		t.Errorf("first row of the columns %q; want nginx, -15.0%% of ..., %q", top, want)
	}
	for _, r := range columns[0][1:] {
		if r[2] != "none" {
			t.Errorf("column %q: %q; want no real change", r[0], r[2])
		}
	}

	stdout.Reset()
	if err := cmdCompare(&stdout, &stderr, append([]string{"--format", "json"}, args...)); err != nil {
		t.Fatalf("bench compare --format json: %v", err)
	}
	var js struct {
		Changes []compare.Change       `json:"changes"`
		Columns []compare.ColumnChange `json:"columns"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &js); err != nil {
		t.Fatal(err)
	}
	if len(js.Changes) != real || js.Changes[0].Proxy != "nginx" || math.Abs(*js.Changes[0].Change+largest) > 0.05 ||
		js.Columns[0].Proxy != "nginx" || js.Columns[0].Worse != real {
		t.Errorf("json: %d changes, the first %+v, the first column %+v; want %d, nginx's %.1f%% first, nginx with %d worse", len(js.Changes), js.Changes[0], js.Columns[0], real, -largest, real)
	}

	stdout.Reset()
	if err := cmdCompare(&stdout, &stderr, append([]string{"--format", "html"}, args...)); err != nil {
		t.Fatalf("bench compare --format html: %v", err)
	}
	page := stdout.Bytes()
	lines := strings.SplitN(text, "\n", 2)
	families := strings.Count(text, "\n### ")
	for what, n := range map[string]int{`<table class="compare">`: families, `<tr class="geomean">`: families,
		`<table class="changes">`: 1, `<table class="columns">`: 1, `<p class="summary"><strong>` + html.EscapeString(lines[0]) + `</strong>`: 1} {
		if got := bytes.Count(page, []byte(what)); got != n {
			t.Errorf("the page has %d of %s; want %d", got, what, n)
		}
	}
	// its first row of data is the text's
	_, after, _ := bytes.Cut(page, []byte(`<table class="changes">`))
	row := fmt.Sprintf("<tr><th>%s</th><td>%s</td>", html.EscapeString(first[0]), html.EscapeString(first[1]))
	if !bytes.Contains(after[:min(len(after), 2000)], []byte(row)) {
		t.Errorf("the page's table of changes does not begin with %q", row)
	}
	// a chart of the changes under each table, no other chart, drawn to
	// fit a desktop's window and a phone's
	chromium.CheckPage(t, page, "compare-page", families, 0, 0)
	for _, width := range []int{1400, 420} {
		chromium.CheckLayout(t, page, fmt.Sprintf("compare-page-%d", width), width, compared)
		chromium.CheckTables(t, page, fmt.Sprintf("compare-page-tables-%d", width), width)
	}
}

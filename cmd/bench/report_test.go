package main

import (
	"bench/internal/golden"
	"bench/results"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// reportDir holds the CLI goldens: input CSVs and, for each case, the
// expected standard output (<case>.out) or error (<case>.err).
var reportDir = filepath.Join("..", "..", "testdata", "report")

// inDir returns the paths of names in dir; a "--" stays as it is.
func inDir(dir string, names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n
		if n != "--" {
			out[i] = filepath.Join(dir, n)
		}
	}
	return out
}

// printed is err as main prints it, with the paths of the files in dir
// as the user typed them relative to the repository, under shown.
func printed(err error, dir, shown string) string {
	return "bench: " + strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), shown) + "\n"
}

func TestCmdReport(t *testing.T) {
	in := func(names ...string) []string { return inDir(reportDir, names...) }
	cases := []struct {
		name string
		args []string
	}{
		// both sessions of one machine, newest first, markdown
		{"m4-md", in("m4.csv")},
		{"m4-tsv", append([]string{"--format", "tsv"}, in("m4.csv")...)},
		{"m4-json", append([]string{"--format", "json"}, in("m4.csv")...)},
		// the latency under each family's tables
		{"m4-latency", append([]string{"--latency"}, in("m4.csv")...)},
		// the detail: headlines, spreads, the ! mark, the notes grouped
		{"m4-detail", append([]string{"--detail"}, in("m4.csv")...)},
		// one session picked
		{"m4-session", append([]string{"--session", "2026-10-12"}, in("m4.csv")...)},
		// two machines' newest sessions in "M4 / Intel / average" cells
		{"combined", append([]string{"--layout", "combined", "--format", "tsv"}, in("m4.csv", "intel.csv")...)},
		// bad input: nothing on stdout, the place in the error
		{"missing-column", in("missing-column.csv")},
		{"not-a-number", in("not-a-number.csv")},
		{"unknown-mode", in("unknown-mode.csv")},
		{"unknown-group", in("unknown-group.csv")},
		{"missing-file", in("m4.csv", "no-such-file.csv")},
		{"unknown-session", append([]string{"--session", "2026-01-01"}, in("m4.csv")...)},
		{"unknown-format", append([]string{"--format", "pdf"}, in("m4.csv")...)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := cmdReport(&stdout, &stderr, c.args)
			// the files' paths as the user typed them, as in errors
			got, ext := strings.ReplaceAll(stdout.String(), reportDir+string(filepath.Separator), "testdata/report/"), ".out"
			if err != nil {
				if stdout.Len() > 0 {
					t.Errorf("bench report %s failed (%v) but wrote to stdout:\n%s", strings.Join(c.args, " "), err, got)
				}
				got, ext = printed(err, reportDir, "testdata/report/"), ".err"
			}
			if golden.Updating() { // the other of .out and .err is stale
				os.Remove(filepath.Join(reportDir, c.name+".out"))
				os.Remove(filepath.Join(reportDir, c.name+".err"))
			}
			golden.Check(t, filepath.Join(reportDir, c.name+ext), []byte(got))
		})
	}
}

func TestCmdReportNoFiles(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := cmdReport(&stdout, &stderr, nil)
	if err == nil || stdout.Len() > 0 || !strings.Contains(stderr.String(), "Usage: bench report") {
		t.Errorf("bench report with no files: err %v, stdout %q, stderr %q; want an error and the usage", err, stdout.String(), stderr.String())
	}
}

// TestCmdReportPathSpellings: the page of the reference session is the
// same page, with the same percentile charts and time series drawn from
// the runs' output kept beside it, whichever way its files' paths are
// spelled: bench report --format html ./data/*.csv as data/*.csv.
func TestCmdReportPathSpellings(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "data", "*.csv"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no session file in data/: %v", err)
	}
	page := func(spell func(string) string) string {
		args := []string{"--format", "html"}
		for _, f := range files {
			args = append(args, spell(f))
		}
		var stdout, stderr bytes.Buffer
		if err := cmdReport(&stdout, &stderr, args); err != nil {
			t.Fatalf("bench report %s: %v", strings.Join(args, " "), err)
		}
		return stdout.String()
	}
	charts := func(page string) string {
		return fmt.Sprintf("%d bar, %d percentile, %d series charts", strings.Count(page, `<figure class="chart bar">`),
			strings.Count(page, `<figure class="chart hdr">`), strings.Count(page, `<figure class="chart series">`))
	}
	want := page(func(f string) string { return f })
	if !strings.Contains(want, `<figure class="chart hdr">`) || !strings.Contains(want, `<figure class="chart series">`) {
		t.Fatalf("the page of data/*.csv has %s; want percentile charts and time series", charts(want))
	}
	for _, c := range []struct {
		name  string
		spell func(string) string
	}{
		{"./data/x.csv", func(f string) string { return "./" + f }},
		{"data//x.csv", func(f string) string { return filepath.Dir(f) + "//" + filepath.Base(f) }},
		{"data/../data/x.csv", func(f string) string { return filepath.Dir(f) + "/../data/" + filepath.Base(f) }},
	} {
		if got := page(c.spell); got != want {
			t.Errorf("the page of %s differs from that of data/x.csv: %s; want %s", c.name, charts(got), charts(want))
		}
	}
}

// TestCmdReportReference: bench report data/*.csv is data/RESULTS.md's
// tables still; with --detail every cell of the reference session's
// ranked tables has its spread of 3 runs; and each cell whose runs
// failed any of their exchanges (results.Row.Failures) has its ! mark and
// share, in the markdown with and without --detail and on the page, the
// page's lighter within 1%.
func TestCmdReportReference(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "data", "*.csv"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no session file in data/: %v", err)
	}
	want, err := os.ReadFile(filepath.Join("..", "..", "data", "RESULTS.md"))
	if err != nil {
		t.Fatal(err)
	}
	var plain, detail bytes.Buffer
	if err := cmdReport(&plain, io.Discard, files); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(want), plain.String()) || plain.Len() == 0 {
		t.Error("bench report data/*.csv is not the end of data/RESULTS.md")
	}
	if err := cmdReport(&detail, io.Discard, append([]string{"--detail"}, files...)); err != nil {
		t.Fatal(err)
	}
	rows, err := results.ReadFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	// the cells beyond 1%, by the rows themselves
	type cell struct{ mode, load, proxy string }
	bad, all, latency := map[cell]int64{}, map[cell]int64{}, map[cell]bool{}
	for _, r := range rows {
		k := cell{string(r.Mode), r.Load, r.Proxy}
		bad[k] += r.Failures()
		all[k] += r.Requests + r.Failures()
		latency[k] = latency[k] || r.HasLatency
	}
	// cells beyond 1%, and with any failed exchange; on the page, a cell
	// with a latency is marked in its latency table too
	marked, failed, pageMarked, pageFailed := 0, 0, 0, 0
	for k, b := range bad {
		n := 1
		if latency[k] {
			n = 2
		}
		if float64(b) > 0.01*float64(all[k]) {
			marked++
			pageMarked += n
		}
		if b > 0 {
			failed++
			pageFailed += n
		}
	}
	if marked == 0 || failed == marked {
		t.Fatalf("%d cells of the reference session beyond 1%% errors, %d with any; the test needs both kinds", marked, failed)
	}
	// the mark and the share, in the markdown with and without the detail
	// and on the page
	var page bytes.Buffer
	if err := cmdReport(&page, io.Discard, append([]string{"--format", "html"}, files...)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, out string
		mark      *regexp.Regexp
		want      int
	}{
		{"bench report", plain.String(), regexp.MustCompile(` !<?[0-9.]+% ±`), failed},
		{"bench report --detail", detail.String(), regexp.MustCompile(` !<?[0-9.]+% ±`), failed},
		{"bench report --format html", page.String(), regexp.MustCompile(`<span class="err" title="[0-9.]+% of its exchanges failed[^"]*">![0-9.]+%</span>`), pageMarked},
		{"bench report --format html, within 1%", page.String(), regexp.MustCompile(`<span class="err minor" title="<?[0-9.]+% of its exchanges failed[^"]*">!<?[0-9.]+%</span>`), pageFailed - pageMarked},
	} {
		if got := len(c.mark.FindAllString(c.out, -1)); got != c.want {
			t.Errorf("%s: %d cells marked with their share of failed exchanges; want %d of the rows' (%d with any, %d beyond 1%%)", c.name, got, c.want, failed, marked)
		}
	}
	for name, out := range map[string]string{"bench report": plain.String(), "bench report --detail": detail.String()} {
		if strings.Contains(out, "n=1 ") || strings.Contains(out, "n=2 ") || !strings.Contains(out, "n=3") {
			t.Errorf("%s: want n=3 in every cell of the reference session (556 runs, all ok)", name)
		}
		if !strings.Contains(out, "- mix-http-3k, p99 at its fixed rate: ") || !strings.Contains(out, "## Summary") {
			t.Errorf("%s: no summary, or no headline of mix-http-3k by its p99", name)
		}
	}
}

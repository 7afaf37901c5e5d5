package bench_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/harness"
	"bench/internal/chromium"
	"bench/report"
	"bench/results"
)

// TestDataResults: data/RESULTS.md is what `bench report data/*.csv`
// renders from the session files beside it, under a few lines that say
// what the session was; so that the README's promise holds on a fresh
// clone and the page is never older than its files.
func TestDataResults(t *testing.T) {
	files, rows := dataSession(t)
	opt := report.Options{Format: report.FormatMarkdown}
	var err error
	if opt.Files, err = results.ReadMetas(files); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := report.Render(&b, rows, opt); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join("data", "RESULTS.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(page), b.String()) {
		t.Errorf("data/RESULTS.md does not end with what bench report data/*.csv renders; render it again:\n  bench report data/*.csv")
	}
	for _, f := range files {
		runs := strings.TrimSuffix(f, ".csv") + ".runs"
		if st, err := os.Stat(runs); err != nil || !st.IsDir() {
			t.Errorf("%s: no kept tool output beside it (%s)", f, runs)
		}
	}
}

// TestDataLatency: `bench report --latency data/*.csv` gives p50 / p99
// under the HTTP, tunnel, relay, HTTPS and mix tables of the reference
// session, every family whose load tool measures it.
func TestDataLatency(t *testing.T) {
	_, rows := dataSession(t)
	tables, err := report.Tables(rows, report.Options{Latency: true})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, tb := range tables {
		if tb.Kind != "latency" {
			continue
		}
		for _, r := range tb.Rows {
			for _, c := range r.Cells {
				if c.P50 != nil && c.P99 != nil && *c.P50 > 0 && *c.P99 >= *c.P50 && strings.Contains(c.Text, " / ") {
					got[tb.Family] = true
				}
			}
		}
	}
	for _, fam := range []string{"HTTP proxy", "CONNECT tunnel", "SOCKSv5 tunnel", "TCP relay", "HTTPS", "mix scenarios"} {
		if !got[fam] {
			t.Errorf("no latency table with p50 / p99 for %s", fam)
		}
	}
}

// dataSession returns the session files of data/ and their runs.
func dataSession(t *testing.T) ([]string, []results.Row) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("data", "*.csv"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no session file in data/: %v", err)
	}
	rows, err := results.ReadFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	return files, rows
}

// TestDataPage: data/<session>.html (what `bench report --format html
// data/*.csv` renders: cmd/bench's TestPublishedPages) opens in Chromium
// with the charts of the reference session: its bar charts, the mixes' percentile charts from
// the histograms of bench mix's kept output, and the time series of the
// streams and mixes (it kept no CPU series, which the page says); and with
// the CPU profiles of its cells' median runs, a cell's link showing its
// flame graph and every frame's name inside its frame (CheckFlames).
func TestDataPage(t *testing.T) {
	files, rows := dataSession(t)
	got := checkPublished(t, files, "data/*.csv")
	tables, err := report.Tables(rows, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	bars := 0
	for _, tb := range tables {
		if tb.Kind == "throughput" || tb.Kind == "handshake" {
			bars++
		}
	}
	data, err := harness.ReadRunData(files, rows)
	if err != nil {
		t.Fatal(err)
	}
	hdr, series := map[string]bool{}, map[results.Cell]bool{}
	for i := range rows {
		if d := data[rows[i].ID()]; d != nil {
			if len(d.Intervals) > 0 || len(d.CPU) > 0 {
				series[rows[i].Cell()] = true
			}
			if d.Histogram != "" {
				hdr[results.ScenarioName(rows[i].Mode, rows[i].Load)] = true
			}
		}
	}
	if len(hdr) != 8 {
		t.Errorf("%d mix scenarios with histograms; want the reference session's 8", len(hdr))
	}
	if !strings.Contains(string(got), "no time series") && len(series) == 0 {
		t.Errorf("the page neither draws series nor says they are absent")
	}
	chromium.CheckPage(t, got, "reference-session", bars, len(hdr), len(series))
	chromium.CheckFlames(t, got, "reference-session-flames", 1400)
}

// checkPublished returns the page published beside the session files
// (spelt glob on bench report's command line); cmd/bench's
// TestPublishedPages checks that it is what bench report renders.
func checkPublished(t *testing.T, files []string, glob string) []byte {
	t.Helper()
	published := results.PagePath(files[0])
	got, err := os.ReadFile(published)
	if err != nil {
		t.Fatalf("%v; render it:\n  bench report --format html %s > %s", err, glob, published)
	}
	return got
}

// TestDataVerdicts holds the reference session's verdicts to what its
// files say: haproxy splice-auto's TCP relay ka-50k-2000 cell, whose
// runs timed out 165 exchanges, carries its share and is not the row's
// best over cells that failed none; no headline names a leader over a
// runner-up it cannot be told from; every TLS tunnel and handshake cell
// of a proxy whose runs the client or the origin paced carries ‡; and
// every cell with a failed exchange carries !.
func TestDataVerdicts(t *testing.T) {
	_, rows := dataSession(t)
	tables, err := report.Tables(rows, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	paced := map[string]int{} // a cell's runs paced elsewhere, by proxy and load
	runs := map[string]int{}
	for _, r := range rows {
		k := r.Proxy + " " + string(r.Mode) + " " + r.Load
		runs[k]++
		if r.Bound.Elsewhere() {
			paced[k]++
		}
	}
	found := false
	for _, tb := range tables {
		for _, r := range tb.Rows {
			for _, c := range r.Cells {
				if c.ErrorShare != nil && !strings.Contains(c.Text, report.ErrorMark) {
					t.Errorf("%s %s %s: %.4f%% of its exchanges failed and its text %q has no !", tb.Family, r.Label, c.Proxy, *c.ErrorShare*100, c.Text)
				}
				if tb.Family == report.FamilyOf(results.Relay, "ka-50k-2000") && r.Label == "ka-50k-2000, k req/s" && c.Proxy == "haproxy splice-auto" {
					found = true
					if c.Star || !strings.Contains(c.Text, report.ErrorMark) {
						t.Errorf("haproxy splice-auto's relay ka-50k-2000: %q, star %v; want its failures marked and not the row's best", c.Text, c.Star)
					}
				}
				if (tb.Family == report.FamTunnel || tb.Family == report.FamHandshake) && c.Median != nil && len(c.IDs) > 0 {
					id := c.IDs[0]
					k := id.Proxy + " " + string(id.Mode) + " " + id.Load
					if want := 2*paced[k] > runs[k] && c.Group != results.Baseline; c.Bound != want { // no proxy's, as in every table
						t.Errorf("%s %s %s: ‡ %v; %d of its %d runs paced by the client or the origin", tb.Family, r.Label, c.Proxy, c.Bound, paced[k], runs[k])
					}
				}
			}
		}
		for _, h := range report.Headlines(tb) {
			if h.RunnerUp != "" && !h.Real && (!h.Level || !strings.Contains(h.String(), " level") && !strings.Contains(h.String(), "not told apart")) {
				t.Errorf("%s: a leader named over a runner-up it cannot be told from: %s", tb.Family, h)
			}
		}
	}
	if !found {
		t.Error("no haproxy splice-auto cell in the relay's ka-50k-2000 row")
	}
}

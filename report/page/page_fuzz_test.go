package page

import (
	"bytes"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"bench/report"
	"bench/report/internal/reporttest"
	"bench/report/profiles"
	"bench/results"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// fuzzSession is a small session of the page's every kind of part, from
// fuzzed names, a note and figures: no proxy, proxy and haproxy in
// HTTP ka-1k and a mix, two runs each, the first of seconds, requests,
// bytes and p99 as given and the second ordinary; each run with its CPU
// series, a mix's with a histogram, and proxy's runs with a profile in a
// runs folder named runs of dir.
func fuzzSession(t *testing.T, dir, proxy, session, machine, note, runs string, seconds float64, requests, nbytes int64, p99 float64) ([]results.Row, report.Options) {
	t.Helper()
	folder := filepath.Join(dir, runs)
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Skipf("no folder %q: %v", runs, err) // a name no file system takes
	}
	var rows []results.Row
	data := map[results.RunID]*results.RunData{}
	start := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	empty, _ := hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3).Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	full := hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
	for v := range int64(1000) {
		full.RecordValue(200 + v)
	}
	some, _ := full.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	i := 0
	for _, l := range []struct {
		mode results.Mode
		load string
	}{{results.HTTP, "ka-1k"}, {results.MixHTTP, "mix"}} {
		for _, c := range []struct {
			proxy string
			group results.Group
		}{{"no proxy", results.Baseline}, {proxy, results.Copy}, {"haproxy", results.Copy}} {
			for rep := 1; rep <= 2; rep++ {
				i++
				r := results.Row{Machine: machine, Session: session, Proxy: c.proxy, Kind: "nginx", Group: c.group,
					Mode: l.mode, Load: l.load, Rep: rep, Started: start, Seconds: 4, Status: results.OK, Bound: results.BoundProxy,
					CPUProxy: 3.9, PeakMemBytes: 2e7, Requests: 100000, Bytes: 1e8,
					P50Ms: 1, P99Ms: 5, HasLatency: true}
				start = start.Add(10 * time.Second)
				if rep == 1 {
					r.Seconds, r.Requests, r.Bytes, r.P99Ms = seconds, requests, nbytes, p99
				}
				d := &results.RunData{RunID: r.ID(), Started: r.Started, CPU: map[string][]float64{"proxy": {0.9, 0.8}, "client": {0.5, 0.4}}}
				d.Intervals = []results.Interval{{Seconds: r.Seconds / 2, Requests: r.Requests / 2, Bytes: r.Bytes / 2}, {Seconds: r.Seconds / 2, Requests: r.Requests / 2, Bytes: r.Bytes / 2}}
				if l.mode == results.MixHTTP {
					r.P999Ms, r.HasP999 = 9, true
					d.Histogram = string(some)
					if rep == 1 && requests == 0 {
						d.Histogram = string(empty)
					}
				}
				if c.proxy == proxy {
					d.Files = filepath.Join(folder, fmt.Sprintf("%04d-%s-%s-%d", i, results.Slug(c.proxy), results.ScenarioName(r.Mode, r.Load), r.Rep))
					d.Profile = &results.ProfileNote{CallGraph: results.CallGraphFP, Samples: 100}
					folded := fmt.Sprintf("%s;main;%s %d\n%s;main;run 7\n", proxy, note, max(requests, 1), proxy)
					if err := os.WriteFile(d.Files+results.FoldedSuffix, []byte(folded), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				data[r.ID()] = d
				rows = append(rows, r)
			}
		}
	}
	meta := &results.Meta{Session: session, Notes: []string{note}, CommandLine: []string{"bench", "run", "--session", session}, Started: start}
	meta.Machine.Label = machine
	file := []results.SessionFile{{Path: filepath.Join(dir, runs+".csv"), Meta: meta}}
	own := func(rel string, page []byte) error { return nil }
	return rows, report.Options{Format: report.FormatHTML, Runs: data, Files: file, ProfilePage: own}
}

var (
	// attrURL is an attribute that names a URL, and its value.
	attrURL = regexp.MustCompile(`(?i)\s(?:xlink:)?(href|src|action|formaction|poster|srcset)\s*=\s*"([^"]*)"`)
	// attrNumber is an attribute of an SVG's that holds numbers.
	attrNumber = regexp.MustCompile(`\s(?:x|y|x1|x2|y1|y2|cx|cy|r|width|height|d|points|viewBox|transform)="([^"]*)"`)
	// cssURL is a url( of a style, and what it names.
	cssURL = regexp.MustCompile(`(?i)url\(\s*['"]?([^'")]*)`)
	// styles are the page's style sheets and style attributes.
	styles = regexp.MustCompile(`(?is)<style[^>]*>.*?</style>|\sstyle\s*=\s*"[^"]*"`)
)

// checkPage checks what a page of untrusted names owes its reader: its
// own scripts alone (scripts, as many as a plain page's), no link but to
// a file beside it (./) or a part of it (#), nothing fetched from
// elsewhere, and no figure that is not one (Inf, NaN) in its SVG's
// coordinates, or in its text where no name holds one.
func checkPage(t *testing.T, page string, scripts int, names string) {
	t.Helper()
	page = strings.ReplaceAll(withoutFont(page), profiles.FlameScript, "") // its own, whole
	if n := strings.Count(strings.ToLower(page), "<script"); n != scripts {
		t.Errorf("the page has %d <script; want %d, a plain page's", n, scripts)
	}
	for _, m := range attrURL.FindAllStringSubmatch(page, -1) {
		v := html.UnescapeString(m[2])
		if !strings.HasPrefix(v, "./") && !strings.HasPrefix(v, "#") {
			t.Errorf("%s=%q: want a path beginning with ./ or a fragment", m[1], m[2])
		}
		if strings.Contains(strings.ToLower(v), "javascript:") {
			t.Errorf("%s=%q: a script's link", m[1], m[2])
		}
	}
	for _, st := range styles.FindAllString(page, -1) {
		for _, m := range cssURL.FindAllStringSubmatch(html.UnescapeString(st), -1) {
			if !strings.HasPrefix(m[1], "data:") && !strings.HasPrefix(m[1], "#") {
				t.Errorf("url(%s: fetched from elsewhere", m[1])
			}
		}
	}
	for _, m := range attrNumber.FindAllStringSubmatch(page, -1) {
		if nonFiniteText.MatchString(m[1]) {
			t.Errorf("an SVG attribute holds %q", m[0])
		}
	}
	if !nonFiniteText.MatchString(names) {
		if m := nonFiniteText.FindStringIndex(page); m != nil {
			t.Errorf("the page says %q", page[max(0, m[0]-80):min(len(page), m[1]+20)])
		}
	}
}

// FuzzPage writes the page of a small session of fuzzed names, note and
// figures (fuzzSession) and checks it (checkPage): whatever a session's
// files hold, its page runs no script of theirs, links nothing outside
// itself and its runs, fetches nothing and draws no figure that is not
// one; and it never panics.
func FuzzPage(f *testing.F) {
	f.Add("nginx", "2026-12-01", "Xeon, 2 CPUs", "a note", "x.runs", 4.0, int64(100000), int64(1e8), 5.0)
	f.Add("@@tip 99999@@", "12:00#1", "epyc", "javascript:alert(1)", "javascript:document.documentElement.setAttribute('data-pwned','js')%0A%2F%2F.runs", 1e-309, int64(0), int64(0), 1e300)
	f.Add("@@tip 0@@", "epyc-12:00#1", "<script>alert(1)</script>", "\"><img src=http://x>", "epyc-12:00#1.runs", 1e300, int64(1)<<62, int64(1)<<62, 1e-300)
	f.Add("NaN", "+Inf", "url(http://x)", "@@/tip@@", "a b.runs", 1e100, int64(9007199254740993), int64(0), 0.0)
	base := func(t *testing.T) int {
		rows, opt := fuzzSession(t, t.TempDir(), "nginx", "s", "m", "n", "x.runs", 4, 100000, 1e8, 5)
		var b bytes.Buffer
		if err := render(&b, rows, opt); err != nil {
			t.Fatal(err)
		}
		return strings.Count(strings.ToLower(strings.ReplaceAll(b.String(), profiles.FlameScript, "")), "<script")
	}
	scripts := -1
	f.Fuzz(func(t *testing.T, proxy, session, machine, note, runs string, seconds float64, requests, nbytes int64, p99 float64) {
		if scripts < 0 {
			scripts = base(t)
		}
		// the columns and the folder: names the session could hold
		if proxy == "no proxy" || proxy == "haproxy" || strings.ContainsAny(runs, "/\x00") || runs == "" || runs == "." || runs == ".." || len(runs) > 200 {
			return
		}
		rows, opt := fuzzSession(t, t.TempDir(), proxy, session, machine, note, runs, seconds, requests, nbytes, p99)
		page, err := reporttest.RenderSafe(func(b *bytes.Buffer) error { return render(b, rows, opt) })
		if err != nil {
			if strings.HasPrefix(err.Error(), "panic:") {
				t.Fatal(err)
			}
			return // refused, as a reader would
		}
		checkPage(t, page, scripts, proxy+session+machine+note+runs)
	})
}

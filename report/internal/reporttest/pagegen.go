package reporttest

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"bench/results"
	"github.com/HdrHistogram/hdrhistogram-go"
)

// PageSession is a small session with every kind of chart: HTTP runs
// (wrk: no series of their own) with a ‡ and a † cell, relay streams
// with iperf3's intervals, and mixes with their histograms; every run
// with the roles' CPU each second.
func PageSession(t testing.TB) ([]results.Row, map[results.RunID]*results.RunData) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	var rows []results.Row
	data := map[results.RunID]*results.RunData{}
	start := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	cols := []struct {
		proxy string
		group results.Group
		speed float64
	}{{"no proxy", results.Baseline, 1.1}, {"nginx", results.Copy, 1}, {"haproxy", results.Copy, 0.8}, {"haproxy splice-auto", results.Splice, 0.9}}
	loads := []struct {
		mode results.Mode
		load string
	}{{results.HTTP, "ka-1k"}, {results.HTTP, "ka-1m"}, {results.Relay, "stream1"}, {results.MixHTTP, "mix"}, {results.MixHTTP, "mix-3k"}}
	for _, l := range loads {
		for _, c := range cols {
			for rep := 1; rep <= 3; rep++ {
				f := c.speed * (1 + 0.05*float64(rep-2))
				r := results.Row{Machine: "Xeon, 2 CPUs", Session: "2026-12-01", Proxy: c.proxy, Kind: "nginx", Group: c.group,
					Mode: l.mode, Load: l.load, Rep: rep, Started: start, Seconds: 4, Status: results.OK, Bound: results.BoundProxy,
					CPUProxy: 3.9, PeakMemBytes: 2e7, HasPipes: true}
				start = start.Add(10 * time.Second)
				switch {
				case results.Stream(l.load):
					r.Bytes = int64(f * 4e9)
				case l.load == "ka-1m":
					r.Requests, r.Bytes = int64(f*2000), int64(f*2e9)
				default:
					r.Requests, r.Bytes = int64(f*1e5), int64(f*1e8)
				}
				if !results.Stream(l.load) {
					r.P50Ms, r.P99Ms, r.HasLatency = 1/f, 5/f, true
				}
				if c.proxy == "nginx" && l.load == "ka-1k" {
					r.Bound = results.BoundClient // ‡
				}
				d := &results.RunData{RunID: r.ID(), Started: r.Started, CPU: map[string][]float64{}}
				for k := 0; k < 4; k++ {
					d.CPU["proxy"] = append(d.CPU["proxy"], 0.9+0.02*rng.Float64())
					d.CPU["client"] = append(d.CPU["client"], 0.5+0.1*rng.Float64())
					d.CPU["origin"] = append(d.CPU["origin"], 0.3+0.1*rng.Float64())
					if results.Stream(l.load) || l.mode == results.MixHTTP {
						d.Intervals = append(d.Intervals, results.Interval{Seconds: 1, Requests: r.Requests / 4, Bytes: r.Bytes / 4 * int64(3+k%2) / 4})
					}
				}
				if l.mode == results.MixHTTP {
					h := hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
					for range 5000 {
						h.RecordValue(int64(200 + rng.ExpFloat64()*800/f))
					}
					b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
					if err != nil {
						t.Fatal(err)
					}
					d.Histogram = string(b)
					r.P999Ms, r.HasP999 = 9/f, true
				}
				data[r.ID()] = d
				rows = append(rows, r)
			}
		}
	}
	return rows, data
}

// Noted gives pageSession's runs notes and errors: nginx's ka-1k runs
// one note whose numbers differ run to run (and 2% of their exchanges
// errored), haproxy's ka-1k one that is the same in each.
func Noted(rows []results.Row) []results.Row {
	for i := range rows {
		r := &rows[i]
		switch {
		case r.Load != "ka-1k":
		case r.Proxy == "nginx":
			r.Errors = r.Requests / 50
			r.Note = fmt.Sprintf("%d errors and 0 timeouts beside %d completed exchanges", r.Errors, r.Requests)
		case r.Proxy == "haproxy":
			r.Note = "9950 of 20000 connections"
		}
	}
	return rows
}

// BenchRows makes n runs over two machines, six modes, ten proxies and
// three repetitions, with loads enough to reach n.
func BenchRows(n int) []results.Row {
	modes := []results.Mode{results.HTTP, results.Connect, results.Socks, results.Relay, results.TLSTerm, results.MixHTTP}
	machines := []string{"ARM (M4)", "Intel (Skylake)"}
	rows := make([]results.Row, 0, n)
	for i := 0; len(rows) < n; i++ {
		load := fmt.Sprintf("ka-%dk", i)
		if i%2 == 1 {
			load = fmt.Sprintf("stream%d", i)
		}
		for _, mode := range modes {
			for _, m := range machines {
				for p := 0; p < 10; p++ {
					group := results.Copy
					if p >= 7 {
						group = results.Splice
					}
					for rep := 1; rep <= 3 && len(rows) < n; rep++ {
						bound := results.BoundProxy
						if (i+p+rep)%4 == 0 {
							bound = results.BoundClient
						}
						rows = append(rows, results.Row{Machine: m, Session: "2026-10-13", Proxy: fmt.Sprintf("proxy %d", p),
							Group: group, Mode: mode, Load: load, Rep: rep, Seconds: 10,
							Requests: int64(100000 + 1000*p + 37*rep + i), Bytes: int64(1e9 * (1 + p + rep)),
							CPUProxy: 9.5 + 0.1*float64(rep), PeakMemBytes: int64(2e7 + 1e6*p), Bound: bound, Status: "ok"})
					}
				}
			}
		}
	}
	return rows
}

// legendNames are the names of the marks a legend's entries explain.
func legendNames(entries []string) []string {
	var out []string
	for _, e := range entries {
		mark, _, _ := strings.Cut(e, ": ")
		for _, m := range []struct{ name, in string }{
			{"bold", "bold"}, {"*", "*"}, {"†", "†"}, {"‡", "‡"}, {"!", "!p%"}, {"±", "±p% n=r"}, {"–", "–"},
		} {
			if strings.Contains(strings.NewReplacer("**bold**", "bold", "<strong>bold</strong>", "bold").Replace(mark), m.in) {
				out = append(out, m.name)
			}
		}
	}
	return out
}

// UnexplainedMarkdown lists the marks of the markdown's tables that the
// legend under each does not explain: "HTTP proxy table 2: ‡".
func UnexplainedMarkdown(md string) []string {
	var out []string
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "|") {
			continue
		}
		start := i
		var cells []string
		for ; i < len(lines) && strings.HasPrefix(lines[i], "|"); i++ {
			if i > start+1 { // below the header and its rule
				parts := strings.Split(strings.Trim(lines[i], "|"), "|")
				cells = append(cells, parts[1:]...) // not the row's label
			}
		}
		if strings.HasPrefix(lines[start], "|  ") && strings.TrimSpace(strings.Split(lines[start], "|")[1]) == "" {
			continue // the Setup table: no figures
		}
		var legend []string
		for j := i; j < len(lines) && !strings.HasPrefix(lines[j], "|") && !strings.HasPrefix(lines[j], "#"); j++ {
			if lines[j] == "Marks:" {
				for j += 2; j < len(lines) && strings.HasPrefix(lines[j], "- "); j++ {
					legend = append(legend, strings.TrimPrefix(lines[j], "- "))
				}
				break
			}
		}
		names := legendNames(legend)
		for _, m := range mdMarks {
			used := slices.ContainsFunc(cells, func(c string) bool { return m.re.MatchString(strings.TrimSpace(c)) })
			if used && !slices.Contains(names, m.name) {
				out = append(out, "table at line "+lines[start]+": "+m.name)
			}
		}
	}
	return out
}

// UnexplainedPage lists the marks of the page's tables that the legend
// under each does not explain.
func UnexplainedPage(page string) []string {
	var out []string
	tables := regexp.MustCompile(`(?s)<table class="([^"]*)">(.*?)</table>(.*?)(?:<table|<h[1-4]|</body>)`)
	li := regexp.MustCompile(`(?s)<li>(.*?)</li>`)
	for _, m := range tables.FindAllStringSubmatch(page, -1) {
		class, body, after := m[1], m[2], m[3]
		if class == "setup" {
			continue
		}
		var cells []string
		for _, row := range strings.Split(body, "</tr>") {
			for _, td := range strings.Split(row, "<td")[1:] {
				cells = append(cells, "<td"+td)
			}
		}
		var legend []string
		if _, ul, ok := strings.Cut(after, `<ul class="legend">`); ok {
			ul, _, _ = strings.Cut(ul, "</ul>")
			for _, e := range li.FindAllStringSubmatch(ul, -1) {
				legend = append(legend, regexp.MustCompile(`</?span[^>]*>`).ReplaceAllString(e[1], ""))
			}
		}
		names := legendNames(legend)
		for _, mk := range pageMarks {
			used := slices.ContainsFunc(cells, func(c string) bool { return mk.re.MatchString(c) })
			if used && !slices.Contains(names, mk.name) {
				out = append(out, class+" table ("+strings.SplitN(body, "</tr>", 2)[0]+"): "+mk.name)
			}
		}
	}
	return out
}

// The marks a table's cells may carry, as the markdown and the page print
// them, each under the name of its legend's entry.
var (
	mdMarks = []struct {
		name string
		re   *regexp.Regexp
	}{
		{"bold", regexp.MustCompile(`\*\*[^*|]+\*\*`)},
		{"*", regexp.MustCompile(`(^| )\*( |$)`)},
		{"†", regexp.MustCompile(`†`)},
		{"‡", regexp.MustCompile(`‡`)},
		{"!", regexp.MustCompile(`![0-9.]+%`)},
		{"±", regexp.MustCompile(`±[0-9.]+% n=[0-9]+`)},
		{"–", regexp.MustCompile(`(^|\| *)–`)},
	}
	pageMarks = []struct {
		name string
		re   *regexp.Regexp
	}{
		{"bold", regexp.MustCompile(`<strong>`)},
		{"*", regexp.MustCompile(` \*( |<|$)`)},
		{"†", regexp.MustCompile(`†`)},
		{"‡", regexp.MustCompile(`‡`)},
		{"!", regexp.MustCompile(`class="err( minor)?"`)},
		{"±", regexp.MustCompile(`class="spread"`)},
		{"–", regexp.MustCompile(`<td>–`)},
	}
)

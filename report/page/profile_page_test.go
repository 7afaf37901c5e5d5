package page

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"bench/internal/chromium"
	"bench/internal/hotproxy"
	"bench/internal/testenv"
	"bench/report"
	"bench/report/internal/reporttest"
	"bench/report/profiles"
	"bench/results"
)

// profiledSession is pageSession with a CPU profile kept by every run of
// its proxies (the baseline has none), in a runs directory of the test's:
// the fixture hot.folded for nginx, hot-after.folded for the others.
func profiledSession(t *testing.T) ([]results.Row, map[results.RunID]*results.RunData) {
	t.Helper()
	return profiledSessionIn(t, t.TempDir(), "x.runs")
}

// profiledSessionIn is profiledSession with its runs in folder runs of
// dir.
func profiledSessionIn(t *testing.T, dir, runs string) ([]results.Row, map[results.RunID]*results.RunData) {
	t.Helper()
	rows, data := reporttest.PageSession(t)
	dir = filepath.Join(dir, runs)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	hot, err := os.ReadFile(filepath.Join("..", "testdata", "profile", "hot"+results.FoldedSuffix))
	if err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(filepath.Join("..", "testdata", "profile", "hot-after"+results.FoldedSuffix))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		if r.Group == results.Baseline {
			continue
		}
		d := data[r.ID()]
		d.Files = filepath.Join(dir, fmt.Sprintf("%04d-%s-%s-%d", i+1, results.Slug(r.Proxy), results.ScenarioName(r.Mode, r.Load), r.Rep))
		d.Profile = &results.ProfileNote{CallGraph: results.CallGraphFP, Samples: 100, Others: 3}
		folded := after
		if r.Proxy == "nginx" {
			folded = hot
		}
		if err := os.WriteFile(d.Files+results.FoldedSuffix, folded, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return rows, data
}

var (
	profileLink = regexp.MustCompile(`<a class="profile" href="([^"]*)"`)
	profileID   = regexp.MustCompile(`<section class="profile" id="([^"]*)"`)
)

// TestPageProfiles: every cell of a proxy links the profile of its
// median run, which the page holds, drawn with the hot function named.
func TestPageProfiles(t *testing.T) {
	rows, data := profiledSession(t)
	var b bytes.Buffer
	if err := Render(&b, rows, report.Options{Format: report.FormatHTML, Runs: data}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	t.Logf("the page with its profiles: %d bytes", len(page))
	ids := map[string]bool{}
	for _, m := range profileID.FindAllStringSubmatch(page, -1) {
		ids[m[1]] = true
	}
	// 3 proxies x 5 scenarios, each a median run of its own
	if len(ids) != 15 {
		t.Errorf("the page holds %d profiles; want 15, one a cell of a proxy", len(ids))
	}
	links := profileLink.FindAllStringSubmatch(page, -1)
	if len(links) == 0 {
		t.Fatal("no cell links a profile")
	}
	for _, m := range links {
		if !strings.HasPrefix(m[1], "#") || !ids[m[1][1:]] {
			t.Errorf("a cell links %q; want a profile the page holds", m[1])
		}
	}
	if !strings.Contains(page, "<title>main.benchHotLoop: 82% of the proxy&#39;s samples (82), self 80% (80)</title>") {
		t.Errorf("the page's flame graphs do not name the hot function with its shares")
	}
	if !strings.Contains(page, "Stacks unwound by frame pointers") {
		t.Errorf("the profiles' captions do not say how the stacks were unwound")
	}
	// the median run: nginx's ka-1k runs are rep 1, 2, 3 slowest to fastest
	want := "run 2, the median of 3"
	if !strings.Contains(page, "CPU profile of nginx in http-ka-1k, "+want) {
		t.Errorf("the page has no profile of nginx in http-ka-1k %s", want)
	}
}

// TestPageProfilesBeyondBudget: a profile past the page's budget is
// linked to its own page beside the run's files, and the page holds none
// of it. With a ProfilePage to write them, each linked profile's page is
// handed to it, by the path the link names, drawn with its frames
// titled, and no other; without one, a profile is linked where its page
// is already beside the run's files, and only there.
func TestPageProfilesBeyondBudget(t *testing.T) {
	rows, data := profiledSession(t)
	tables, err := report.Tables(rows, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	written := map[string][]byte{}
	write := func(rel string, page []byte) error { written[rel] = page; return nil }
	p, err := profiles.ForPage(tables, data, 0, write)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	p.Write(&b)
	if b.Len() != 0 {
		t.Errorf("with no budget the page holds %d bytes of profiles; want none", b.Len())
	}
	if err := p.WriteOwn(); err != nil {
		t.Fatal(err)
	}
	links := pageLinks(t, tables, p)
	if len(links) == 0 {
		t.Fatalf("no cell links a profile's page")
	}
	for _, l := range links {
		page := written[strings.TrimPrefix(l, "./")]
		if !bytes.Contains(page, []byte("<title>"+html.EscapeString(hotproxy.HotFunc)+": ")) {
			t.Errorf("the page of %s: %d bytes, no frame of %s", l, len(page), hotproxy.HotFunc)
		}
	}
	if len(written) != len(links) {
		t.Errorf("%d profiles' pages written; want the %d the page links", len(written), len(links))
	}

	// without a writer: linked where the page is there, for one run alone
	var there string
	for _, d := range data {
		if d.Profiled() && "./x.runs/"+filepath.Base(d.Files)+results.FlameSuffix == links[0] {
			there = d.Files + results.FlameSuffix
			if err := os.WriteFile(there, []byte("<!DOCTYPE html>"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	p, err = profiles.ForPage(tables, data, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	links = pageLinks(t, tables, p)
	if want := "./x.runs/" + filepath.Base(there); len(links) != 1 || links[0] != want {
		t.Errorf("without a writer the page links %q; want %q alone, the one page there", links, want)
	}
}

// pageLinks are the profiles' pages the cells of tables link, by their
// path from the page's, each checked to be in the runs' folder.
func pageLinks(t *testing.T, tables []report.Table, p *profiles.Page) []string {
	t.Helper()
	var out []string
	for _, tb := range tables {
		for _, r := range tb.Rows {
			for _, c := range r.Cells {
				l := p.Link(c)
				if l == "" {
					continue
				}
				m := profileLink.FindStringSubmatch(l)
				if m == nil || !strings.HasPrefix(m[1], "./x.runs/") || !strings.HasSuffix(m[1], results.FlameSuffix) {
					t.Errorf("link(%s) = %q; want the profile's page in x.runs/", c.Proxy, l)
					continue
				}
				if !slices.Contains(out, m[1]) {
					out = append(out, m[1])
				}
			}
		}
	}
	return out
}

// TestMedianRun: the run of the median figure, the lower middle one of an
// even count.
func TestMedianRun(t *testing.T) {
	row := func(rep int, req int64) *results.Row {
		return &results.Row{Proxy: "p", Mode: results.HTTP, Load: "ka-1k", Rep: rep, Seconds: 1, Requests: req}
	}
	for _, c := range []struct {
		name string
		runs []*results.Row
		want int // the rep; 0: none
	}{
		{"none", nil, 0},
		{"one", []*results.Row{row(1, 5)}, 1},
		{"odd, out of order", []*results.Row{row(1, 9), row(2, 1), row(3, 5)}, 3},
		{"even: the lower middle", []*results.Row{row(1, 4), row(2, 3), row(3, 2), row(4, 1)}, 3},
	} {
		got := report.MedianRun(c.runs)
		switch {
		case c.want == 0 && got != nil:
			t.Errorf("MedianRun(%s) = rep %d; want none", c.name, got.Rep)
		case c.want != 0 && (got == nil || got.Rep != c.want):
			t.Errorf("MedianRun(%s) = %v; want rep %d", c.name, got, c.want)
		}
	}
}

// TestPageProfilesInChromium opens the page with profiles in headless
// Chromium at a desktop's width and a phone's: it loads offline with no
// error and fetches nothing, and its charts, the flame graphs among them,
// keep their texts inside their frames: every frame's name fits its
// frame as the browser's monospace font sets it (chromium.CheckFlames).
func TestPageProfilesInChromium(t *testing.T) {
	rows, data := profiledSession(t)
	var b bytes.Buffer
	if err := Render(&b, rows, report.Options{Format: report.FormatHTML, Runs: data}); err != nil {
		t.Fatal(err)
	}
	bars, hdrs, series := wantCharts(t, rows, data)
	chromium.CheckPage(t, b.Bytes(), "profile-page", bars, hdrs, series)
	tables, err := report.Tables(rows, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, width := range []int{1400, 420} {
		chromium.CheckLayout(t, b.Bytes(), fmt.Sprintf("profile-page-%d", width), width, barCount(tables))
	}
	chromium.CheckFlames(t, b.Bytes(), "profile-page-flames", 1400)
}

// craftedRuns are runs' folders named after session files whose names a
// browser would read as a link of its own: a script's scheme, and a
// session id with a colon (a scheme "epyc-12") and a hash.
var craftedRuns = []string{
	"javascript:document.documentElement.setAttribute('data-pwned','js')%0A%2F%2F.runs",
	"epyc-12:00#1.runs",
}

// TestProfileLinksEscaped: a profile's page linked past the budget is
// linked by its path from the page's, whatever its runs' folder is
// named: the href begins with "./", its segments escaped, so that it
// names no scheme, query or fragment and resolves to the very file the
// page's writer was handed.
func TestProfileLinksEscaped(t *testing.T) {
	for _, runs := range craftedRuns {
		rows, data := profiledSessionIn(t, t.TempDir(), runs)
		tables, err := report.Tables(rows, report.Options{})
		if err != nil {
			t.Fatal(err)
		}
		written := map[string]bool{}
		p, err := profiles.ForPage(tables, data, 0, func(rel string, _ []byte) error { written[rel] = true; return nil })
		if err != nil {
			t.Fatal(err)
		}
		if err := p.WriteOwn(); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, tb := range tables {
			for _, r := range tb.Rows {
				for _, c := range r.Cells {
					m := profileLink.FindStringSubmatch(p.Link(c))
					if m == nil {
						continue
					}
					n++
					href := html.UnescapeString(m[1])
					first, _, _ := strings.Cut(strings.TrimPrefix(href, "./"), "/")
					u, err := url.Parse(href)
					switch {
					case !strings.HasPrefix(href, "./") || strings.Contains(first, ":"):
						t.Errorf("%s: href %q; want one that begins with ./ and no colon in its first segment", runs, href)
					case err != nil || u.Scheme != "" || u.RawQuery != "" || u.Fragment != "" || !written[strings.TrimPrefix(u.Path, "./")]:
						t.Errorf("%s: href %q reads as %#v; want the path of a page written (%v)", runs, href, u, err)
					}
				}
			}
		}
		if n == 0 {
			t.Errorf("%s: no cell links a profile's page", runs)
		}
	}
}

// TestProfileLinkInChromium writes the page of a session whose runs'
// folder is named as a script's link would be, with its profiles' pages
// beside it, and follows its first profile link in headless Chromium:
// no script of the name runs, and the link opens the profile's page.
func TestProfileLinkInChromium(t *testing.T) {
	testenv.NeedProgram(t, chromium.Binary)
	defer func(was int) { profiles.InlineBudget = was }(profiles.InlineBudget)
	profiles.InlineBudget = 0
	for i, runs := range craftedRuns {
		dir := t.TempDir()
		rows, data := profiledSessionIn(t, dir, runs)
		var b bytes.Buffer
		own := func(rel string, page []byte) error {
			return os.WriteFile(filepath.Join(dir, filepath.FromSlash(rel)), page, 0o644)
		}
		opt := report.Options{Format: report.FormatHTML, Runs: data, ProfilePage: own}
		tables, err := report.Tables(rows, report.Options{})
		if err != nil {
			t.Fatal(err)
		}
		// the page holds no profile: each is linked to its own page
		p, err := profiles.ForPage(tables, data, 0, func(string, []byte) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		var want string
		for _, tb := range tables {
			for _, r := range tb.Rows {
				for _, c := range r.Cells {
					if want == "" && p.Link(c) != "" {
						want = p.ByRun[*c.MedianRun].File
					}
				}
			}
		}
		if want == "" {
			t.Fatal("no cell links a profile's page")
		}
		if err := render(&b, rows, opt); err != nil {
			t.Fatal(err)
		}
		page := filepath.Join(dir, fmt.Sprintf("page-%d.html", i))
		if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		const expr = `({url: location.href, pwned: document.documentElement.getAttribute("data-pwned"), title: document.title})`
		got, err := chromium.Follow(context.Background(), page, filepath.Join(dir, "profile"), "a.profile", expr, 1400)
		if err != nil {
			t.Fatal(err)
		}
		var v struct{ URL, Title, Pwned string }
		if err := json.Unmarshal(got.Value, &v); err != nil {
			t.Fatalf("%s: %v", got.Value, err)
		}
		wantURL := "file://" + filepath.Join(dir, filepath.FromSlash(want))
		u, err := url.Parse(v.URL)
		if err != nil || v.Pwned != "" || "file://"+u.Path != wantURL || !strings.HasPrefix(v.Title, "CPU profile of ") {
			t.Errorf("%s: the profile link, followed, shows %s (data-pwned %q, title %q); want %s, no data-pwned, a profile's title",
				runs, v.URL, v.Pwned, v.Title, wantURL)
		}
	}
}

// TestOwnPageLinks: a profile's page of its own links back to its
// session's page, at the tables of its cell's family, and to each of the
// run's files beside it (its config, the tools' output, its data), and
// every link resolves to a file there, whatever the runs' folder is
// named.
func TestOwnPageLinks(t *testing.T) {
	defer func(was int) { profiles.InlineBudget = was }(profiles.InlineBudget)
	profiles.InlineBudget = 0
	for _, runs := range append([]string{"s.runs"}, craftedRuns...) {
		dir := t.TempDir()
		rows, data := profiledSessionIn(t, dir, runs)
		for _, d := range data {
			if d.Profiled() { // the run's other files, as a session keeps them
				for _, suffix := range []string{".proxy.nginx.conf", ".load.wrk.out"} {
					if err := os.WriteFile(d.Files+suffix, []byte("x\n"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		session := results.PagePath(filepath.Join(dir, strings.TrimSuffix(runs, ".runs")+".csv"))
		if err := os.WriteFile(session, []byte("<html></html>\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		written := map[string][]byte{}
		opt := report.Options{Runs: data, ProfilePage: func(rel string, page []byte) error {
			written[rel] = page
			return nil
		}}
		if err := Render(io.Discard, rows, opt); err != nil {
			t.Fatal(err)
		}
		if len(written) == 0 {
			t.Fatalf("%s: no profile's page written", runs)
		}
		href := regexp.MustCompile(`<li><a href="([^"]*)">([^<]*)</a></li>`)
		for rel, page := range written {
			nav, _, _ := strings.Cut(string(page), "</nav>")
			links := href.FindAllStringSubmatch(nav, -1)
			if len(links) < 4 || !strings.HasPrefix(links[0][2], "the session&#39;s page: ") {
				t.Errorf("%s: %s links %q; want the session's page, the config, the tool's output and the profile's files", runs, rel, links)
				continue
			}
			for i, l := range links {
				u, err := url.Parse(html.UnescapeString(l[1]))
				if err != nil || u.Scheme != "" || !strings.HasPrefix(l[1], "./") {
					t.Errorf("%s: %s links %q (%v); want a path from its folder", runs, rel, l[1], err)
					continue
				}
				target := filepath.Join(dir, filepath.Dir(filepath.FromSlash(rel)), filepath.FromSlash(u.Path))
				if _, err := os.Stat(target); err != nil {
					t.Errorf("%s: %s links %q, which resolves to no file: %v", runs, rel, l[1], err)
				}
				if i == 0 && !strings.HasPrefix(u.Fragment, report.Anchor(rows[0].Session)) {
					t.Errorf("%s: %s links the session's page at %q; want its family's tables", runs, rel, u.Fragment)
				}
			}
		}
	}
}

// flameToolsProbe clicks a frame of the first flame graph that is
// neither the root nor already whole, then searches for its function:
// what it measures says whether the frame was drawn across the graph,
// its callers whole, the frames beside it hidden, and the search marked
// the frame.
const flameToolsProbe = `(() => {
	const svg = document.querySelector("svg.flame");
	if (!svg) return {error: "no flame graph"};
	const frames = [...svg.querySelectorAll("g.frame")];
	const width = f => +f.querySelector("rect").getAttribute("width");
	const y = f => +f.querySelector("rect").getAttribute("y");
	const root = frames[0];
	const pick = frames.find(f => f !== root && y(f) < y(root) - 17 && width(f) < 600);
	if (!pick) return {error: "no frame to zoom into"};
	const name = pick.querySelector("title").textContent.split(": ")[0];
	pick.dispatchEvent(new MouseEvent("click", {bubbles: true}));
	const out = {name, zoomed: width(pick), root: width(root), hidden: frames.filter(f => f.style.display === "none").length};
	const input = document.querySelector("input.flame-search");
	if (!input) return Object.assign(out, {error: "no search field"});
	input.value = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
	input.dispatchEvent(new Event("input"));
	out.marked = frames.filter(f => f.querySelector("rect").getAttribute("fill") === "#e040e0").length;
	out.found = document.querySelector(".flame-found").textContent;
	document.querySelector("div.flame-tools button").click();
	out.reset = frames.filter(f => f.style.display === "none").length;
	return out;
})()`

// TestFlameZoomAndSearch: in headless Chromium, as wide as a desktop's
// window and as a phone's, a click on a frame of a profile's page of its
// own zooms into it (the frame drawn across the graph, its callers
// whole, the others hidden), a search for its function marks it and says
// so, and Reset draws the whole again; the page makes no request but
// its own and logs no error.
func TestFlameZoomAndSearch(t *testing.T) {
	testenv.NeedProgram(t, chromium.Binary)
	defer func(was int) { profiles.InlineBudget = was }(profiles.InlineBudget)
	profiles.InlineBudget = 0
	dir := t.TempDir()
	rows, data := profiledSessionIn(t, dir, "s.runs")
	var own string
	opt := report.Options{Runs: data, ProfilePage: func(rel string, page []byte) error {
		path := filepath.Join(dir, filepath.FromSlash(rel))
		if own == "" {
			own = path
		}
		return os.WriteFile(path, page, 0o644)
	}}
	if err := Render(io.Discard, rows, opt); err != nil {
		t.Fatal(err)
	}
	if own == "" {
		t.Fatal("no profile's page written")
	}
	for _, width := range []int{1400, 420} {
		p, err := chromium.Open(context.Background(), own, filepath.Join(t.TempDir(), "profile"), flameToolsProbe, width)
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Error, Name, Found    string
			Zoomed, Root          float64
			Hidden, Marked, Reset int
		}
		if err := json.Unmarshal(p.Value, &v); err != nil {
			t.Fatalf("%s: %v", p.Value, err)
		}
		switch {
		case v.Error != "":
			t.Errorf("at %d px: %s", width, v.Error)
		case v.Zoomed < profiles.FlameWidth-0.01 || v.Root < profiles.FlameWidth-0.01 || v.Hidden == 0:
			t.Errorf("at %d px: a click on %s drew it %.2f wide, the root %.2f, %d frames hidden; want both %g, some hidden",
				width, v.Name, v.Zoomed, v.Root, v.Hidden, profiles.FlameWidth)
		case v.Marked == 0 || !strings.Contains(v.Found, "match"):
			t.Errorf("at %d px: a search for %s marked %d frames and says %q; want it marked and said", width, v.Name, v.Marked, v.Found)
		case v.Reset != 0:
			t.Errorf("at %d px: Reset left %d frames hidden", width, v.Reset)
		}
		if len(p.Errors) > 0 {
			t.Errorf("at %d px: the page logged %q", width, p.Errors)
		}
		for _, r := range p.Requests {
			if r != "file://"+own {
				t.Errorf("at %d px: the page requested %s", width, r)
			}
		}
	}
}

// TestOwnScriptID: the tests' browser tells the pages' one script by the
// id the profiles give it.
func TestOwnScriptID(t *testing.T) {
	if chromium.OwnScriptID != profiles.FlameScriptID || !strings.HasPrefix(profiles.FlameScript, `<script id="`+profiles.FlameScriptID+`">`) {
		t.Errorf("chromium.OwnScriptID %q, profiles.FlameScriptID %q, the script begins %.40q; want one id", chromium.OwnScriptID, profiles.FlameScriptID, profiles.FlameScript)
	}
}

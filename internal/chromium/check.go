package chromium

import (
	"bench/internal/testenv"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// OwnScriptID is the id of the one script bench's pages may hold, the
// flame graphs' zoom and search (report/profiles.FlameScriptID).
const OwnScriptID = "bench-flame"

// CheckPage opens page (bench report's html) in Chromium from a file
// and checks that it loads with no console error, requests nothing but
// itself, has no script (but its own flame graphs', OwnScriptID) or link
// (but to a part of itself, or a run's profile beside it: a reader's
// link fetches nothing), and has bars bar charts, hdrs
// percentile charts and series time series. It keeps the screenshot as
// name.png in $BENCH_SCREENSHOTS when set (a directory), in the test's
// temporary directory otherwise. Without Chromium the test is skipped,
// or fails in CI.
func CheckPage(t *testing.T, page []byte, name string, bars, hdrs, series int) {
	t.Helper()
	const count = `({bar: document.querySelectorAll("figure.bar > svg").length,
		hdr: document.querySelectorAll("figure.hdr > svg").length,
		series: document.querySelectorAll("figure.series > svg").length,
		scripts: document.querySelectorAll("script:not(#` + OwnScriptID + `)").length,
		links: document.querySelectorAll("link, img, iframe, object, embed, [src], [href]:not(a[href^='#']):not(a.profile)").length})`
	p := openChecked(t, page, name, count, 1400)
	var got struct{ Bar, HDR, Series, Scripts, Links int }
	if err := json.Unmarshal(p.Value, &got); err != nil {
		t.Fatalf("the page's counts %s: %v", p.Value, err)
	}
	if got.Bar != bars || got.HDR != hdrs || got.Series != series || got.Scripts != 0 || got.Links != 0 {
		t.Errorf("the page has %d bar charts, %d percentile charts, %d series, %d scripts, %d links; want %d, %d, %d, none, none",
			got.Bar, got.HDR, got.Series, got.Scripts, got.Links, bars, hdrs, series)
	}
}

// openChecked writes page to a file and opens it in Chromium width
// pixels wide, evaluating expr; it checks that the page loaded with no
// console error and requested nothing but itself (a data: URL, the
// page's font, is in the page), and keeps the screenshot as name.png.
func openChecked(t *testing.T, page []byte, name, expr string, width int) *Page {
	t.Helper()
	testenv.NeedProgram(t, Binary)
	dir := t.TempDir()
	path := filepath.Join(dir, name+".html")
	if err := os.WriteFile(path, page, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Open(context.Background(), path, filepath.Join(dir, "profile"), expr, width)
	if err != nil {
		t.Fatal(err)
	}
	out := os.Getenv("BENCH_SCREENSHOTS")
	if out == "" {
		out = dir
	}
	shot := filepath.Join(out, name+".png")
	if err := os.WriteFile(shot, p.PNG, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", shot, len(p.PNG))
	if !bytes.HasPrefix(p.PNG, []byte("\x89PNG")) {
		t.Errorf("the screenshot is not a PNG")
	}
	if len(p.Errors) > 0 {
		t.Errorf("console errors: %q", p.Errors)
	}
	for _, u := range p.Requests {
		if u != "file://"+path && !strings.HasPrefix(u, "data:") {
			t.Errorf("the page requested %s; want nothing but itself", u)
		}
	}
	if len(p.Requests) == 0 {
		t.Errorf("no request seen, not even the page's own: the protocol's events were lost")
	}
	return p
}

// Layout is what a page's charts look like in the browser (layoutProbe).
type Layout struct {
	Width  float64 `json:"width"`  // the page's, scrolled
	Window float64 `json:"window"` // the window's
	Charts []Chart `json:"charts"`
}

// Chart is a chart of the page: its figure's class, its SVG's size, its
// texts' boxes and its columns' tipped elements, as drawn.
type Chart struct {
	Class   string   `json:"class"`
	Caption string   `json:"caption"`
	Width   float64  `json:"width"`
	Height  float64  `json:"height"`
	Texts   []Box    `json:"texts"`
	Tipped  []Tipped `json:"tipped"`
}

// Box is a text's box: its left, top, width and height from its SVG's
// top left corner, in CSS pixels.
type Box struct {
	Text string     `json:"text"`
	R    [4]float64 `json:"r"`
}

// Tipped is an element under a <title>: a bar, a line or a point.
type Tipped struct {
	Kind   string `json:"kind"`   // "bar", "line", "point"
	Column string `json:"column"` // its column's name, "" when none
	Color  string `json:"color"`  // its fill (a bar's) or stroke (a line's), as computed
	Title  string `json:"title"`  // its <title>, "" when none
}

// layoutProbe measures what Layout holds, with every <details> opened
// first, so that the charts a page keeps closed are drawn and checked.
const layoutProbe = `(() => {
	for (const d of document.querySelectorAll("details")) d.open = true;
	const out = {width: document.documentElement.scrollWidth, window: window.innerWidth, charts: []};
	for (const svg of document.querySelectorAll("figure.chart > svg")) {
		const s = svg.getBoundingClientRect();
		const texts = [];
		for (const t of svg.querySelectorAll("text")) {
			if (t.textContent.trim() === "") continue;
			const r = t.getBoundingClientRect();
			texts.push({text: t.textContent, r: [r.left - s.left, r.top - s.top, r.width, r.height]});
		}
		const tipped = [];
		for (const g of svg.querySelectorAll("g.bar, g.line, g.point")) {
			const kind = g.getAttribute("class");
			const p = g.querySelector("path");
			const title = g.querySelector(":scope > title");
			const cs = p ? getComputedStyle(p) : null;
			tipped.push({kind, column: g.dataset.column || "", title: title ? title.textContent : "",
				color: cs ? (kind === "bar" ? cs.fill : cs.stroke) : ""});
		}
		const cap = svg.parentElement.querySelector("figcaption");
		out.charts.push({class: svg.parentElement.className, caption: cap ? cap.textContent : "",
			width: s.width, height: s.height, texts, tipped});
	}
	return out;
})()`

// CheckLayout opens page in Chromium width pixels wide, as CheckPage
// does, and checks how its charts are drawn: the page no wider than the
// window; no text of a chart outside its SVG, nor over another of the
// same chart; bars bars, each under a <title>, and every point under
// one; and each column one colour on every chart, no two columns of a
// chart sharing one. The screenshot is name.png. It returns what it
// measured.
func CheckLayout(t *testing.T, page []byte, name string, width, bars int) *Layout {
	t.Helper()
	p := openChecked(t, page, name, layoutProbe, width)
	var l Layout
	if err := json.Unmarshal(p.Value, &l); err != nil {
		t.Fatalf("the page's layout %.200s: %v", p.Value, err)
	}
	for _, e := range l.Problems(bars) {
		t.Errorf("at %d px: %s", width, e)
	}
	return &l
}

// slack is how far, in CSS pixels, a box may pass another or its SVG's
// edge: the rounding of a browser's layout.
const slack = 0.5

// Problems lists what is wrong with the layout (CheckLayout's rules),
// bars being the count of bars the page should have.
func (l *Layout) Problems(bars int) []string {
	var out []string
	if l.Width > l.Window {
		out = append(out, fmt.Sprintf("the page is %.0f px wide in a window of %.0f px", l.Width, l.Window))
	}
	colors := map[string]string{} // column -> its colour
	gotBars := 0
	for _, c := range l.Charts {
		where := fmt.Sprintf("chart %q", clip(c.Caption))
		for i, t := range c.Texts {
			b := box(t)
			if b.X < -slack || b.Y < -slack || b.X+b.W > c.Width+slack || b.Y+b.H > c.Height+slack {
				out = append(out, fmt.Sprintf("%s: text %q at (%.1f, %.1f) %.1f by %.1f passes its SVG's edge (%.1f by %.1f)",
					where, t.Text, b.X, b.Y, b.W, b.H, c.Width, c.Height))
			}
			for _, ot := range c.Texts[i+1:] {
				o := box(ot)
				if b.X+b.W > o.X+slack && o.X+o.W > b.X+slack && b.Y+b.H > o.Y+slack && o.Y+o.H > b.Y+slack {
					out = append(out, fmt.Sprintf("%s: texts %q %v and %q %v overlap", where, t.Text, b, ot.Text, o))
				}
			}
		}
		byColor := map[string]string{} // colour -> the chart's column of it
		for _, e := range c.Tipped {
			if e.Kind == "bar" {
				gotBars++
			}
			if (e.Kind == "bar" || e.Kind == "point") && e.Title == "" {
				out = append(out, fmt.Sprintf("%s: a %s of %q has no title", where, e.Kind, e.Column))
			}
			if e.Column == "" {
				continue
			}
			if prev, ok := colors[e.Column]; ok && prev != e.Color {
				out = append(out, fmt.Sprintf("%s: column %q is %s; elsewhere %s", where, e.Column, e.Color, prev))
			}
			colors[e.Column] = e.Color
			if other, ok := byColor[e.Color]; ok && other != e.Column {
				out = append(out, fmt.Sprintf("%s: columns %q and %q share %s", where, other, e.Column, e.Color))
			}
			byColor[e.Color] = e.Column
		}
	}
	if gotBars != bars {
		out = append(out, fmt.Sprintf("the page has %d bars; want %d", gotBars, bars))
	}
	return out
}

// rect is a box's position and size.
type rect struct{ X, Y, W, H float64 }

func box(b Box) rect { return rect{b.R[0], b.R[1], b.R[2], b.R[3]} }

func clip(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}

package chromium

import (
	"encoding/json"
	"testing"
)

// Flames is what a page's flame graphs look like in the browser
// (flamesProbe): whether following the first cell's link to a profile
// the page holds shows it, how many frames they name, and those whose
// name runs past the frame's right edge, by how much.
type Flames struct {
	Link   string      `json:"link"`
	Shown  bool        `json:"shown"`
	Graphs int         `json:"graphs"`
	Named  int         `json:"named"`
	Over   []FlameOver `json:"over"`
}

// FlameOver is a frame whose name is wider than the frame: its name and
// by how many of the drawing's units.
type FlameOver struct {
	Name string  `json:"name"`
	By   float64 `json:"by"`
}

// flamesProbe clicks the first link to a profile the page holds and
// sees whether its target is drawn a moment later (the page keeps its
// profiles in a closed <details>, which following the link opens); then,
// every <details> open, it measures every named frame of the page's
// flame graphs (an svg.flame's g.frame: its rect and its text) in the
// drawing's own units, as the font the browser chose sets the name.
const flamesProbe = `(async () => {
	const out = {link: "", shown: false, graphs: document.querySelectorAll("svg.flame").length, named: 0, over: []};
	const a = document.querySelector("a.profile[href^='#']");
	if (a) {
		out.link = a.getAttribute("href");
		a.click();
		await new Promise(r => setTimeout(r, 100));
		const target = document.getElementById(out.link.slice(1));
		out.shown = !!target && target.getClientRects().length > 0 && target.querySelector("svg.flame").getBoundingClientRect().height > 0;
	}
	for (const d of document.querySelectorAll("details")) d.open = true;
	for (const g of document.querySelectorAll("svg.flame g.frame")) {
		const r = g.querySelector("rect"), t = g.querySelector("text");
		if (!r || !t) continue;
		out.named++;
		const rb = r.getBBox(), tb = t.getBBox();
		const by = tb.x + tb.width - (rb.x + rb.width);
		if (by > 0.5) out.over.push({name: t.textContent, by: by});
	}
	return out;
})()`

// CheckFlames opens page in Chromium width pixels wide and checks that
// following a cell's link to a profile the page holds shows its flame
// graph, that it has flame graphs with named frames and that every name
// fits in its frame, as the font the browser chose for them sets it.
// The screenshot is name.png. It returns what it measured.
func CheckFlames(t *testing.T, page []byte, name string, width int) *Flames {
	t.Helper()
	p := openChecked(t, page, name, flamesProbe, width)
	var f Flames
	if err := json.Unmarshal(p.Value, &f); err != nil {
		t.Fatalf("the page's flame graphs %.200s: %v", p.Value, err)
	}
	if f.Link == "" || !f.Shown {
		t.Errorf("at %d px: the first link to a profile the page holds, %q, shows no flame graph when followed", width, f.Link)
	}
	if f.Graphs == 0 || f.Named == 0 {
		t.Errorf("at %d px: %d flame graphs, %d named frames; want some", width, f.Graphs, f.Named)
	}
	for i, o := range f.Over {
		if i == 10 {
			t.Errorf("and %d more", len(f.Over)-i)
			break
		}
		t.Errorf("at %d px: the frame name %q runs %.1f past its frame", width, o.Name, o.By)
	}
	t.Logf("at %d px: %s shown when followed; %d flame graphs, %d named frames, %d names past their frame", width, f.Link, f.Graphs, f.Named, len(f.Over))
	return &f
}

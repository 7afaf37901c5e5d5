package chromium

import (
	"encoding/json"
	"testing"
)

// Flames is what a page's flame graphs look like in the browser
// (flamesProbe): how many frames they name, and those whose name runs
// past the frame's right edge, by how much.
type Flames struct {
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

// flamesProbe measures every named frame of the page's flame graphs (an
// svg.flame's g.frame: its rect and its text) in the drawing's own units,
// as the font the browser chose sets the name.
const flamesProbe = `(() => {
	const out = {graphs: document.querySelectorAll("svg.flame").length, named: 0, over: []};
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
// it has flame graphs with named frames and that every name fits in its
// frame, as the font the browser chose for them sets it. The screenshot
// is name.png. It returns what it measured.
func CheckFlames(t *testing.T, page []byte, name string, width int) *Flames {
	t.Helper()
	p := openChecked(t, page, name, flamesProbe, width)
	var f Flames
	if err := json.Unmarshal(p.Value, &f); err != nil {
		t.Fatalf("the page's flame graphs %.200s: %v", p.Value, err)
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
	t.Logf("at %d px: %d flame graphs, %d named frames, %d names past their frame", width, f.Graphs, f.Named, len(f.Over))
	return &f
}

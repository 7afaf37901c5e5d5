package profiles

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"math"
	"sort"
	"strings"

	"bench/internal/text"
	"bench/profile"
	"bench/report/htmldoc"
)

// A run's CPU profile, drawn: a flame graph of its folded stacks, the
// root (all the proxy's samples) at the bottom, each frame as wide as
// its share of the samples and its callees above it, in the order of
// their names, as Brendan Gregg's flamegraph.pl draws them. It is SVG
// that reads whole without script: every frame's <title> says its
// function, its share of the proxy's samples and its self share, and its
// name is written in it where it fits; a page's one script
// (FlameScript) adds zoom and search. Names are set in the reader's monospace font and
// fitted by its advance, so that the drawing needs no font of its own:
// a page of a session holds a hundred of them.

// The flame graph's geometry, in the SVG's units (CSS pixels at full
// size; the page scales it to its figure).
const (
	FlameWidth = 1200.0
	flameRow   = 17.0 // a frame's height
	flameFont  = 11.0 // its name's size
	flamePad   = 3.0  // the name's margin in its frame
	// flameAdvance is the width of a character of a monospace font, in
	// ems: 0.6 in DejaVu Sans Mono, Liberation Mono, Courier New and
	// Menlo, with a margin so that a name never runs past its frame.
	flameAdvance = 0.62
	// flameMinShare is the narrowest frame drawn, a share of the
	// samples: 6 px of the 1200, too narrow for a name. At perf's 99 Hz
	// a 5 s window of a busy proxy is about 500 samples, so it leaves
	// out frames of one or two, single 10 ms ticks (their samples stay
	// in their callers' widths); drawn, they are two thirds of a graph's
	// frames and bytes.
	flameMinShare = 0.005
)

// flameFrameStyle is the style every frame shares, in the SVG so that
// the drawing stands alone, scoped to it by its class.
const flameFrameStyle = `svg.flame rect{stroke:#fff;stroke-width:0.5}`

// classFlame is the flame graph's figure's class: a chart of the page.
const classFlame = "chart flame"

// flameNode is a frame of the flame graph: a function under its caller,
// the samples with it there (total) and those ending in it (self).
type flameNode struct {
	name        string
	total, self int64
	kids        map[string]*flameNode
}

// flameTree merges the stacks into one tree, its root all of them.
// Counts saturate at math.MaxInt64 (satAdd), so that no sum of them
// wraps: a callee's total is never more than its caller's.
func flameTree(stacks []profile.Stack) *flameNode {
	root := &flameNode{name: "all", kids: map[string]*flameNode{}}
	for _, s := range stacks {
		c := max(s.Count, 0)
		n := root
		n.total = satAdd(n.total, c)
		for _, f := range s.Frames {
			k, ok := n.kids[f]
			if !ok {
				k = &flameNode{name: f, kids: map[string]*flameNode{}}
				n.kids[f] = k
			}
			k.total = satAdd(k.total, c)
			n = k
		}
		n.self = satAdd(n.self, c)
	}
	return root
}

// flameMostSamples is the most samples a profile is drawn with: 2^53,
// beyond which a float64 share is no longer exact (and a sum of int64
// counts not far from wrapping). perf at 99 Hz over a day is under 10^7.
const flameMostSamples = 1 << 53

// foldedSamples is how many samples the stacks hold, false past
// flameMostSamples.
func foldedSamples(stacks []profile.Stack) (int64, bool) {
	var n int64
	for _, s := range stacks {
		n = satAdd(n, max(s.Count, 0))
	}
	return n, n <= flameMostSamples
}

// satAdd is a+b for counts of 0 or more, math.MaxInt64 where it would
// pass it.
func satAdd(a, b int64) int64 {
	if b > math.MaxInt64-a {
		return math.MaxInt64
	}
	return a + b
}

// flameShare is part's share of all, within 0..1.
func flameShare(part, all int64) float64 {
	return min(max(profile.Share(part, all), 0), 1)
}

// sortedKids are n's callees by name.
func (n *flameNode) sortedKids() []*flameNode {
	out := make([]*flameNode, 0, len(n.kids))
	for _, k := range n.kids {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// depth is how many rows n and its callees of at least min samples take.
func (n *flameNode) depth(min int64) int {
	d := 0
	for _, k := range n.kids {
		if k.total >= min {
			d = max(d, k.depth(min))
		}
	}
	return d + 1
}

// flameSVG draws the stacks' flame graph; label names it for a reader
// of the SVG alone (its <title>).
func flameSVG(stacks []profile.Stack, label string) []byte {
	root := flameTree(stacks)
	least := max(int64(float64(root.total)*flameMinShare), 1)
	rows := root.depth(least)
	height := float64(rows) * flameRow
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="flame" viewBox="0 0 %g %g" width="%g" height="%g" font-family="monospace" font-size="%g">`+"\n",
		FlameWidth, height, FlameWidth, height, flameFont)
	fmt.Fprintf(&b, "<title>%s</title>\n<style>%s</style>\n", htmldoc.Esc(label), flameFrameStyle)
	if root.total == 0 {
		b.WriteString("</svg>")
		return b.Bytes()
	}
	scale := FlameWidth / float64(root.total)
	var draw func(n *flameNode, x float64, row int)
	draw = func(n *flameNode, x float64, row int) {
		// within the graph, where saturated counts would pass it
		x = min(x, FlameWidth)
		w := min(float64(n.total)*scale, FlameWidth-x)
		y := height - float64(row+1)*flameRow
		fmt.Fprintf(&b, `<g class="frame"><title>%s</title><rect x="%.2f" y="%g" width="%.2f" height="%g" fill="%s"/>`,
			htmldoc.Esc(frameTitle(n, root.total)), x, y, w, flameRow, flameColor(n.name, row))
		if name := fitName(n.name, w-2*flamePad); name != "" {
			fmt.Fprintf(&b, `<text x="%.2f" y="%g">%s</text>`, x+flamePad, y+flameRow-5, htmldoc.Esc(name))
		}
		b.WriteString("</g>\n")
		for _, k := range n.sortedKids() {
			if k.total >= least {
				draw(k, x, row+1)
			}
			x += float64(k.total) * scale
		}
	}
	draw(root, 0, 0)
	b.WriteString("</svg>")
	return b.Bytes()
}

// frameTitle is a frame's tip: its function, its share of the proxy's
// samples and its self share.
func frameTitle(n *flameNode, all int64) string {
	return fmt.Sprintf("%s: %s of the proxy's samples (%d), self %s (%d)",
		n.name, text.SharePercent(flameShare(n.total, all)), n.total, text.SharePercent(flameShare(n.self, all)), n.self)
}

// fitName is name cut to fit w in the flame graph's font, ".." marking
// the cut; empty where not even two letters fit.
func fitName(name string, w float64) string {
	fits := int(w / (flameAdvance * flameFont)) // characters
	r := []rune(name)
	switch {
	case len(r) <= fits:
		return name
	case fits < 4: // two letters and ".."
		return ""
	}
	return string(r[:fits-2]) + ".."
}

// flameColor is a frame's fill: warm hues, the same for a function
// wherever it is, the root and the commands grey.
func flameColor(name string, row int) string {
	if row < 2 {
		return "#c8c8c8"
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	v := h.Sum32()
	r := 205 + v%50
	g := 80 + (v>>8)%150
	bl := 30 + (v>>16)%50
	return fmt.Sprintf("#%02x%02x%02x", r, g, bl)
}

// flameTop is the top ten of the stacks as a table: each function's self
// and total share of the proxy's samples.
func flameTop(b *bytes.Buffer, stacks []profile.Stack) {
	fmt.Fprintf(b, "<table class=\"top\">\n<tr><th>function</th><th>self</th><th>total</th></tr>\n")
	if _, ok := foldedSamples(stacks); !ok {
		// their sums would wrap
		b.WriteString("</table>\n")
		return
	}
	topRows(b, stacks)
	b.WriteString("</table>\n")
	if machine, _ := profile.MachineShare(stacks); flameShare(machine, foldedTotal(stacks)) >= machineWarn {
		fmt.Fprintf(b, "<table class=\"top own\">\n<tr><th>function, the machine's samples counted to their callers</th><th>self</th><th>total</th></tr>\n")
		topRows(b, profile.WithoutMachine(stacks))
		b.WriteString("</table>\n")
	}
}

// topRows writes the rows of the top ten of stacks.
func topRows(b *bytes.Buffer, stacks []profile.Stack) {
	funcs, samples := profile.TopFolded(stacks, profile.TopN)
	for _, f := range funcs {
		fmt.Fprintf(b, "<tr><td>%s</td><td>%s</td><td>%s</td></tr>\n", htmldoc.Esc(f.Name),
			text.SharePercent(flameShare(f.Self, samples)), text.SharePercent(flameShare(f.Total, samples)))
	}
}

// machineWarn is the share of a profile's samples in the machine's own
// functions (profile.Machine) from which its caption says so and its top
// view adds the proxy's own functions, the machine's samples counted to
// their callers: a quarter.
const machineWarn = 0.25

// foldedTotal is the stacks' samples, saturating.
func foldedTotal(stacks []profile.Stack) int64 {
	n, _ := foldedSamples(stacks)
	return n
}

// MachineCaption says what share of the stacks' samples the machine's
// functions hold and which, where it is machineWarn or more; empty
// otherwise.
func MachineCaption(stacks []profile.Stack) string {
	machine, funcs := profile.MachineShare(stacks)
	all := foldedTotal(stacks)
	if flameShare(machine, all) < machineWarn {
		return ""
	}
	var names []string
	for i, f := range funcs {
		if i == 3 {
			break
		}
		names = append(names, f.Name+" "+text.SharePercent(flameShare(f.Self, all)))
	}
	return fmt.Sprintf(" %s of the samples end in the machine's own functions (%s): the hypervisor's, where it takes the CPU back "+
		"(as the guest re-enables interrupts or writes a register that traps), not the proxy's work; "+
		"the second table counts them to the functions that called them.", text.SharePercent(flameShare(machine, all)), strings.Join(names, ", "))
}

// flameStyle is the style of a profile's drawing: the flame graph and
// its top ten side by side where the window is wide enough, one under
// the other where it is not.
const flameStyle = `div.flame{display:flex;flex-wrap:wrap;gap:1em;align-items:flex-start}
div.flame figure{flex:1 1 40em;min-width:0;margin:0}
div.flame table.top td{white-space:normal}
g.frame text{pointer-events:none}
div.flame-tools{margin:0.3em 0}div.flame-tools input{width:20em;max-width:60%}`

// FlameScript zooms and searches the page's flame graphs: a click on a
// frame draws it and its callees across the whole width, its callers
// under it whole, and hides the rest; a click on the root (or Reset)
// draws the whole again; a search field above each graph marks the
// frames whose function matches (a regular expression, any case) and
// says how many do. The page reads the same
// without it (every frame keeps its title); it makes no request, sets
// no markup from a name (textContent alone), and writes its controls
// itself, so that a page read without script shows none.
const FlameScript = `<script id="` + FlameScriptID + `">
(function () {
  var NS = "http://www.w3.org/2000/svg", ADV = 0.62 * 11, PAD = 3, W = 1200, MARK = "#e040e0";
  var tail = /: (<?[0-9.]+)% of the proxy's samples \((\d+)\), self .*$/;
  function fname(g) { return g.querySelector("title").textContent.replace(tail, ""); }
  function label(g, x, w) {
    var t = g.querySelector("text"), r = g.querySelector("rect"), n = Math.floor((w - 2 * PAD) / ADV), s = fname(g);
    if (n < 4) { if (t) t.style.display = "none"; return; }
    if (s.length > n) s = s.slice(0, n - 2) + "..";
    if (!t) { t = document.createElementNS(NS, "text"); t.setAttribute("y", +r.getAttribute("y") + 12); g.appendChild(t); }
    t.style.display = ""; t.setAttribute("x", x + PAD); t.textContent = s;
  }
  function zoom(svg, g) {
    var r = g.querySelector("rect"), x0 = +r.dataset.x, w0 = +r.dataset.w, y0 = +r.getAttribute("y"), e = 1e-6;
    svg.querySelectorAll("g.frame").forEach(function (f) {
      var fr = f.querySelector("rect"), x = +fr.dataset.x, w = +fr.dataset.w, y = +fr.getAttribute("y"), nx, nw;
      if (y <= y0 && x >= x0 - e && x + w <= x0 + w0 + e) { nx = (x - x0) * W / w0; nw = w * W / w0; }
      else if (y > y0 && x <= x0 + e && x + w >= x0 + w0 - e) { nx = 0; nw = W; }
      else { f.style.display = "none"; return; }
      f.style.display = ""; fr.setAttribute("x", nx.toFixed(2)); fr.setAttribute("width", nw.toFixed(2)); label(f, nx, nw);
    });
  }
  document.querySelectorAll("svg.flame").forEach(function (svg) {
    var frames = svg.querySelectorAll("g.frame"), root = frames[0];
    if (!root) return;
    frames.forEach(function (f) {
      var r = f.querySelector("rect");
      r.dataset.x = r.getAttribute("x"); r.dataset.w = r.getAttribute("width"); r.dataset.fill = r.getAttribute("fill");
      f.style.cursor = "pointer";
      f.addEventListener("click", function () { zoom(svg, f); });
    });
    var bar = document.createElement("div"), input = document.createElement("input"), reset = document.createElement("button"), found = document.createElement("span");
    bar.className = "flame-tools"; input.type = "search"; input.className = "flame-search"; input.placeholder = "search functions (a regular expression)";
    reset.type = "button"; reset.textContent = "Reset zoom"; found.className = "flame-found";
    reset.addEventListener("click", function () { zoom(svg, root); });
    input.addEventListener("input", function () {
      var re = null, n = 0;
      try { re = input.value ? new RegExp(input.value, "i") : null; } catch (e) { re = null; }
      frames.forEach(function (f) {
        var hit = re !== null && re.test(fname(f)), r = f.querySelector("rect");
        r.setAttribute("fill", hit ? MARK : r.dataset.fill);
        if (hit) n++;
      });
      found.textContent = re ? " " + n + (n == 1 ? " frame matches" : " frames match") : "";
    });
    bar.appendChild(input); bar.appendChild(reset); bar.appendChild(found);
    var box = svg.closest("div.flame") || svg; box.parentNode.insertBefore(bar, box);
  });
})();
</script>
`

// FlameScriptID is the id of the pages' one script (FlameScript), by
// which their tests tell it from any other (chromium.OwnScriptID, held
// equal to it by report/page's TestOwnScriptID).
const FlameScriptID = "bench-flame"

// WriteFlame writes a run's profile: its flame graph and, beside it, its
// ten functions of most self time.
func WriteFlame(b *bytes.Buffer, stacks []profile.Stack, label, caption string) {
	b.WriteString("<div class=\"flame\">\n")
	htmldoc.Figure(b, classFlame, flameSVG(stacks, label), caption)
	flameTop(b, stacks)
	b.WriteString("</div>\n")
}

// writeFlamePage writes a run's profile as a page of its own, one
// self-contained file: its flame graph and top ten under label, its
// heading, and caption, after the links back to the session's page and
// to the run's files (runLinks).
func writeFlamePage(b *bytes.Buffer, stacks []profile.Stack, label, caption string, links []link) {
	htmldoc.Head(b, label, htmldoc.Style, flameStyle)
	fmt.Fprintf(b, "<h1>%s</h1>\n", htmldoc.Esc(label))
	if len(links) > 0 {
		b.WriteString("<nav class=\"run\"><ul>\n")
		for _, l := range links {
			href := htmldoc.RelHref(l.rel)
			if l.fragment != "" {
				href += "#" + htmldoc.Esc(l.fragment)
			}
			fmt.Fprintf(b, "<li><a href=\"%s\">%s</a></li>\n", href, htmldoc.Esc(l.text))
		}
		b.WriteString("</ul></nav>\n")
	}
	WriteFlame(b, stacks, label, caption)
	b.WriteString(FlameScript)
	b.WriteString("</body>\n</html>\n")
}

// FlameCaption says what the flame graph shows.
func FlameCaption(stacks []profile.Stack) string {
	n, _ := foldedSamples(stacks)
	return fmt.Sprintf("The proxy's %s over the window: a frame's width is its share of them, its callees above it; "+
		"frames under %s of the samples are left out. Beside it, the ten functions of most self time (self: samples ending in the function; total: samples with it anywhere in their stack).",
		text.Plural(int(min(n, math.MaxInt)), "CPU sample"), text.SharePercent(flameMinShare))
}

package profiles

import (
	"bytes"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"bench/internal/golden"
	"bench/profile"
	"bench/results"
)

func readFolded(t *testing.T, name string) []profile.Stack {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "profile", name+results.FoldedSuffix))
	if err != nil {
		t.Fatal(err)
	}
	s, err := profile.ParseFolded(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("ParseFolded(%s) = %v", name, err)
	}
	return s
}

// TestFlameGolden draws a small profile's flame graph and top ten.
func TestFlameGolden(t *testing.T) {
	var b bytes.Buffer
	stacks := readFolded(t, "hot")
	WriteFlame(&b, stacks, "hotproxy, tcp-stream, run 1", FlameCaption(stacks))
	golden.Check(t, filepath.Join("testdata", "golden", "flame-hot.html"), b.Bytes())
}

// TestFlameFrames checks what every frame owes its reader: a title with
// its function, its share of the samples and its self share, and the
// frames under flameMinShare left out.
func TestFlameFrames(t *testing.T) {
	stacks := readFolded(t, "hot")
	svg := string(flameSVG(stacks, "hot"))
	title := regexp.MustCompile(`<g class="frame"><title>([^<]*)</title>`)
	got := title.FindAllStringSubmatch(svg, -1)
	if len(got) == 0 {
		t.Fatalf("flameSVG drew no frame:\n%s", svg)
	}
	want := map[string]string{
		// the root: every sample
		"all": "all: 100% of the proxy's samples (100), self 0.0% (0)",
		// the hot function: 82 samples, 80 of them its own
		"main.benchHotLoop": "main.benchHotLoop: 82% of the proxy's samples (82), self 80% (80)",
	}
	seen := map[string]bool{}
	for _, m := range got {
		m[1] = html.UnescapeString(m[1])
		name, _, _ := strings.Cut(m[1], ": ")
		if !strings.Contains(m[1], "of the proxy's samples") || !strings.Contains(m[1], ", self ") {
			t.Errorf("frame title %q; want its share and its self share", m[1])
		}
		if w, ok := want[name]; ok && m[1] != w {
			t.Errorf("frame title %q; want %q", m[1], w)
		}
		seen[name] = true
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("flameSVG drew no frame of %q", name)
		}
	}
	if strings.Contains(svg, "<script") {
		t.Errorf("flameSVG has a script")
	}
}

// TestFlameMinShare leaves out the frames under the narrowest share.
func TestFlameMinShare(t *testing.T) {
	stacks := []profile.Stack{{Frames: []string{"p", "wide"}, Count: 10000}, {Frames: []string{"p", "narrow"}, Count: 5}}
	svg := string(flameSVG(stacks, "p"))
	if !strings.Contains(svg, "<title>wide:") || strings.Contains(svg, "<title>narrow:") {
		t.Errorf("flameSVG of a frame of 5 in 10005 samples: want it left out, its sibling of 10000 drawn:\n%s", svg)
	}
}

// TestMachineCaption: a profile whose samples end mostly in the
// machine's functions says so in its caption, naming them, and its top
// view adds the proxy's own functions, the machine's samples counted to
// their callers; one with few says nothing of it.
func TestMachineCaption(t *testing.T) {
	machine := []profile.Stack{
		{Frames: []string{"nginx", "tcp_sendmsg", "pvm_irq_enable"}, Count: 40},
		{Frames: []string{"nginx", "x2apic_send_IPI", "pvm_write_msr"}, Count: 22},
		{Frames: []string{"nginx", "[nginx]"}, Count: 38},
	}
	c := MachineCaption(machine)
	for _, want := range []string{" 62% of the samples end in the machine's own functions (pvm_irq_enable 40%, pvm_write_msr 22%)", "second table"} {
		if !strings.Contains(c, want) {
			t.Errorf("caption %q; want %q", c, want)
		}
	}
	var b bytes.Buffer
	flameTop(&b, machine)
	if !strings.Contains(b.String(), `<table class="top own">`) || !strings.Contains(b.String(), "<tr><td>tcp_sendmsg</td><td>40%</td>") {
		t.Errorf("top view %s; want a second table with tcp_sendmsg's 40%% self", b.String())
	}
	own := machine[2:]
	b.Reset()
	flameTop(&b, own)
	if c := MachineCaption(own); c != "" || strings.Contains(b.String(), "top own") {
		t.Errorf("a profile with no machine's samples: caption %q, top view %s; want neither", c, b.String())
	}
}

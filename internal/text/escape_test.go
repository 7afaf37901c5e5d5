package text

import (
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// FuzzEscape: whatever text a name or a note holds, the markdown's
// escapers leave no control character (a newline, a tab, an escape), no
// raw <, > or &, and a cell no | that would end it; the tab-separated
// text's, no control character. The seeds are in testdata/fuzz/FuzzEscape.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"nginx", "x\n\n# Heading [link](http://example.invalid)", "x\ty", "a|b\\|c", "<b>&amp;</b>", "\x1b[2J\r", "\xff\u2028"} {
		f.Add(s)
	}
	rawBar := regexp.MustCompile(`(^|[^\\])\|`) // GitHub's tables split cells at a | that no \ comes before
	entity := regexp.MustCompile(`&(amp|lt|gt);`)
	f.Fuzz(func(t *testing.T, s string) {
		for name, got := range map[string]string{"MarkdownText": MarkdownText.Replace(s), "MarkdownCell": MarkdownCell.Replace(s), "TSVText": TSVText.Replace(s)} {
			if strings.ContainsFunc(got, func(r rune) bool { return unicode.IsControl(r) || !unicode.IsPrint(r) }) {
				t.Errorf("%s.Replace(%q) = %q holds a control character", name, s, got)
			}
			if name != "TSVText" && strings.ContainsAny(entity.ReplaceAllString(got, ""), "<>&") {
				t.Errorf("%s.Replace(%q) = %q holds a raw <, > or &", name, s, got)
			}
		}
		if got := MarkdownCell.Replace(s); rawBar.MatchString(got) {
			t.Errorf("MarkdownCell.Replace(%q) = %q holds a | that ends the cell", s, got)
		}
	})
}

func TestEscapers(t *testing.T) {
	for _, c := range []struct {
		in              string
		text, cell, tsv string
	}{
		{"nginx", "nginx", "nginx", "nginx"},
		{"a|b", "a|b", `a\|b`, "a|b"},
		{"<b>&amp;</b>", "&lt;b&gt;&amp;amp;&lt;/b&gt;", "&lt;b&gt;&amp;amp;&lt;/b&gt;", "<b>&amp;</b>"},
		{"x\ty", `x\ty`, `x\ty`, `x\ty`},
		{"one\n# two", `one\n# two`, `one\n# two`, `one\n# two`},
		{"\xff", `\xff`, `\xff`, `\xff`},
		{"ARM (M4) – 2×", "ARM (M4) – 2×", "ARM (M4) – 2×", "ARM (M4) – 2×"},
	} {
		for _, e := range []struct {
			name string
			e    Escaper
			want string
		}{{"MarkdownText", MarkdownText, c.text}, {"MarkdownCell", MarkdownCell, c.cell}, {"TSVText", TSVText, c.tsv}} {
			if got := e.e.Replace(c.in); got != e.want {
				t.Errorf("%s.Replace(%q) = %q; want %q", e.name, c.in, got, e.want)
			}
		}
	}
}

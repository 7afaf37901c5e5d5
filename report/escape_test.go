package report

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
		for name, got := range map[string]string{"mdText": mdText.Replace(s), "mdCell": mdCell.Replace(s), "tsvText": tsvText.Replace(s)} {
			if strings.ContainsFunc(got, func(r rune) bool { return unicode.IsControl(r) || !unicode.IsPrint(r) }) {
				t.Errorf("%s.Replace(%q) = %q holds a control character", name, s, got)
			}
			if name != "tsvText" && strings.ContainsAny(entity.ReplaceAllString(got, ""), "<>&") {
				t.Errorf("%s.Replace(%q) = %q holds a raw <, > or &", name, s, got)
			}
		}
		if got := mdCell.Replace(s); rawBar.MatchString(got) {
			t.Errorf("mdCell.Replace(%q) = %q holds a | that ends the cell", s, got)
		}
	})
}

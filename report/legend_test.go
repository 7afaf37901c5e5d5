package report

import (
	"slices"
	"strings"
	"testing"

	"bench/report/internal/reporttest"
)

// TestMarksExplainedFinds: the checks of TestMarksExplained find a mark
// whose legend is missing.
func TestMarksExplainedFinds(t *testing.T) {
	md := "| scenario | a |\n|:--|:--|\n| ka-1k | **2.0** ‡ * !5% |\n\nMarks:\n\n- **bold**: best\n- *: best of the row\n"
	if got := reporttest.UnexplainedMarkdown(md); !slices.Equal(got, []string{"table at line | scenario | a |: ‡", "table at line | scenario | a |: !"}) {
		t.Errorf("unexplainedMarkdown(‡ and ! without a legend) = %q; want both", got)
	}
	page := `<table class="throughput"><tr><th>s</th></tr><tr><th>r</th><td><strong>2.0</strong> ‡ <span class="err" title="5%">!5%</span></td></tr></table>` +
		"<p>Marks:</p>\n<ul class=\"legend\">\n<li><strong>bold</strong>: best</li>\n<li>‡: bound</li>\n</ul>\n</body>"
	if got := reporttest.UnexplainedPage(page); len(got) != 1 || !strings.HasSuffix(got[0], ": !") {
		t.Errorf("unexplainedPage(! without a legend) = %q; want it", got)
	}
}

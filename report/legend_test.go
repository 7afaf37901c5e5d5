package report

import (
	"bytes"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"bench/results"
)

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
		{"!", regexp.MustCompile(`class="err"`)},
		{"±", regexp.MustCompile(`class="spread"`)},
		{"–", regexp.MustCompile(`<td>–`)},
	}
)

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

// unexplainedMarkdown lists the marks of the markdown's tables that the
// legend under each does not explain: "HTTP proxy table 2: ‡".
func unexplainedMarkdown(md string) []string {
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
			if lines[j] == legendHead+":" {
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

// unexplainedPage lists the marks of the page's tables that the legend
// under each does not explain.
func unexplainedPage(page string) []string {
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

// TestMarksExplained: every mark a table's cells carry (bold, *, †, ‡,
// the failure mark, the spread and n, –) is explained in the legend under
// that table, in the markdown with and without the detail and on the
// page: of the reference session, of an unseen one (pageSession, with
// failed exchanges in a cell), and of the reference results' tables.
func TestMarksExplained(t *testing.T) {
	type session struct {
		name string
		rows []results.Row
	}
	ref, err := filepath.Glob(filepath.Join("..", "data", "*.csv"))
	if err != nil || len(ref) == 0 {
		t.Fatalf("no session file in ../data: %v", err)
	}
	refRows, err := results.ReadFiles(ref)
	if err != nil {
		t.Fatal(err)
	}
	unseen, _ := pageSession(t)
	sessions := []session{{"reference session", refRows}, {"unseen session", noted(unseen)}}
	for _, s := range loadReference(t) {
		rows, err := results.ReadFiles([]string{filepath.Join("testdata", "csv", s.name+".csv")})
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, session{"reference results " + s.name, rows})
	}
	for _, s := range sessions {
		for _, opt := range []Options{{}, {Detail: true}, {Format: FormatHTML}} {
			var b bytes.Buffer
			if err := Render(&b, s.rows, opt); err != nil {
				t.Fatal(err)
			}
			var missing []string
			if opt.Format == FormatHTML {
				missing = unexplainedPage(b.String())
			} else {
				missing = unexplainedMarkdown(b.String())
			}
			if len(missing) > 0 {
				t.Errorf("%s, %+v: marks without their legend: %q", s.name, opt, missing)
			}
		}
	}
}

// TestMarksExplainedFinds: the checks of TestMarksExplained find a mark
// whose legend is missing.
func TestMarksExplainedFinds(t *testing.T) {
	md := "| scenario | a |\n|:--|:--|\n| ka-1k | **2.0** ‡ * !5% |\n\nMarks:\n\n- **bold**: best\n- *: best of the row\n"
	if got := unexplainedMarkdown(md); !slices.Equal(got, []string{"table at line | scenario | a |: ‡", "table at line | scenario | a |: !"}) {
		t.Errorf("unexplainedMarkdown(‡ and ! without a legend) = %q; want both", got)
	}
	page := `<table class="throughput"><tr><th>s</th></tr><tr><th>r</th><td><strong>2.0</strong> ‡ <span class="err" title="5%">!5%</span></td></tr></table>` +
		"<p>Marks:</p>\n<ul class=\"legend\">\n<li><strong>bold</strong>: best</li>\n<li>‡: bound</li>\n</ul>\n</body>"
	if got := unexplainedPage(page); len(got) != 1 || !strings.HasSuffix(got[0], ": !") {
		t.Errorf("unexplainedPage(! without a legend) = %q; want it", got)
	}
}

package page

import (
	"bytes"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"bench/profile"
	"bench/report"
	"bench/report/chart"
	"bench/report/htmldoc"
	"bench/report/internal/reporttest"
	"bench/report/profiles"
	"bench/results"
	"github.com/HdrHistogram/hdrhistogram-go"
)

// TestChartTipsForged: a proxy named as a tip's marker is a name on the
// page, drawn as text (compare's page: TestComparisonTipsForged): it neither panics the
// writer nor puts a title of its own choosing, or takes one away.
func TestChartTipsForged(t *testing.T) {
	rows, data := reporttest.PageSession(t)
	page := func(rows []results.Row) func(*bytes.Buffer) error {
		return func(b *bytes.Buffer) error {
			return Render(b, rows, report.Options{Format: report.FormatHTML, Runs: data})
		}
	}
	// the counts of a page where nginx is renamed plainly: a name of
	// no proxy known draws the charts of one
	const plain = "tip 0"
	plainPage, err := reporttest.RenderSafe(page(reporttest.Renamed(rows, "nginx", plain)))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range reporttest.ForgedTips {
		for _, c := range []struct {
			what, plain string
			write       func(*bytes.Buffer) error
		}{
			{"report --format html", plainPage, page(reporttest.Renamed(rows, "nginx", name))},
		} {
			got, err := reporttest.RenderSafe(c.write)
			switch {
			case err != nil:
				t.Errorf("%s with a proxy named %q: %v", c.what, name, err)
			case reporttest.TipCounts(got) != reporttest.TipCounts(c.plain):
				t.Errorf("%s with a proxy named %q: %s; want those of the page with %q, %s", c.what, name, reporttest.TipCounts(got), plain, reporttest.TipCounts(c.plain))
			case !strings.Contains(got, ">"+htmldoc.Esc(name)+"</text>"):
				t.Errorf("%s with a proxy named %q: the charts draw no text of the name", c.what, name)
			}
		}
	}
}

// TestPageEmptyHistograms: a mix run whose histogram holds no exchange
// (bench mix writes one where none was due) draws no percentile chart
// of it, and the page says so in its place, with no panic.
func TestPageEmptyHistograms(t *testing.T) {
	rows, data := reporttest.PageSession(t)
	empty, err := hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3).Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range data {
		if d.Histogram != "" {
			d.Histogram = string(empty)
		}
	}
	page, err := reporttest.RenderSafe(func(b *bytes.Buffer) error {
		return Render(b, rows, report.Options{Format: report.FormatHTML, Runs: data})
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(page, `<figure class="`+chart.ClassHDR+`"`); n != 0 {
		t.Errorf("the page draws %d percentile charts of empty histograms; want none", n)
	}
	if !strings.Contains(page, noExchangeNote) {
		t.Errorf("the page does not say that the histograms hold no exchange (%q)", noExchangeNote)
	}
}

// nonFiniteText matches a figure that is not one, as Go's formatting
// writes it: in a text, a coordinate or a path.
var nonFiniteText = regexp.MustCompile(`[+-]Inf|NaN`)

// withoutFont is page with the charts' font (chart.FontCSS) left out: its
// base64 may hold any letters.
func withoutFont(page string) string { return strings.ReplaceAll(page, chart.FontCSS(), "") }

// TestPageFiguresOutOfRange: runs whose figures are out of any range a
// session measures (seconds next to nothing or to the largest float, no
// request) give pages and text with no infinity and no NaN: a ratio or
// a chart that cannot be has "–" or is left out.
func TestPageFiguresOutOfRange(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(i int, r *results.Row)
	}{
		{"seconds 1e-309", func(i int, r *results.Row) { r.Seconds = 1e-309 }},
		{"seconds 1e300", func(i int, r *results.Row) { r.Seconds = 1e300 }},
		{"seconds 1e-300", func(i int, r *results.Row) { r.Seconds = 1e-300 }},
		{"seconds 1e100", func(i int, r *results.Row) { r.Seconds = 1e100 }},
		{"requests 0", func(i int, r *results.Row) {
			if i%2 == 0 {
				r.Requests, r.Bytes = 0, 0
			}
		}},
		{"no proxy 0", func(i int, r *results.Row) {
			if r.Group == results.Baseline {
				r.Requests, r.Bytes = 0, 0
			}
		}},
	} {
		rows, data := reporttest.PageSession(t)
		for i := range rows {
			c.edit(i, &rows[i])
		}
		for _, format := range []string{report.FormatHTML, report.FormatMarkdown} {
			page, err := reporttest.RenderSafe(func(b *bytes.Buffer) error { return render(b, rows, report.Options{Format: format, Runs: data}) })
			if err != nil {
				t.Errorf("%s, %s: %v", c.name, format, err)
				continue
			}
			page = withoutFont(page)
			if m := nonFiniteText.FindStringIndex(page); m != nil {
				t.Errorf("%s, %s: %q", c.name, format, page[max(0, m[0]-120):min(len(page), m[1]+20)])
			}
		}
	}
}

// TestFlameCountsOutOfRange: stacks whose counts sum past int64 draw a
// flame graph of shares of 100% at most, within its width, and a page
// of such a profile, or of one with a line past what the folded reader
// takes, leaves that profile out with a note rather than fail.
func TestFlameCountsOutOfRange(t *testing.T) {
	huge := []profile.Stack{
		{Frames: []string{"proxy", "main", "a"}, Count: math.MaxInt64 - 1},
		{Frames: []string{"proxy", "main", "b"}, Count: math.MaxInt64 / 2},
		{Frames: []string{"proxy", "main", "b"}, Count: math.MaxInt64 / 2},
	}
	var b bytes.Buffer
	profiles.WriteFlame(&b, huge, "huge", profiles.FlameCaption(huge))
	share := regexp.MustCompile(`([0-9.]+)%`)
	for _, m := range share.FindAllStringSubmatch(b.String(), -1) {
		if v, _ := strconv.ParseFloat(m[1], 64); v > 100 {
			t.Errorf("the flame graph of counts near 2^63 gives a share of %s%%", m[1])
			break
		}
	}
	for _, m := range regexp.MustCompile(`x="([^"]*)"[^>]*width="([^"]*)"`).FindAllStringSubmatch(b.String(), -1) {
		x, _ := strconv.ParseFloat(m[1], 64)
		w, _ := strconv.ParseFloat(m[2], 64)
		if x < 0 || w < 0 || x+w > profiles.FlameWidth+0.01 {
			t.Errorf("a frame at x %s, %s wide: past the graph's %g", m[1], m[2], profiles.FlameWidth)
			break
		}
	}
	if m := nonFiniteText.FindString(b.String()); m != "" {
		t.Errorf("the flame graph of counts near 2^63 holds %s", m)
	}

	for _, c := range []struct{ name, folded string }{
		{"counts past 2^53", "proxy;main;a 9007199254740993\nproxy;main;b 5\n"},
		{"counts past 2^63 in all", "proxy;main;a 9223372036854775806\nproxy;main;b 9223372036854775806\n"},
		{"a line past 1 MiB", "proxy;" + strings.Repeat("f", 1<<20+10) + " 5\n"},
	} {
		// every run of a cell: its median's profile is the one read
		rows, data := profiledSession(t)
		for _, d := range data {
			if d.Profiled() && d.Proxy == "nginx" && d.Load == "ka-1k" {
				if err := os.WriteFile(d.Files+results.FoldedSuffix, []byte(c.folded), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		note := regexp.MustCompile(`the CPU profile of [0-9]+-nginx-http-ka-1k-[0-9] \(nginx\): `)
		page, err := reporttest.RenderSafe(func(b *bytes.Buffer) error {
			return Render(b, rows, report.Options{Format: report.FormatHTML, Runs: data})
		})
		switch {
		case err != nil:
			t.Errorf("%s: the page fails: %v", c.name, err)
		case !note.MatchString(page):
			t.Errorf("%s: the page does not say that the profile of nginx in http-ka-1k is left out", c.name)
		case strings.Count(page, `<section class="profile"`) != 14:
			t.Errorf("%s: the page holds %d profiles; want the 14 others", c.name, strings.Count(page, `<section class="profile"`))
		}
	}
}

// TestLinearTicksEnd: a range of two neighbouring float64s (2^83 and the
// next, 2^31 apart: a step of 1e9, less than half that spacing, adds
// nothing) gives a few ticks, not a loop that never passes its end.
func TestLinearTicksEnd(t *testing.T) {
	lo := math.Ldexp(1, 83)
	done := make(chan int, 1)
	go func() { done <- len(chart.LinearTicks{Most: 5}.Ticks(lo, math.Nextafter(lo, math.Inf(1)))) }()
	select {
	case n := <-done:
		if n > 6 {
			t.Errorf("linearTicks(2^83, the next float64) = %d ticks; want 5 at most, and one more for the edge", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("linearTicks(2^83, the next float64) did not end in 10 s")
	}
}

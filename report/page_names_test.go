package report

import (
	"bench/report/results"
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// forgedTips are names that look like the markers the charts' tips
// (tips) draw and replace with their titles.
var forgedTips = []string{"@@tip 99999@@", "@@tip 0@@", "@@/tip@@", "@@tip -1@@"}

// renamed is rows with the proxy from renamed to.
func renamed(rows []results.Row, from, to string) []results.Row {
	out := make([]results.Row, len(rows))
	for i, r := range rows {
		if r.Proxy == from {
			r.Proxy = to
		}
		out[i] = r
	}
	return out
}

// tipCounts are the counts of what the tips put in a page: their groups,
// the groups' ends and the titles.
func tipCounts(page string) string {
	return fmt.Sprintf("%d <g class=, %d </g>, %d <title>", strings.Count(page, "<g class="), strings.Count(page, "</g>"), strings.Count(page, "<title>"))
}

// renderSafe is what f writes, or the panic it raised as an error.
func renderSafe(f func(*bytes.Buffer) error) (page string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	var b bytes.Buffer
	err = f(&b)
	return b.String(), err
}

// TestChartTipsForged: a proxy named as a tip's marker is a name on the
// page and in a comparison's, drawn as text: it neither panics the
// writer nor puts a title of its own choosing, or takes one away.
func TestChartTipsForged(t *testing.T) {
	rows, data := pageSession(t)
	old := append(cellRuns("a", "nginx", "ka-1k", 10, 10.5, 11), cellRuns("a", "squid", "ka-1k", 5, 5.2, 5.4)...)
	new := append(cellRuns("b", "nginx", "ka-1k", 8, 8.4, 8.8), cellRuns("b", "squid", "ka-1k", 5.1, 5.2, 5.3)...)
	page := func(rows []results.Row) func(*bytes.Buffer) error {
		return func(b *bytes.Buffer) error { return Render(b, rows, Options{Format: FormatHTML, Runs: data}) }
	}
	compare := func(old, new []results.Row) func(*bytes.Buffer) error {
		return func(b *bytes.Buffer) error {
			cmp, err := Compare(old, new, CompareOptions{})
			if err != nil {
				return err
			}
			return WriteComparison(b, cmp, FormatHTML)
		}
	}
	// the counts of a page where nginx is renamed plainly: a name of
	// no proxy known draws the charts of one
	const plain = "tip 0"
	plainPage, err := renderSafe(page(renamed(rows, "nginx", plain)))
	if err != nil {
		t.Fatal(err)
	}
	plainCompare, err := renderSafe(compare(renamed(old, "nginx", plain), renamed(new, "nginx", plain)))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range forgedTips {
		for _, c := range []struct {
			what, plain string
			write       func(*bytes.Buffer) error
		}{
			{"report --format html", plainPage, page(renamed(rows, "nginx", name))},
			{"compare --format html", plainCompare, compare(renamed(old, "nginx", name), renamed(new, "nginx", name))},
		} {
			got, err := renderSafe(c.write)
			switch {
			case err != nil:
				t.Errorf("%s with a proxy named %q: %v", c.what, name, err)
			case tipCounts(got) != tipCounts(c.plain):
				t.Errorf("%s with a proxy named %q: %s; want those of the page with %q, %s", c.what, name, tipCounts(got), plain, tipCounts(c.plain))
			case !strings.Contains(got, ">"+esc(name)+"</text>"):
				t.Errorf("%s with a proxy named %q: the charts draw no text of the name", c.what, name)
			}
		}
	}
}

// TestPageEmptyHistograms: a mix run whose histogram holds no exchange
// (bench mix writes one where none was due) draws no percentile chart
// of it, and the page says so in its place, with no panic.
func TestPageEmptyHistograms(t *testing.T) {
	rows, data := pageSession(t)
	empty, err := hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3).Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range data {
		if d.Histogram != "" {
			d.Histogram = string(empty)
		}
	}
	page, err := renderSafe(func(b *bytes.Buffer) error { return Render(b, rows, Options{Format: FormatHTML, Runs: data}) })
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(page, `<figure class="`+classHDR+`"`); n != 0 {
		t.Errorf("the page draws %d percentile charts of empty histograms; want none", n)
	}
	if !strings.Contains(page, noExchangeNote) {
		t.Errorf("the page does not say that the histograms hold no exchange (%q)", noExchangeNote)
	}
}

package text

import (
	"bytes"
	"testing"
)

func TestHeading(t *testing.T) {
	for _, c := range []struct {
		f     Format
		level int
		s     string
		want  string
	}{
		{Markdown{}, 1, "Session 2025-06-01", "# Session 2025-06-01\n\n"},
		{Markdown{}, 4, "Throughput (Gbit/s)", "#### Throughput (Gbit/s)\n\n"},
		{Markdown{}, 3, "ARM <M4> & co", "### ARM &lt;M4&gt; &amp; co\n\n"},
		{TSV{}, 1, "Session 2025-06-01", "Session 2025-06-01\n\n"},
		{TSV{}, 3, "ARM <M4>\tx", "ARM <M4>\\tx\n\n"},
	} {
		var b bytes.Buffer
		c.f.Heading(&b, c.level, c.s)
		if got := b.String(); got != c.want {
			t.Errorf("%T.Heading(%d, %q) = %q; want %q", c.f, c.level, c.s, got, c.want)
		}
	}
}

func TestGrid(t *testing.T) {
	header := []string{"", "nginx", "a|b"}
	rows := [][]string{{"1 MiB", "**35.0**", "<1>"}, {"4 KiB\tx", "–", "2"}}
	for _, c := range []struct {
		f    Format
		want string
	}{
		{Markdown{}, "|          | nginx    | a\\|b      |\n" +
			"|:---------|:---------|:----------|\n" +
			"| 1 MiB    | **35.0** | &lt;1&gt; |\n" +
			"| 4 KiB\\tx | –        | 2         |\n"},
		{TSV{}, "\tnginx\ta|b\n1 MiB\t**35.0**\t<1>\n4 KiB\\tx\t–\t2\n"},
	} {
		var b bytes.Buffer
		if err := c.f.Grid(&b, header, rows); err != nil {
			t.Fatalf("%T.Grid: %v", c.f, err)
		}
		if got := b.String(); got != c.want {
			t.Errorf("%T.Grid = %q; want %q", c.f, got, c.want)
		}
	}
	if header[2] != "a|b" || rows[1][0] != "4 KiB\tx" {
		t.Errorf("Grid changed its arguments: %q, %q", header, rows)
	}
}

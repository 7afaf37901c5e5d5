package page

import (
	"image/color"
	"testing"

	"bench/report"
	"bench/report/chart"
	"bench/results"
)

// TestPalettesApart: the colours of what is not a column (roles,
// directions, a trend's changes) are none of the columns' colours, nor
// near one; each of the two palettes tells its own colours apart.
func TestPalettesApart(t *testing.T) {
	const apart = 25
	columns := append([]color.Color{chart.BaselineColor}, chart.PaletteColors...)
	for _, m := range chart.MeaningColors {
		for _, c := range columns {
			if d := chart.DeltaE(m, c); d < apart {
				t.Errorf("deltaE(%v, %v) = %.1f; want a role's colour %v apart from every column's", m, c, d, apart)
			}
		}
	}
	for i, a := range chart.MeaningColors {
		for _, b := range chart.MeaningColors[i+1:] {
			if d := chart.DeltaE(a, b); d < apart {
				t.Errorf("deltaE(%v, %v) = %.1f; want the roles' colours %v apart", a, b, d, apart)
			}
		}
	}
	for i, a := range columns {
		for _, b := range columns[i+1:] {
			if a == b {
				t.Errorf("the columns' palette has %v twice", a)
			}
		}
	}
}

// TestPaletteColors: the columns of a page have the columns' colours,
// a tunnel's directions theirs, and the handshakes' proxies their own
// columns' colours.
func TestPaletteColors(t *testing.T) {
	tables := []report.Table{
		{Family: report.FamHTTP, Columns: []string{"no proxy", "nginx", "devel"}, Groups: []string{"baseline", "copy", "copy"}},
		{Family: report.FamTunnel, Columns: report.Directions, Groups: []string{"", ""}},
		{Family: report.FamHandshake, Columns: []string{"Connections/s"}, Groups: []string{""},
			Rows: []report.TableRow{{Cells: []report.Cell{{Proxy: "stunnel"}}}, {Cells: []report.Cell{{Proxy: "nginx"}}}}},
	}
	pal := report.NewPalette(tables)
	for _, c := range []struct {
		column string
		want   color.Color
	}{
		{"no proxy", chart.BaselineColor},
		{"nginx", chart.PaletteColors[chart.KnownColumns["nginx"]]},
		{"stunnel", chart.PaletteColors[chart.KnownColumns["stunnel"]]},
		{report.Directions[0], chart.DirectionColors[0]},
		{report.Directions[1], chart.DirectionColors[1]},
	} {
		g := results.Copy
		if c.column == "no proxy" {
			g = results.Baseline
		}
		if got := pal.Color(c.column, g); got != c.want {
			t.Errorf("color(%q) = %v; want %v", c.column, got, c.want)
		}
	}
	// devel's hash falls on no slot of another column, but on bright
	// green (228833), nginx's muted green's twin: it takes another
	if d := chart.DeltaE(pal.Color("devel", results.Copy), pal.Color("nginx", results.Copy)); d < chart.ColumnsApart {
		t.Errorf("devel's colour %v is %.1f from nginx's; want %v apart", pal.Color("devel", results.Copy), d, chart.ColumnsApart)
	}
	series := chartSeries(tables[2], pal)
	if len(series) != 2 || series[0].name != "stunnel" || series[1].name != "nginx" || series[0].color == series[1].color {
		t.Errorf("chartSeries(handshakes) = %+v; want stunnel and nginx, each its column's colour", series)
	}
}

// TestKnownColumnsInPalette: every colour slot the proxies' kinds fix is
// one of the palette's.
func TestKnownColumnsInPalette(t *testing.T) {
	if len(chart.KnownColumns) == 0 {
		t.Fatal("no kind fixes a column's colour")
	}
	for name, s := range chart.KnownColumns {
		if s < 0 || s >= len(chart.PaletteColors) {
			t.Errorf("column %q has slot %d; the palette has %d", name, s, len(chart.PaletteColors))
		}
	}
}

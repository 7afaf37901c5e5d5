package report

import (
	"bench/report/results"
	"image/color"
	"math"
	"testing"
)

// lab is c in CIE L*a*b* (D65), where the distance of two colours
// follows how far apart they look.
func lab(c color.Color) [3]float64 {
	r, g, b, _ := c.RGBA()
	lin := func(v uint32) float64 {
		s := float64(v) / 0xffff
		if s <= 0.04045 {
			return s / 12.92
		}
		return math.Pow((s+0.055)/1.055, 2.4)
	}
	R, G, B := lin(r), lin(g), lin(b)
	x := (0.4124*R + 0.3576*G + 0.1805*B) / 0.95047
	y := 0.2126*R + 0.7152*G + 0.0722*B
	z := (0.0193*R + 0.1192*G + 0.9505*B) / 1.08883
	f := func(t float64) float64 {
		if t > 0.008856 {
			return math.Cbrt(t)
		}
		return 7.787*t + 16.0/116
	}
	return [3]float64{116*f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))}
}

// deltaE is CIE76's distance of two colours: about 2.3 is the least a
// reader tells apart side by side; 25 and more, two colours no reader
// takes for one across a page.
func deltaE(a, b color.Color) float64 {
	la, lb := lab(a), lab(b)
	return math.Hypot(math.Hypot(la[0]-lb[0], la[1]-lb[1]), la[2]-lb[2])
}

// TestPalettesApart: the colours of what is not a column (roles,
// directions, a trend's changes) are none of the columns' colours, nor
// near one; each of the two palettes tells its own colours apart.
func TestPalettesApart(t *testing.T) {
	const apart = 25
	columns := append([]color.Color{baselineColor}, paletteColors...)
	for _, m := range meaningColors {
		for _, c := range columns {
			if d := deltaE(m, c); d < apart {
				t.Errorf("deltaE(%v, %v) = %.1f; want a role's colour %v apart from every column's", m, c, d, apart)
			}
		}
	}
	for i, a := range meaningColors {
		for _, b := range meaningColors[i+1:] {
			if d := deltaE(a, b); d < apart {
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
	tables := []Table{
		{Family: famHTTP, Columns: []string{"no proxy", "nginx", "devel"}, Groups: []string{"baseline", "copy", "copy"}},
		{Family: famTunnel, Columns: directions, Groups: []string{"", ""}},
		{Family: famHandshake, Columns: []string{"Connections/s"}, Groups: []string{""},
			Rows: []TableRow{{Cells: []Cell{{Proxy: "stunnel"}}}, {Cells: []Cell{{Proxy: "nginx"}}}}},
	}
	pal := newPalette(tables)
	for _, c := range []struct {
		column string
		want   color.Color
	}{
		{"no proxy", baselineColor},
		{"nginx", paletteColors[knownColumns["nginx"]]},
		{"stunnel", paletteColors[knownColumns["stunnel"]]},
		{directions[0], directionColors[0]},
		{directions[1], directionColors[1]},
	} {
		g := results.Copy
		if c.column == "no proxy" {
			g = results.Baseline
		}
		if got := pal.color(c.column, g); got != c.want {
			t.Errorf("color(%q) = %v; want %v", c.column, got, c.want)
		}
	}
	series := chartSeries(tables[2], pal)
	if len(series) != 2 || series[0].name != "stunnel" || series[1].name != "nginx" || series[0].color == series[1].color {
		t.Errorf("chartSeries(handshakes) = %+v; want stunnel and nginx, each its column's colour", series)
	}
}

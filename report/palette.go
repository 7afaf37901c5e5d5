package report

import (
	"bench/proxies"
	"bench/results"
	"hash/fnv"
	"image/color"
	"math"
	"slices"
)

// Colours of the columns: Paul Tol's muted scheme, safe for colour-blind
// readers, then his bright one for pages with more columns than it has.
var paletteColors = []color.Color{
	rgb(0x117733), rgb(0x332288), rgb(0x88ccee), rgb(0xcc6677), rgb(0xddcc77),
	rgb(0x44aa99), rgb(0x882255), rgb(0xaa4499), rgb(0x999933),
	rgb(0x4477aa), rgb(0xee6677), rgb(0x228833), rgb(0xccbb44), rgb(0x66ccee), rgb(0xaa3377),
}

// baselineColor is the baseline column's: Tol's grey.
var baselineColor = rgb(0xbbbbbb)

// knownColumns are the columns whose colour the proxies' kinds fix, each
// with its slot in paletteColors on every page.
var knownColumns = proxies.ColourSlots()

func rgb(v uint32) color.Color {
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 255}
}

// palette is the colour of each column of a page (newPalette).
type palette struct {
	slots map[string]int
}

// newPalette gives each column of the tables its colour (paletteOf).
func newPalette(tables []Table) palette {
	var names []string
	for _, t := range tables {
		switch t.Family {
		case famTunnel: // its columns are directions (directionColors)
		case famHandshake: // its one column holds every proxy's rows
			for _, r := range t.Rows {
				for _, c := range r.Cells {
					names = append(names, c.Proxy)
				}
			}
		default:
			for j, name := range t.Columns {
				if results.Group(t.Groups[j]) != results.Baseline {
					names = append(names, name)
				}
			}
		}
	}
	return paletteOf(names)
}

// paletteOf gives each of the columns names (the baseline's apart) its
// colour: the packaged proxies' columns their fixed slots, and the others
// the slot of a hash of their name, or the next one no other column of
// the page has and whose colour is columnsApart from theirs, while there
// is one, else the next one no other column has. So a column has one colour on every
// chart of the page, and on every page where the columns it meets leave
// its hash's slot free.
func paletteOf(names []string) palette {
	p := palette{slots: map[string]int{}}
	var others []string
	used := map[int]bool{}
	for _, name := range names {
		if s, ok := knownColumns[name]; ok {
			p.slots[name], used[s] = s, true
		} else if !slices.Contains(others, name) {
			others = append(others, name)
		}
	}
	slices.Sort(others)
	near := func(s int) bool {
		for u := range used {
			if deltaE(paletteColors[s], paletteColors[u]) < columnsApart {
				return true
			}
		}
		return false
	}
	for _, name := range others {
		h := fnv.New32a()
		h.Write([]byte(name))
		first := int(h.Sum32() % uint32(len(paletteColors)))
		next := func(taken func(int) bool) int {
			s := first
			for k := 0; k < len(paletteColors) && taken(s); k++ {
				s = (s + 1) % len(paletteColors)
			}
			return s
		}
		s := next(func(s int) bool { return used[s] || near(s) })
		if used[s] || near(s) {
			s = next(func(s int) bool { return used[s] })
		}
		p.slots[name], used[s] = s, true
	}
	return p
}

// columnsApart is the least CIE76 distance (deltaE) of a column's colour
// from those of the other columns of a page, while the palette has one
// so far from them: the muted scheme's colours are 22.8 or more apart,
// the bright scheme's twins of theirs (Tol's green 228833 of 117733, red
// ee6677 of rose cc6677) 8 to 17.
const columnsApart = 20

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

// color is column's colour in every chart; the baseline's is grey, and a
// tunnel's directions have theirs, of the other palette.
func (p palette) color(column string, g results.Group) color.Color {
	if g == results.Baseline {
		return baselineColor
	}
	if i := slices.Index(directions, column); i >= 0 {
		return directionColors[i]
	}
	s, ok := p.slots[column]
	if !ok {
		s = knownColumns[column]
	}
	return paletteColors[s]
}

// meaningColors are the colours of what is not a column: the roles whose
// CPU the series charts draw, a tunnel's directions, a trend's changes.
// Okabe and Ito's vermillion, a near black and a brown: hues the columns'
// palette (paletteColors, baselineColor) has none near, so that no colour
// on a page says both a proxy and a role.
var meaningColors = []color.Color{rgb(0xd55e00), rgb(0x222222), rgb(0x663300)}

// The roles' colors and names in the CPU panels.
var roleLines = []struct {
	role  string
	color color.Color
}{
	{"proxy", meaningColors[0]},
	{"client", meaningColors[1]},
	{"origin", meaningColors[2]},
}

// directionColors are the colours of a tunnel's directions, in the order
// of directions.
var directionColors = meaningColors[:2]

package chart

import (
	"hash/fnv"
	"image/color"
	"math"
	"slices"

	"bench/proxies"
	"bench/results"
)

// Colours of the columns: Paul Tol's muted scheme, safe for colour-blind
// readers, then his bright one for pages with more columns than it has.
var PaletteColors = []color.Color{
	rgb(0x117733), rgb(0x332288), rgb(0x88ccee), rgb(0xcc6677), rgb(0xddcc77),
	rgb(0x44aa99), rgb(0x882255), rgb(0xaa4499), rgb(0x999933),
	rgb(0x4477aa), rgb(0xee6677), rgb(0x228833), rgb(0xccbb44), rgb(0x66ccee), rgb(0xaa3377),
}

// BaselineColor is the baseline column's: Tol's grey.
var BaselineColor = rgb(0xbbbbbb)

// KnownColumns are the columns whose colour the proxies' kinds fix, each
// with its slot in paletteColors on every page.
var KnownColumns = proxies.ColourSlots()

func rgb(v uint32) color.Color {
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 255}
}

// Palette is the colour of each column of a page.
type Palette struct {
	slots map[string]int
	// directions are the columns that are a tunnel's directions, coloured
	// as such (directionColors), in their order
	directions []string
}

// PaletteOf gives each of the columns names (the baseline's apart, and the
// directions of a tunnel, which have theirs: directionColors) its
// colour: the packaged proxies' columns their fixed slots, and the others
// the slot of a hash of their name, or the next one no other column of
// the page has and whose colour is columnsApart from theirs, while there
// is one, else the next one no other column has. So a column has one colour on every
// chart of the page, and on every page where the columns it meets leave
// its hash's slot free.
func PaletteOf(names, directions []string) Palette {
	p := Palette{slots: map[string]int{}, directions: directions}
	var others []string
	used := map[int]bool{}
	for _, name := range names {
		if s, ok := KnownColumns[name]; ok {
			p.slots[name], used[s] = s, true
		} else if !slices.Contains(others, name) {
			others = append(others, name)
		}
	}
	slices.Sort(others)
	near := func(s int) bool {
		for u := range used {
			if DeltaE(PaletteColors[s], PaletteColors[u]) < ColumnsApart {
				return true
			}
		}
		return false
	}
	for _, name := range others {
		h := fnv.New32a()
		h.Write([]byte(name))
		first := int(h.Sum32() % uint32(len(PaletteColors)))
		next := func(taken func(int) bool) int {
			s := first
			for k := 0; k < len(PaletteColors) && taken(s); k++ {
				s = (s + 1) % len(PaletteColors)
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

// ColumnsApart is the least CIE76 distance (deltaE) of a column's colour
// from those of the other columns of a page, while the palette has one
// so far from them: the muted scheme's colours are 22.8 or more apart,
// the bright scheme's twins of theirs (Tol's green 228833 of 117733, red
// ee6677 of rose cc6677) 8 to 17.
const ColumnsApart = 20

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

// DeltaE is CIE76's distance of two colours: about 2.3 is the least a
// reader tells apart side by side; 25 and more, two colours no reader
// takes for one across a page.
func DeltaE(a, b color.Color) float64 {
	la, lb := lab(a), lab(b)
	return math.Hypot(math.Hypot(la[0]-lb[0], la[1]-lb[1]), la[2]-lb[2])
}

// Color is column's colour in every chart; the baseline's is grey, and a
// tunnel's directions have theirs, of the other palette.
func (p Palette) Color(column string, g results.Group) color.Color {
	if g == results.Baseline {
		return BaselineColor
	}
	if i := slices.Index(p.directions, column); i >= 0 {
		return DirectionColors[i]
	}
	s, ok := p.slots[column]
	if !ok {
		s = KnownColumns[column]
	}
	return PaletteColors[s]
}

// MeaningColors are the colours of what is not a column: the roles whose
// CPU the series charts draw, a tunnel's directions, a trend's changes.
// Okabe and Ito's vermillion, a near black and a brown: hues the columns'
// Palette (paletteColors, baselineColor) has none near, so that no colour
// on a page says both a proxy and a role.
var MeaningColors = []color.Color{rgb(0xd55e00), rgb(0x222222), rgb(0x663300)}

// The roles' colors and names in the CPU panels.
var RoleLines = []struct {
	Role  string
	Color color.Color
}{
	{"proxy", MeaningColors[0]},
	{"client", MeaningColors[1]},
	{"origin", MeaningColors[2]},
}

// DirectionColors are the colours of a tunnel's directions, in the order
// of a palette's directions.
var DirectionColors = MeaningColors[:2]

package report

import (
	"strings"
	"testing"

	"bench/results"
)

// hand is a hand-made cell: its group and its runs (nil: no ok run).
type hand struct {
	group results.Group
	runs  []float64
}

func handSpreads(cells []hand) []*spread {
	out := make([]*spread, len(cells))
	for i, c := range cells {
		s := Summarize(nil, nil)
		if len(c.runs) > 0 {
			rows := make([]*results.Row, len(c.runs))
			for j, v := range c.runs {
				rows[j] = &results.Row{Requests: int64(v * 1000), Seconds: 1}
			}
			s = Summarize(rows, kreqs)
		}
		out[i] = newSpread(c.group, s)
	}
	return out
}

// marks renders a row's marks: "B" bold, "*" star, "-" neither.
func marks(sp []*spread) string {
	var b strings.Builder
	for i, s := range sp {
		if i > 0 {
			b.WriteByte(' ')
		}
		switch {
		case s.bold && s.star:
			b.WriteString("B*")
		case s.bold:
			b.WriteString("B")
		case s.star:
			b.WriteString("*")
		default:
			b.WriteString("-")
		}
	}
	return b.String()
}

func TestMarkRow(t *testing.T) {
	cases := []struct {
		name  string
		cells []hand
		rule  marking
		want  string
	}{
		// the best of each group is bold; the best of the row also starred
		{"clear winners", []hand{{"copy", []float64{9, 10, 11}}, {"copy", []float64{4, 5, 6}}, {"splice", []float64{19, 20, 21}}, {"splice", []float64{7, 8, 9}}},
			markGroups, "B - B* -"},
		// a cell whose fastest run reaches the best's slowest is bold too
		{"overlap within the group", []hand{{"copy", []float64{9, 10, 11}}, {"copy", []float64{8, 8.5, 9}}, {"copy", []float64{5, 8.9, 8.95}}},
			markGroups, "B* B* -"},
		// equal medians are both bold and starred, whatever their runs
		{"tie", []hand{{"copy", []float64{9, 10, 10.1}}, {"copy", []float64{10, 10, 10}}, {"copy", []float64{9.5, 9.6, 9.7}}},
			markGroups, "B* B* B*"},
		// the lowest slowest run among tied bests decides who else is marked
		{"tie sets the lowest threshold", []hand{{"copy", []float64{10, 10, 10}}, {"copy", []float64{9, 10, 11}}, {"copy", []float64{9.2, 9.3, 9.4}}},
			markGroups, "B* B* B*"},
		// a tie across ‖ stars both sides; each is bold in its group
		{"tie across the bar", []hand{{"copy", []float64{14, 15, 16}}, {"copy", []float64{3, 4, 5}}, {"splice", []float64{14.5, 15, 15.5}}},
			markGroups, "B* - B*"},
		// a single run is its own slowest and fastest
		{"single run", []hand{{"copy", []float64{10}}, {"copy", []float64{9.9}}, {"splice", []float64{12}}},
			markGroups, "B - B*"},
		// all runs of a cell failed: it takes no part
		{"all failed", []hand{{"copy", nil}, {"copy", []float64{5, 6, 7}}, {"splice", nil}},
			markGroups, "- B* -"},
		// nothing ok in the row: no marks at all
		{"nothing ok", []hand{{"copy", nil}, {"splice", nil}}, markGroups, "- -"},
		// the baseline is never marked, however fast
		{"baseline", []hand{{"baseline", []float64{100, 120, 130}}, {"copy", []float64{5, 6, 7}}, {"splice", []float64{1, 2, 3}}},
			markGroups, "- B* B"},
		// CONNECT and SOCKS: only the best of the row, bold and starred
		{"star only", []hand{{"copy", []float64{9, 10, 11}}, {"copy", []float64{4, 5, 6}}, {"splice", []float64{19, 20, 21}}},
			markStarOnly, "- - B*"},
		// star only, runs that cannot be told apart across the bar
		{"star only overlap", []hand{{"copy", []float64{30, 31.4, 31.6}}, {"copy", []float64{30.8, 31.2, 31.5}}, {"copy", []float64{25, 25.6, 26}}, {"splice", []float64{29.9, 30.4, 31.0}}},
			markStarOnly, "B* B* - B*"},
	}
	for _, c := range cases {
		sp := handSpreads(c.cells)
		markRow(sp, c.rule)
		if got := marks(sp); got != c.want {
			t.Errorf("%s: markRow(%v, %v) = %q; want %q", c.name, c.cells, c.rule, got, c.want)
		}
	}
}

func TestBoundElsewhere(t *testing.T) {
	cases := []struct {
		bounds []results.Bound
		want   bool
	}{
		{[]results.Bound{"client", "client", "proxy"}, true},
		{[]results.Bound{"client", "origin", "proxy"}, true},
		{[]results.Bound{"client", "proxy", "none"}, false},
		{[]results.Bound{"client"}, true},
		{[]results.Bound{"client", "proxy"}, false},
		{nil, false},
	}
	for _, c := range cases {
		var rows []*results.Row
		for _, b := range c.bounds {
			rows = append(rows, &results.Row{Bound: b})
		}
		if got := boundElsewhere(rows); got != c.want {
			t.Errorf("boundElsewhere(%v) = %v; want %v", c.bounds, got, c.want)
		}
	}
}

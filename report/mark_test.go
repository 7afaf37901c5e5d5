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

// TestTunnelAndHandshakeBound: the TLS tunnel's and the handshakes'
// cells carry ‡ where most of their runs were paced by the client or the
// origin, as every other table's do, and not where the proxy set it.
func TestTunnelAndHandshakeBound(t *testing.T) {
	var rows []results.Row
	for rep := 1; rep <= 3; rep++ {
		client := results.BoundClient
		if rep == 3 {
			client = results.BoundProxy // a minority: still the client's
		}
		for _, r := range []results.Row{
			{Proxy: "stunnel", Mode: results.TLSTunnel, Load: "TLS_AES_128_GCM_SHA256-up", Bound: client, Bytes: 1e9},
			{Proxy: "stunnel", Mode: results.TLSTunnel, Load: "TLS_AES_128_GCM_SHA256-down", Bound: results.BoundProxy, Bytes: 1e9},
			{Proxy: "stunnel", Mode: results.TLSHandshake, Load: "full", Bound: results.BoundOrigin, Requests: 300},
			{Proxy: "stunnel", Mode: results.TLSHandshake, Load: "resumed", Bound: results.BoundProxy, Requests: 900},
		} {
			r.Machine, r.Session, r.Kind, r.Group, r.Rep, r.Seconds, r.Status = "m", "s", "stunnel", results.Copy, rep, 1, results.OK
			rows = append(rows, r)
		}
	}
	tables, err := Tables(rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	bound := map[string]bool{}
	for _, tb := range tables {
		for _, r := range tb.Rows {
			for j, c := range r.Cells {
				bound[tb.Family+" "+r.Label+" "+tb.Columns[j]] = c.Bound
				if c.Bound != strings.Contains(c.Text, "‡") {
					t.Errorf("%s %s: Bound %v, text %q", tb.Family, r.Label, c.Bound, c.Text)
				}
			}
		}
	}
	want := map[string]bool{
		FamTunnel + " TLS_AES_128_GCM_SHA256 Client to server": true,
		FamTunnel + " TLS_AES_128_GCM_SHA256 Server to client": false,
		FamHandshake + " Full handshake Connections/s":         true,
		FamHandshake + " Resumed session Connections/s":        false,
	}
	for k, w := range want {
		if got, ok := bound[k]; !ok || got != w {
			t.Errorf("%s: ‡ %v (found %v); want %v", k, got, ok, w)
		}
	}
}

// TestMarkFewestFailed: bold and * go to the best of the cells that
// failed the fewest of their exchanges: a faster cell with 0.1% failed is
// not the best over one with none, and where every cell failed some, the
// one that failed least is.
func TestMarkFewestFailed(t *testing.T) {
	for _, c := range []struct {
		name   string
		failed []float64 // each cell's share; its figure is 10, 20, 30
		best   int
	}{
		{"none failed", []float64{0, 0, 0}, 2},
		{"the fastest failed some", []float64{0, 0, 0.001}, 1},
		{"every one failed some", []float64{0.02, 0.001, 0.003}, 1},
	} {
		spreads := handSpreads([]hand{{results.Copy, []float64{10, 10, 10}}, {results.Copy, []float64{20, 20, 20}}, {results.Copy, []float64{30, 30, 30}}})
		cells := make([]Cell, len(spreads))
		for i := range cells {
			if c.failed[i] > 0 {
				cells[i].ErrorShare = &c.failed[i]
			}
		}
		markCells(cells, spreads, markGroups)
		for i, cell := range cells {
			if want := i == c.best; cell.Bold != want || cell.Star != want {
				t.Errorf("%s: cell %d bold %v, star %v; want %v", c.name, i, cell.Bold, cell.Star, want)
			}
		}
	}
}

package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"bench/internal/golden"
	"bench/internal/text"
	"bench/results"
)

// The reference documents' tables are kept under testdata/reference, each file a table (or a
// triple) as the reference documents print it, after "# key: value" lines
// saying how to rebuild it. TestReferenceCSV turns each into a session CSV under
// testdata/csv: three runs per cell whose median is the reference's figure, two
// of three bound by the client where the reference has ‡, and a spread of runs
// that makes the marking rule give the reference's stars. -update rewrites
// the CSVs; otherwise they must equal what the generator makes.

// refTable is one parsed reference file.
type refTable struct {
	name   string
	meta   map[string]string
	body   string   // the reference's text of the table, as the report must print it
	lines  []string // body split into lines
	layout string
}

func loadReference(t *testing.T) []refTable {
	t.Helper()
	paths, err := filepath.Glob("testdata/reference/*.txt")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no reference tables in testdata/reference: %v", err)
	}
	var out []refTable
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s := refTable{name: strings.TrimSuffix(filepath.Base(p), ".txt"), meta: map[string]string{}}
		var body []string
		for _, l := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
			if k, v, ok := strings.Cut(strings.TrimPrefix(l, "# "), ": "); ok && strings.HasPrefix(l, "# ") {
				s.meta[k] = v
				continue
			}
			body = append(body, l)
		}
		s.lines = body
		s.body = strings.Join(body, "\n") + "\n"
		s.layout = s.meta["layout"]
		out = append(out, s)
	}
	return out
}

// refCell is a cell of a reference table.
type refCell struct {
	text    string
	missing bool
	values  []float64 // the figures in the cell: "1.43 (139.2k/s)" -> 1.43, 139.2
	bound   bool
	star    bool
}

func parseRefCell(s string) refCell {
	c := refCell{text: s}
	s = strings.TrimSpace(s)
	if strings.HasSuffix(s, " *") {
		c.star, s = true, strings.TrimSuffix(s, " *")
	}
	if strings.HasSuffix(s, " ‡") {
		c.bound, s = true, strings.TrimSuffix(s, " ‡")
	}
	if strings.HasPrefix(s, "–") {
		c.missing = true
		return c
	}
	for _, f := range strings.Fields(strings.NewReplacer("(", " ", ")", " ", "k/s", "", ",", "", "/", " ").Replace(s)) {
		if v, err := strconv.ParseFloat(f, 64); err == nil {
			c.values = append(c.values, v)
		}
	}
	return c
}

// refHeader splits a header line into columns and their groups: two ‖
// make baseline, copy and splice; one ‖ after a lone "no proxy" makes
// baseline and copy; otherwise one ‖ makes copy and splice.
func refHeader(line string) (names, groups []string) {
	f := strings.Split(line, "\t")[1:]
	var segs [][]string
	cur := []string{}
	for _, c := range f {
		if c == "‖" {
			segs, cur = append(segs, cur), []string{}
			continue
		}
		cur = append(cur, c)
	}
	segs = append(segs, cur)
	var gs []string
	switch {
	case len(segs) == 3:
		gs = []string{"baseline", "copy", "splice"}
	case len(segs) == 2 && len(segs[0]) == 1 && segs[0][0] == "no proxy":
		gs = []string{"baseline", "copy"}
	case len(segs) == 2:
		gs = []string{"copy", "splice"}
	default:
		gs = []string{"splice"}
	}
	for i, seg := range segs {
		for _, n := range seg {
			names, groups = append(names, n), append(groups, gs[i])
		}
	}
	return names, groups
}

func refCells(line string) (string, []refCell) {
	f := strings.Split(line, "\t")
	var cells []refCell
	for _, c := range f[1:] {
		if c != "‖" {
			cells = append(cells, parseRefCell(c))
		}
	}
	return f[0], cells
}

// spreads returns, for each cell of a row, how far below and above its
// median its slowest and fastest runs lie so that the marking rule stars
// exactly the reference's starred cells. values are the medians, eligible the
// cells that take part (not the baseline, not missing).
func spreads(t *testing.T, where string, values []float64, eligible, starred []bool) (lo, hi []float64) {
	best, gapTop := math.Inf(-1), math.Inf(-1)
	for i, v := range values {
		if eligible[i] && v > best {
			best = v
		}
	}
	for i, v := range values {
		if eligible[i] && !starred[i] && v > gapTop {
			gapTop = v
		}
		if eligible[i] && v == best && !starred[i] {
			t.Fatalf("%s: the best figure %v has no star: no spread of runs gives that", where, v)
		}
	}
	delta := 0.01 * best
	if gapTop > math.Inf(-1) {
		delta = math.Min(delta, (best-gapTop)/3)
	}
	lo, hi = make([]float64, len(values)), make([]float64, len(values))
	for i, v := range values {
		lo[i], hi[i] = delta, delta
		if !eligible[i] {
			lo[i], hi[i] = 0.01*v, 0.01*v
		}
		if eligible[i] && starred[i] {
			hi[i] = math.Max(delta, best-delta-v+delta/2)
		}
	}
	return lo, hi
}

// untie moves the medians of cells that share the best printed figure
// apart within its rounding, the starred ones up and the others down, where
// the reference stars only some of them: their unrounded medians differed.
func untie(values []float64, eligible, starred []bool) {
	best := math.Inf(-1)
	for i, v := range values {
		if eligible[i] && v > best {
			best = v
		}
	}
	mixed := false
	for i, v := range values {
		mixed = mixed || (eligible[i] && v == best && !starred[i])
	}
	if !mixed {
		return
	}
	for i, v := range values {
		if eligible[i] && v == best {
			if starred[i] {
				values[i] = v + 0.04
			} else {
				values[i] = v - 0.04
			}
		}
	}
}

// runSet builds the rows of one cell: three runs around the median.
type runSet struct {
	machine, session, proxy, group, mode, load string
	seconds                                    float64
}

func (s runSet) row(rep int) results.Row {
	kind := "3proxy"
	if s.group == "baseline" {
		kind = "direct"
	}
	return results.Row{
		Machine: s.machine, Session: s.session, Proxy: s.proxy, Kind: kind, Group: results.Group(s.group),
		Mode: results.Mode(s.mode), Load: s.load, Rep: rep,
		Started: time.Date(2026, 10, 13, 18, 0, 0, 0, time.UTC).Add(time.Duration(rep) * time.Minute),
		Seconds: s.seconds, Bound: "proxy", Status: "ok",
		BusyProxy: 0.97, ThreadProxy: 0.5, BusyClient: 0.4, BusyOrigin: 0.3,
	}
}

// setFigure sets what a run moved so that the plain table's figure of the
// load is v: Gbit/s for bulk loads, thousands of requests a second else.
func setFigure(r *results.Row, v float64) {
	if results.Bulk(r.Load) {
		r.Bytes = int64(math.Round(v * 1e9 / 8 * r.Seconds))
		return
	}
	r.Requests = int64(math.Round(v * 1e3 * r.Seconds))
	r.Bytes = r.Requests * 1100
}

func boundRuns(rows []results.Row, bound bool) {
	if bound {
		rows[0].Bound, rows[2].Bound = "client", "client"
		for i := range rows {
			rows[i].BusyClient = 0.95
		}
	}
}

func genPlain(t *testing.T, s refTable) []results.Row {
	names, groups := refHeader(s.lines[0])
	var out []results.Row
	for _, line := range s.lines[1:] {
		label, cells := refCells(line)
		load, _, _ := strings.Cut(label, ", ")
		values := make([]float64, len(cells))
		eligible, starred := make([]bool, len(cells)), make([]bool, len(cells))
		for i, c := range cells {
			if !c.missing {
				values[i] = c.values[0]
				eligible[i] = groups[i] != "baseline"
			}
			starred[i] = c.star
		}
		untie(values, eligible, starred)
		lo, hi := spreads(t, s.name+": "+label, values, eligible, starred)
		for i, c := range cells {
			if c.missing {
				continue
			}
			rs := runSet{s.meta["machine"], s.meta["session"], names[i], groups[i], s.meta["mode"], load, 10}
			runs := []results.Row{rs.row(1), rs.row(2), rs.row(3)}
			for j, v := range []float64{values[i] - lo[i], values[i], values[i] + hi[i]} {
				setFigure(&runs[j], v)
				runs[j].CPUProxy = 9.7
				runs[j].PeakMemBytes = 20e6
			}
			boundRuns(runs, c.bound)
			out = append(out, runs...)
		}
	}
	return out
}

// splitLabel splits an HTTPS or mix row label into mode and load:
// "tls-term-ka-1k" -> tls-term, ka-1k; "mix-http-3k" -> mix-http, mix-3k.
func splitLabel(t *testing.T, label string) (mode, load string) {
	for _, rm := range results.Modes {
		m := string(rm)
		if (label == m || strings.HasPrefix(label, m+"-")) && len(m) > len(mode) {
			mode = m
		}
	}
	if mode == "" {
		t.Fatalf("row %q: no mode", label)
	}
	rest := strings.TrimPrefix(strings.TrimPrefix(label, mode), "-")
	if strings.HasPrefix(mode, "mix-") {
		if rest == "" {
			return mode, "mix"
		}
		return mode, "mix-" + rest
	}
	return mode, rest
}

func genTriple(t *testing.T, s refTable) []results.Row {
	// three tables, each a title, a blank line, a header and rows
	var tables [][]string
	for i := 0; i < len(s.lines); i++ {
		if strings.HasPrefix(s.lines[i], "scenario\t") {
			j := i
			for j < len(s.lines) && s.lines[j] != "" {
				j++
			}
			tables = append(tables, s.lines[i:j])
			i = j
		}
	}
	if len(tables) != 3 {
		t.Fatalf("%s: %d tables, want throughput, CPU and memory", s.name, len(tables))
	}
	names, groups := refHeader(tables[0][0])
	var out []results.Row
	for r, line := range tables[0][1:] {
		label, thr := refCells(line)
		_, cpu := refCells(tables[1][r+1])
		_, mem := refCells(tables[2][r+1])
		mode, load := splitLabel(t, label)
		for i, c := range thr {
			if c.missing {
				continue
			}
			rs := runSet{s.meta["machine"], s.meta["session"], names[i], groups[i], mode, load, 10}
			runs := []results.Row{rs.row(1), rs.row(2), rs.row(3)}
			for j, f := range []float64{0.98, 1, 1.02} {
				r := &runs[j]
				r.Bytes = int64(math.Round(c.values[0] * f * 1e9 / 8 * r.Seconds))
				if len(c.values) > 1 {
					r.Requests = int64(math.Round(c.values[1] * f * 1e3 * r.Seconds))
				}
				if !cpu[i].missing {
					per := cpu[i].values[0] * []float64{1.01, 1, 0.99}[j]
					if results.Bulk(load) {
						r.CPUProxy = per * float64(r.Bytes) / 1e9
					} else {
						r.CPUProxy = per * float64(r.Requests) / 1e6
					}
				}
				if !mem[i].missing {
					r.PeakMemBytes = int64(math.Round(mem[i].values[0] * []float64{0.97, 1, 1.03}[j] * 1e6))
				}
			}
			boundRuns(runs, c.bound)
			out = append(out, runs...)
		}
	}
	return out
}

// machineMedians returns per-machine medians near the reference's figures whose
// average rounds to the reference's average (the reference averaged unrounded ones).
func machineMedians(t *testing.T, where string, c refCell) []float64 {
	n := len(c.values) - 1
	steps := []float64{0, 0.01, -0.01, 0.02, -0.02, 0.03, -0.03, 0.04, -0.04}
	want := text.Fixed(c.values[n], 1)
	for _, da := range steps {
		for _, db := range steps {
			m := []float64{c.values[0] + da, c.values[1] + db}
			if text.Fixed(m[0], 1) == text.Fixed(c.values[0], 1) && text.Fixed(m[1], 1) == text.Fixed(c.values[1], 1) &&
				text.Fixed((m[0]+m[1])/2, 1) == want {
				return m
			}
		}
	}
	t.Fatalf("%s: no medians near %v average to %s", where, c.values[:n], want)
	return nil
}

func genCombined(t *testing.T, s refTable) []results.Row {
	machines := strings.Split(s.meta["machines"], ", ")
	names, groups := refHeader(s.lines[0])
	var out []results.Row
	for _, line := range s.lines[1:] {
		label, cells := refCells(line)
		scen, _, _ := strings.Cut(label, ", ")
		mode, load := "relay", scen
		if rest, ok := strings.CutPrefix(scen, "http-"); ok {
			mode, load = "http", rest
		}
		meds := make([][]float64, len(cells))
		avgs := make([]float64, len(cells))
		eligible, starred := make([]bool, len(cells)), make([]bool, len(cells))
		for i, c := range cells {
			meds[i] = machineMedians(t, s.name+": "+label, c)
			avgs[i] = (meds[i][0] + meds[i][1]) / 2
			eligible[i], starred[i] = groups[i] != "baseline", c.star
		}
		lo, hi := spreads(t, s.name+": "+label, avgs, eligible, starred)
		for i := range cells {
			for m, machine := range machines {
				rs := runSet{machine, s.meta["session"], names[i], groups[i], mode, load, 10}
				runs := []results.Row{rs.row(1), rs.row(2), rs.row(3)}
				v := meds[i][m]
				for j, x := range []float64{v - lo[i], v, v + hi[i]} {
					setFigure(&runs[j], x)
					runs[j].CPUProxy, runs[j].PeakMemBytes = 9.7, 20e6
				}
				out = append(out, runs...)
			}
		}
	}
	return out
}

// refTokens splits the stunnel page's markdown-ish table into its cells.
func refTokens(text string) []string {
	var out []string
	for _, f := range strings.Split(strings.ReplaceAll(text, "\n", "|"), "|") {
		f = strings.TrimSpace(f)
		if f == "" || strings.Trim(f, ":-") == "" {
			continue
		}
		out = append(out, f)
	}
	return out
}

func genStunnel(t *testing.T, s refTable) []results.Row {
	tok := refTokens(s.body)
	var out []results.Row
	rs := runSet{machine: s.meta["machine"], session: s.meta["session"], proxy: "stunnel", group: "copy", seconds: 10}
	add := func(mode, load string, set func(r *results.Row, f float64)) {
		rs.mode, rs.load = mode, load
		for j, f := range []float64{0.99, 1, 1.01} {
			r := rs.row(j + 1)
			r.Kind = "stunnel"
			set(&r, f)
			r.CPUProxy, r.PeakMemBytes = 9.9, 8e6
			out = append(out, r)
		}
	}
	if s.layout == "tunnel" {
		for i := 3; i+2 < len(tok); i += 3 {
			for d, dir := range []string{"-up", "-down"} {
				v := parseRefCell(tok[i+1+d]).values[0]
				add("tls-tunnel", tok[i]+dir, func(r *results.Row, f float64) { r.Bytes = int64(math.Round(v * f * 1e9 / 8 * r.Seconds)) })
			}
		}
		return out
	}
	loads := map[string]string{"Full handshake": "full", "Resumed session": "resumed"}
	for i := 2; i+1 < len(tok); i += 2 {
		v := parseRefCell(tok[i+1]).values[0]
		add("tls-handshake", loads[tok[i]], func(r *results.Row, f float64) { r.Requests = int64(math.Round(v * f * r.Seconds)) })
	}
	return out
}

func refRows(t *testing.T, s refTable) []results.Row {
	switch s.layout {
	case "plain":
		return genPlain(t, s)
	case "triple":
		return genTriple(t, s)
	case "combined":
		return genCombined(t, s)
	case "tunnel", "handshake":
		return genStunnel(t, s)
	}
	t.Fatalf("%s: unknown layout %q", s.name, s.layout)
	return nil
}

func encodeCSV(t testing.TB, rows []results.Row) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(results.Header)
	for _, r := range rows {
		w.Write(r.Record())
	}
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestReferenceCSV checks that the committed CSVs are what the generator makes
// of the reference tables (-update rewrites them).
func TestReferenceCSV(t *testing.T) {
	for _, s := range loadReference(t) {
		golden.Check(t, filepath.Join("testdata", "csv", s.name+".csv"), encodeCSV(t, refRows(t, s)))
	}
}

// renderReference renders a reference's CSV in format.
func renderReference(t *testing.T, s refTable, format string) (string, []Table) {
	t.Helper()
	rows, err := results.ReadFiles([]string{filepath.Join("testdata", "csv", s.name+".csv")})
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{Format: format}
	if s.layout == "combined" {
		opt.Layout = LayoutCombined
	}
	tables, err := Tables(rows, opt)
	if err != nil {
		t.Fatal(err)
	}
	wr, err := WriterOf(format)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := wr.Write(&b, Document{Tables: tables}); err != nil {
		t.Fatal(err)
	}
	return b.String(), tables
}

// TestReferenceTables renders each reference's CSV and finds the reference's table in
// the text: every figure, ‡ and * where the reference has them.
func TestReferenceTables(t *testing.T) {
	for _, s := range loadReference(t) {
		t.Run(s.name, func(t *testing.T) {
			switch s.layout {
			case "tunnel", "handshake":
				_, tables := renderReference(t, s, FormatMarkdown)
				if len(tables) != 1 {
					t.Fatalf("got %d tables, want 1", len(tables))
				}
				var b bytes.Buffer
				if err := writeMarkdown(&b, tables[0], mediansAlone); err != nil {
					t.Fatal(err)
				}
				got, want := refTokens(b.String()), refTokens(s.body)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("table cells\n got %q\nwant %q", got, want)
				}
			default:
				got, _ := renderReference(t, s, FormatTSV)
				if !strings.Contains(got, s.body) {
					t.Errorf("the reference's table is not in the output\n--- reference\n%s--- output\n%s", s.body, got)
					diffLines(t, s.lines, got)
				}
			}
		})
	}
}

// diffLines reports the reference's lines the output lacks.
func diffLines(t *testing.T, want []string, got string) {
	have := map[string]bool{}
	for _, l := range strings.Split(got, "\n") {
		have[l] = true
	}
	var missing []string
	for _, l := range want {
		if !have[l] {
			missing = append(missing, l)
		}
	}
	sort.Strings(missing)
	for _, l := range missing {
		t.Logf("missing: %q", l)
	}
}

// TestGolden compares the whole output, every format, with the golden
// files under testdata/golden (-update rewrites them).
func TestGolden(t *testing.T) {
	for _, s := range loadReference(t) {
		for _, format := range []string{FormatMarkdown, FormatTSV, FormatJSON} {
			got, _ := renderReference(t, s, format)
			golden.Check(t, filepath.Join("testdata", "golden", s.name+"."+format), []byte(got))
		}
	}
}

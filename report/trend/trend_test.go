package trend

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"bench/internal/chromium"
	"bench/internal/nights"
	"bench/report"
	"bench/report/changepoint"
	"bench/results"
)

// referenceSession reads the reference session (data/*.csv) and its
// metadata.
func referenceSession(t testing.TB) ([]results.Row, *results.Meta) {
	t.Helper()
	rows, meta, err := nights.Reference(filepath.Join("..", "..", "data"))
	if err != nil {
		t.Fatal(err)
	}
	return rows, meta
}

// generatedHistory writes n nights of the reference session's cells on
// machines (nights.Shifted: three steps, a slide) to a temporary
// directory and returns it.
func generatedHistory(t testing.TB, n int, machines ...string) string {
	t.Helper()
	rows, meta := referenceSession(t)
	dir := t.TempDir()
	if _, err := nights.Write(dir, nights.Shifted(rows, meta, n, 42, machines...)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestTrendFindsShifts: in 120 generated nights of the reference
// session's cells (every cell, by its throughput and p99), the 6% step
// at night 80 of three cells is found at night 80 ± 1 in each, for the
// worse; the slide is found within its nights; no other series of any
// cell has a change point.
func TestTrendFindsShifts(t *testing.T) {
	dir := generatedHistory(t, 120)
	sessions, _, err := ReadHistory(dir)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Of(sessions, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := referenceSession(t)
	want := map[[2]any]bool{}
	for _, r := range ref {
		want[[2]any{r.Cell(), report.MetricThroughput}] = true
		if r.HasLatency {
			want[[2]any{r.Cell(), report.MetricP99}] = true
		}
	}
	if len(tr.Sessions) != 120 || len(tr.Series) != len(want) {
		t.Fatalf("Trend: %d sessions, %d series; want 120 and %d, every cell's throughput and p99", len(tr.Sessions), len(tr.Series), len(want))
	}
	found := map[results.Cell]bool{}
	for i := range tr.Series {
		s := &tr.Series[i]
		c := results.Cell{Proxy: s.Proxy, Mode: s.Mode, Load: s.Load}
		stepped := s.Metric == report.MetricThroughput && slices.Contains(nights.SteppedCells, c)
		slid := s.Metric == report.MetricThroughput && c == nights.SlidCell
		for _, p := range s.Points {
			night := p.At // a series of every night: its index is the night
			switch {
			case stepped && night >= nights.StepNight-1 && night <= nights.StepNight+1 && p.Worse:
				found[c] = true
			case slid && night >= nights.SlideNight && night <= nights.SlideNight+nights.SlideNights && p.Worse:
				found[c] = true
			default:
				t.Errorf("%s %s %s %s: a change point at night %d, %+.1f%% (%+.1f..%+.1f%%); want none", s.Machine, s.Scenario, s.Proxy, s.Metric, night, p.Step, p.Lo, p.Hi)
			}
		}
	}
	for _, c := range append(slices.Clone(nights.SteppedCells), nights.SlidCell) {
		if !found[c] {
			t.Errorf("%s %s: no change point found for the worse where it was put", c.Scenario(), c.Proxy)
		}
	}
}

// TestTrendPage: the page of 120 generated nights opens in Chromium
// from its file with nothing fetched and no console error, has a chart
// of each series with a change point, and draws no text of a chart
// outside it nor over another, at a desktop's width and a phone's
// (chromium.CheckPage and CheckLayout, as the session's page is
// checked); its tables fit as the session's page's do
// (chromium.CheckTables).
func TestTrendPage(t *testing.T) {
	sessions, _, err := ReadHistory(generatedHistory(t, 120))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Of(sessions, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if charts := trendCharts(tr); charts != 4 {
		t.Fatalf("Trend: %d series with a change point; want the 4 shifted", charts)
	}
	checkTrendPage(t, tr, "trend-page")
}

// trendCharts is how many series of tr have a change point: the page's
// charts.
func trendCharts(tr *Trends) int {
	n := 0
	for _, s := range tr.Series {
		if len(s.Points) > 0 {
			n++
		}
	}
	return n
}

// checkTrendPage checks the page of tr in Chromium (CheckPage, with a
// chart of each series with a change point, and CheckLayout at a
// desktop's width and a phone's) and returns it.
func checkTrendPage(t *testing.T, tr *Trends, name string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, tr, report.FormatHTML); err != nil {
		t.Fatal(err)
	}
	chromium.CheckPage(t, b.Bytes(), name, 0, 0, trendCharts(tr))
	for _, width := range []int{1400, 420} {
		chromium.CheckLayout(t, b.Bytes(), fmt.Sprintf("%s-%d", name, width), width, 0)
		chromium.CheckTables(t, b.Bytes(), fmt.Sprintf("%s-tables-%d", name, width), width)
	}
	return b.Bytes()
}

// BenchmarkTrendPower measures, on generated histories whose every cell's
// runs are drawn from the reference session's own spread, the two
// figures of the nightly's gate (docs/trend.md):
//
//   - found-pct: of the cells whose runs spread 4 to 10%, the share in
//     which a -6% step 15 sessions into a history is found, for the
//     worse within a session of its place, 25 sessions after it (3
//     histories);
//   - alarms-per-1000: on a history with nothing planted but single bad
//     nights (a cell 30% slower for a night, one every 4 nights), the
//     fires of --fail-new 5% per 1000 series-nights, the gate run each
//     night on the nights so far (from the 10th).
func BenchmarkTrendPower(b *testing.B) {
	rows, meta := referenceSession(b)
	cells, spread := nights.Cells(rows)
	start := time.Date(2026, 1, 1, 1, 17, 0, 0, time.UTC)
	for b.Loop() {
		found, tried := 0, 0
		for draws := range uint64(3) {
			h := nights.History{Reference: rows, Meta: meta, Nights: 40, Start: start, Draws: 100 + draws}
			for _, c := range cells {
				h.Shifts = append(h.Shifts, nights.Shift{Cell: c, From: 15, Step: -0.06})
			}
			tr := trendOf(b, h)
			for i := range tr.Series {
				s := &tr.Series[i]
				c := results.Cell{Proxy: s.Proxy, Mode: s.Mode, Load: s.Load}
				if s.Metric != report.MetricThroughput || spread[c] < 4 || spread[c] > 10 {
					continue
				}
				tried++
				if slices.ContainsFunc(s.Points, func(p Point) bool { return p.Worse && p.At >= 14 && p.At <= 16 }) {
					found++
				}
			}
		}
		h := nights.History{Reference: rows, Meta: meta, Nights: 60, Start: start, Draws: 7}
		for n := 0; n < h.Nights; n += 4 {
			h.Shifts = append(h.Shifts, nights.Shift{Cell: cells[(n*7)%len(cells)], From: n, Step: -0.3, For: 1})
		}
		tr := trendOf(b, h)
		alarms, seriesNights := 0, 0
		for n := 10; n <= h.Nights; n++ {
			night, err := Of(tr.Sessions[:n], Options{})
			if err != nil {
				b.Fatal(err)
			}
			alarms += len(night.NewRegressions(5))
			seriesNights += len(night.Series)
		}
		b.ReportMetric(100*float64(found)/float64(tried), "found-pct")
		b.ReportMetric(1000*float64(alarms)/float64(seriesNights), "alarms-per-1000")
		b.Logf("a -6%% step found in %d of %d cells whose runs spread 4 to 10%% (%.0f%%); --fail-new 5%% fired %d times in %d series-nights",
			found, tried, 100*float64(found)/float64(tried), alarms, seriesNights)
	}
}

// trendOf writes the history h and returns its trends.
func trendOf(b testing.TB, h nights.History) *Trends {
	b.Helper()
	dir := b.TempDir()
	if _, err := nights.Write(dir, h); err != nil {
		b.Fatal(err)
	}
	sessions, _, err := ReadHistory(dir)
	if err != nil {
		b.Fatal(err)
	}
	tr, err := Of(sessions, Options{})
	if err != nil {
		b.Fatal(err)
	}
	return tr
}

// eventHistory is 40 generated nights of the reference session's cells
// from June 1st 2026, every nginx cell 10% slower from night
// eventNight on and every cell 15% slower on night dipNight alone.
func eventHistory(t *testing.T) *Trends {
	t.Helper()
	rows, meta := referenceSession(t)
	cells, _ := nights.Cells(rows)
	h := nights.History{Reference: rows, Meta: meta, Nights: 40, Start: time.Date(2026, 6, 1, 1, 17, 0, 0, time.UTC), Draws: 42}
	for _, c := range cells {
		if c.Proxy == "nginx" {
			h.Shifts = append(h.Shifts, nights.Shift{Cell: c, From: eventNight, Step: -0.10})
		}
		h.Shifts = append(h.Shifts, nights.Shift{Cell: c, From: dipNight, Step: -0.15, For: 1})
	}
	return trendOf(t, h)
}

// The nights of eventHistory's step and dip.
const (
	eventNight = 18 // 2026-06-19
	dipNight   = 30 // 2026-07-01
)

// TestTrendEvents: the planted step of every nginx cell is one event of
// many series named by the night its new level begins, and no row under
// it names another session as if the step began there; the night every
// cell dipped is no change but one night of outliers, every series of
// it listed under it.
func TestTrendEvents(t *testing.T) {
	tr := eventHistory(t)
	events := tr.Events()
	var step *Event
	for i, ev := range events {
		if ev.Proxy != "nginx" {
			t.Errorf("Events: an event of %s at %s; want nginx's alone", ev.Proxy, tr.Sessions[ev.After].ID)
		}
		if len(ev.Changes) > 1 {
			if step != nil {
				t.Errorf("Events: two events of many series, at %s and %s; want one", tr.Sessions[step.After].ID, tr.Sessions[ev.After].ID)
			}
			step = &events[i]
		}
	}
	if step == nil {
		t.Fatalf("Events = %d events, none of many series; want the step of nginx's cells as one", len(events))
	}
	if got, want := tr.Sessions[step.After].Date(), "2026-06-19"; got != want {
		t.Errorf("Events: nginx's step from %s; want %s, the night its new level begins", got, want)
	}
	if len(step.Changes) < 20 || step.Worse() != len(step.Changes) || step.Step() > -8 || step.Step() < -12 {
		t.Errorf("Events: nginx's step is %d series, %d worse, %+.1f%%; want at least 20, all worse, about -10%%", len(step.Changes), step.Worse(), step.Step())
	}
	for _, c := range tr.Changes() {
		if c.At == dipNight || c.At == dipNight+1 {
			t.Errorf("%s: a change point at the dip, %+.1f%%; want none", c.Describe(tr), c.Step)
		}
	}
	var md bytes.Buffer
	if err := Write(&md, tr, report.FormatMarkdown); err != nil {
		t.Fatal(err)
	}
	text := md.String()
	head := fmt.Sprintf("### nginx, %d of its %d series, from 2026-06-19: ", len(step.Changes), step.Of)
	if !strings.Contains(text, head) {
		t.Errorf("WriteTrends: no heading %q:\n%s", head, text)
	}
	if strings.Contains(text, "(from 2026-06-18-nightly)") {
		t.Errorf("WriteTrends names the session before the step as where it is from:\n%s", text)
	}
	nightsOut := tr.OutlierNights()
	if len(nightsOut) == 0 || tr.Sessions[nightsOut[0].Session].Date() != "2026-07-01" {
		t.Fatalf("OutlierNights = %d nights; want the dip's, 2026-07-01, the newest", len(nightsOut))
	}
	dip := nightsOut[0]
	if len(dip.Series) < 40 || dip.Off() > -12 || dip.Off() < -18 {
		t.Errorf("OutlierNights: the dip is %d series, %+.1f%%; want at least 40, about -15%%", len(dip.Series), dip.Off())
	}
	section := text[strings.Index(text, "## "+outliersTitle):]
	if !strings.Contains(section, tr.outlierNightTitle(dip)+":") {
		t.Errorf("WriteTrends: no line %q in its outliers:\n%s", tr.outlierNightTitle(dip), section)
	}
	for _, l := range outlierLines(dip) {
		if !strings.Contains(section, "- "+l+"\n") {
			t.Errorf("WriteTrends: the dip's outlier %q not listed in its outliers", l)
		}
	}
}

// TestTrendLevels: a series' levels are its sessions from one change
// point to the next, each at the From and To of the steps either side.
func TestTrendLevels(t *testing.T) {
	tr := eventHistory(t)
	for _, ev := range tr.Events() {
		for _, c := range ev.Changes {
			lv := c.Series.levels()
			if len(lv) != len(c.Series.Points)+1 || lv[0].start != 0 || lv[len(lv)-1].end != len(c.Series.Medians) {
				t.Fatalf("%s: levels %v; want one more than its %d points, over all its sessions", c.Series.name(), lv, len(c.Series.Points))
			}
			for i, p := range c.Series.Points {
				if lv[i].end != p.At || lv[i+1].start != p.At || lv[i].value != p.From || lv[i+1].value != p.To {
					t.Errorf("%s: levels %v about the point at %d (%v → %v); want it between them, at its levels", c.Series.name(), lv[i:i+2], p.At, p.From, p.To)
				}
			}
		}
	}
}

// TestTrendEventsPage: the page of the history of a column's step and a
// night's dip, its event's tables, its outliers and a chart of each
// series with a change point, opens in Chromium and draws no text of a
// chart outside it nor over another, at a desktop's width and a
// phone's.
func TestTrendEventsPage(t *testing.T) {
	page := checkTrendPage(t, eventHistory(t), "trend-events-page")
	for _, want := range []string{"<h3>nginx, ", "<h2>" + outliersTitle + "</h2>"} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("the page has no %q", want)
		}
	}
}

// TestEventsNamedByMost: the changes of one column are grouped around
// the night most of them begin on, however late a lone one was found.
// Twenty series changed from night 19, two found it a night late, and one
// three nights late (a noisy series whose split landed late): one event
// of 22 series from night 19, and the late one an event of its own. The
// grouping once began from the newest change and took the night most
// began on within its reach, so the lone change at 22 pulled the two at
// 20 into an event named night 20, which then held the 20 of night 19.
func TestEventsNamedByMost(t *testing.T) {
	tr := &Trends{}
	for i := 0; i < 30; i++ {
		tr.Sessions = append(tr.Sessions, Session{Machine: "m", ID: fmt.Sprintf("s%02d", i),
			Started: time.Date(2026, 6, 1+i, 1, 0, 0, 0, time.UTC)})
	}
	add := func(n, after int) {
		for range n {
			tr.Series = append(tr.Series, Series{Machine: "m", Proxy: "nginx", Metric: report.MetricThroughput,
				Load:   fmt.Sprintf("l%d", len(tr.Series)),
				Points: []Point{{Point: changepoint.Point{At: after, Step: -10}, Before: after - 1, After: after, Worse: true}}})
		}
	}
	add(20, 19)
	add(2, 20)
	add(1, 22)
	events := tr.Events()
	var got []string
	for _, ev := range events {
		got = append(got, fmt.Sprintf("%d from night %d", len(ev.Changes), ev.After))
	}
	if want := []string{"1 from night 22", "22 from night 19"}; !slices.Equal(got, want) {
		t.Errorf("Events = %q; want %q", got, want)
	}
}

// TestTrendSweeps: a sweep's series in a history is its searches' rates,
// a session each, and it has no p99 series. The sessions are the
// generated sweep session of report's tests, three nights of it.
func TestTrendSweeps(t *testing.T) {
	rows, err := results.ReadFiles([]string{filepath.Join("..", "testdata", "sweep", "xeon-2-cpus-2026-12-01-sweep.csv")})
	if err != nil {
		t.Fatal(err)
	}
	var sessions []Session
	for i := range 3 {
		night := slices.Clone(rows)
		for j := range night {
			night[j].Session = fmt.Sprintf("2026-12-0%d-sweep", i+1)
		}
		sessions = append(sessions, Session{Machine: "Xeon, 2 CPUs", ID: night[0].Session, Started: rows[0].Started.AddDate(0, 0, i), rows: night})
	}
	tr, err := Of(sessions, Options{Scenario: Globs{"mix-http-sweep"}, Proxy: []string{"nginx"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Series) != 1 {
		t.Fatalf("Of has %d series; want nginx's sustainable rate alone", len(tr.Series))
	}
	s := tr.Series[0]
	if s.Metric != report.MetricThroughput || len(s.Runs) != 3 || len(s.Runs[0]) != 3 || s.Runs[0][1] != 7.75 || s.Unit != string(results.KReqs) {
		t.Errorf("nginx's series = %s in %s, runs %v; want its rates, 7.75k/s in rep 2, in three sessions of three", s.Metric, s.Unit, s.Runs)
	}
}

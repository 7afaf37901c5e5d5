package harness

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"bench/harness/host"
	"bench/proxies"
	"bench/results"
	"bench/scenarios"
)

func TestRunsFor(t *testing.T) {
	scs := []scenarios.Scenario{
		{Name: "http-ka-1k", Mode: results.HTTP},
		{Name: "socks-ka-1k", Mode: results.Socks},
	}
	cols := []proxies.Column{{Name: "a"}, {Name: "b"}, {Name: "c"}, {Name: "d"}}
	// Only a and c do socks; d does nothing but socks.
	sup := func(c proxies.Column, sc scenarios.Scenario) bool {
		if sc.Mode == results.Socks {
			return c.Name == "a" || c.Name == "c"
		}
		return c.Name != "d"
	}
	// socks has a method of its own here: 4 repetitions.
	repsOf := func(m results.Mode) int {
		if m == results.Socks {
			return 4
		}
		return 3
	}
	runs, skipped := runsFor(scs, cols, repsOf, sup)
	var got []string
	for i, r := range runs {
		if r.Index != i+1 {
			t.Errorf("run %d has Index %d", i+1, r.Index)
		}
		got = append(got, fmt.Sprintf("%d:%s:%s", r.Rep, r.Scenario.Name, r.Column.Name))
	}
	want := []string{
		// rep 1: the columns that can, in order
		"1:http-ka-1k:a", "1:http-ka-1k:b", "1:http-ka-1k:c",
		"1:socks-ka-1k:a", "1:socks-ka-1k:c",
		// rep 2: rotated by one among those
		"2:http-ka-1k:b", "2:http-ka-1k:c", "2:http-ka-1k:a",
		"2:socks-ka-1k:c", "2:socks-ka-1k:a",
		// rep 3: by two, so each runs first in turn
		"3:http-ka-1k:c", "3:http-ka-1k:a", "3:http-ka-1k:b",
		"3:socks-ka-1k:a", "3:socks-ka-1k:c",
		// rep 4: socks alone
		"4:socks-ka-1k:c", "4:socks-ka-1k:a",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("PlanRuns =\n%v\nwant\n%v", got, want)
	}
	if skipped != 3 {
		t.Errorf("skipped = %d; want 3", skipped)
	}
}

func TestFormatDuration(t *testing.T) {
	for _, c := range []struct {
		in   time.Duration
		want string
	}{
		{45 * time.Second, "45s"},
		{12*time.Minute + 5*time.Second, "12m05s"},
		{3*time.Hour + 4*time.Minute + 59*time.Second, "3h04m"},
	} {
		if got := formatDuration(c.in); got != c.want {
			t.Errorf("FormatDuration(%v) = %q; want %q", c.in, got, c.want)
		}
	}
}

func TestSettled(t *testing.T) {
	for _, tt := range []struct {
		name    string
		figures []float64
		runs    int
		want    bool
	}{
		{"tight", []float64{95, 100, 105}, 3, true},
		// No proxy, relay-ka-50k-2000, as a session here gave it: one
		// slow run moves the median by a fifth.
		{"an outlier of three", []float64{2.7, 4.7, 4.6}, 3, false},
		// A fourth run close to the others settles it: leaving any one
		// out moves the median by 1%.
		{"the outlier outvoted", []float64{2.7, 4.7, 4.6, 4.5}, 4, true},
		{"two runs", []float64{100, 101}, 2, false},
		{"a failed run of three", []float64{100, 101}, 3, false},
		{"every run failed", nil, 3, true},
		{"too few to tell, failed", nil, 2, false},
	} {
		if got := settled(tt.figures, tt.runs, 0.05); got != tt.want {
			t.Errorf("%s: settled(%v, %d runs, 5%%) = %v; want %v", tt.name, tt.figures, tt.runs, got, tt.want)
		}
	}
}

// Extend adds a repetition at a time for the cells whose medians are not
// settled, in the rotation runsFor gives that repetition, up to the cap.
func TestExtend(t *testing.T) {
	sc := scenarios.Scenario{Name: "http-ka-1k", Mode: results.HTTP, Load: scenarios.Load{Name: "ka-1k"}}
	cols := []proxies.Column{
		{Name: "a", Kind: "nginx"}, {Name: "b", Kind: "nginx"}, {Name: "c", Kind: "nginx"},
	}
	cfg := SessionConfig{
		Settings:  results.Settings{Reps: AutoMinReps, RepsAuto: true, RepsMax: 5, Precision: 0.05, Machine: "m", Session: "s"},
		Scenarios: []scenarios.Scenario{sc}, Columns: cols,
	}
	sched, err := NewSchedule(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(sched.Runs) != 9 {
		t.Fatalf("planned %d runs; want 3 columns x 3 repetitions", len(sched.Runs))
	}
	// a is tight; b has an outlier; c is tight but its third run failed.
	kreqs := map[string][]float64{"a": {100, 101, 99, 100, 100}, "b": {70, 100, 102, 101, 103}, "c": {100, 101, 0, 100, 100}}
	row := func(proxy string, rep int) results.Row {
		r := results.Row{Machine: "m", Session: "s", Proxy: proxy, Mode: results.HTTP, Load: "ka-1k", Rep: rep,
			Seconds: 1, Requests: int64(kreqs[proxy][rep-1] * 1000), Status: results.OK}
		if r.Requests == 0 {
			r.Status = results.Failed
		}
		return r
	}
	var rows []results.Row
	for _, r := range sched.Runs {
		rows = append(rows, row(r.Column.Name, r.Rep))
	}
	more := sched.Extend(rows)
	var got []string
	for _, r := range more {
		got = append(got, fmt.Sprintf("%d:%d:%s", r.Index, r.Rep, r.Column.Name))
		rows = append(rows, row(r.Column.Name, r.Rep))
	}
	// Repetition 4 rotates the columns by three, as runsFor would: a, b,
	// c; a is settled.
	if want := "10:4:b 11:4:c"; strings.Join(got, " ") != want {
		t.Errorf("repetition 4 = %v; want %s", got, want)
	}
	// b's fourth run settles it, c's makes three ok ones: done.
	if more := sched.Extend(rows); len(more) != 0 {
		t.Errorf("repetition 5 = %v; want none", more)
	}
	// A resumed session decides the same from the same file, whatever
	// later repetitions it holds.
	again, _ := NewSchedule(cfg)
	if more := again.Extend(rows); len(more) != 2 || more[0].Column.Name != "b" {
		t.Errorf("resumed repetition 4 = %v; want b and c", more)
	}
	// The cap ends every cell.
	cfg.RepsMax = 3
	capped, _ := NewSchedule(cfg)
	if more := capped.Extend(rows[:9]); len(more) != 0 {
		t.Errorf("with a cap of 3, repetition 4 = %v; want none", more)
	}
}

// TestNewScheduleResumes: a session killed in its first run left its
// file with the header alone, and resuming it finds no run done; a file
// with a bad line is refused, naming its place.
func TestNewScheduleResumes(t *testing.T) {
	out := t.TempDir()
	cfg := SessionConfig{Settings: results.Settings{Machine: "m", Session: "s", Reps: 1}, OutDir: out, Resume: true}
	csvPath, _ := SessionPaths(out, "m", "s")
	w, err := results.Create(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	s, err := NewSchedule(cfg)
	if err != nil || len(s.Done) != 0 {
		t.Fatalf("NewSchedule of a session with its header alone = %v, %d runs done; want none done", err, len(s.Done))
	}
	if err := os.WriteFile(csvPath, []byte(strings.Join(results.Header, ",")+"\nm,s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewSchedule(cfg); err == nil || !strings.Contains(err.Error(), csvPath+":2: ") {
		t.Errorf("NewSchedule of a session with a bad line = %v; want an error at %s:2", err, csvPath)
	}
}

// The plan says where a tls-tunnel's ends run: on this machine, the
// layout's CPUs; across hosts, each host's, which the plan does not
// know yet, and so names none of this machine's.
func TestPlanTunnelNote(t *testing.T) {
	scs, err := scenarios.Select("tls-tunnel-TLS_AES_128_GCM_SHA256-up")
	if err != nil {
		t.Fatal(err)
	}
	layout, err := host.ParseLayout("client=0-3,proxy=4,origin=5-7", []int{0, 1, 2, 3, 4, 5, 6, 7})
	if err != nil {
		t.Fatal(err)
	}
	hs, err := host.ParseHosts("hosts", strings.NewReader("client bench@c data=192.0.2.1 cpus=0\nproxy bench@p data=192.0.2.2 cpus=1\norigin bench@o data=192.0.2.3\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		hosts host.Hosts
		want  string
	}{
		{"here", host.Hosts{}, "note: tls-tunnel: the tunnel's client end on CPU 3, iperf3's client on 0-2, the server end on the proxy's 4"},
		{"hosts", hs, "note: " + tunnelHostsNote + "\n"},
	} {
		cfg := SessionConfig{
			Settings:  results.Settings{Reps: 1, Machine: "m", Session: "s", Window: results.Span(time.Second)},
			Scenarios: scs, Columns: []proxies.Column{{Name: "stunnel", Kind: "stunnel"}},
			Host: host.Config{Layout: layout, Hosts: tc.hosts},
		}
		sched, err := NewSchedule(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var plan strings.Builder
		sched.Print(&plan)
		if !strings.Contains(plan.String(), tc.want) || tc.name == "hosts" && strings.Contains(plan.String(), "CPU 3") {
			t.Errorf("%s: the plan:\n%s\nwant %q", tc.name, plan.String(), tc.want)
		}
	}
}

package harness

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"bench/proxies"
	"bench/report/results"
	"bench/scenarios"
)

func TestRunsFor(t *testing.T) {
	scs := []scenarios.Scenario{
		{Name: "http-ka-1k", Mode: results.HTTP},
		{Name: "socks-ka-1k", Mode: results.Socks},
	}
	cols := []proxies.Column{{Name: "a"}, {Name: "b"}, {Name: "c"}, {Name: "d"}}
	// Only a and c do socks; d does nothing but socks.
	sup := func(c proxies.Column, m results.Mode) bool {
		if m == results.Socks {
			return c.Name == "a" || c.Name == "c"
		}
		return c.Name != "d"
	}
	runs, skipped := runsFor(scs, cols, 3, sup)
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
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("PlanRuns =\n%v\nwant\n%v", got, want)
	}
	if skipped != 3 {
		t.Errorf("skipped = %d; want 3", skipped)
	}
}

func TestSlug(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"ARM (M4)", "arm-m4"},
		{"Intel (Skylake)", "intel-skylake"},
		{"Intel Xeon Gold 6148", "intel-xeon-gold-6148"},
		{"--x--", "x"},
	} {
		if got := Slug(c.in); got != c.want {
			t.Errorf("Slug(%q) = %q; want %q", c.in, got, c.want)
		}
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

package host

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseLayout(t *testing.T) {
	eight := []int{0, 1, 2, 3, 4, 5, 6, 7}
	tests := []struct {
		spec    string
		online  []int
		want    Layout
		wantErr string // substring of the error, "" for none
	}{
		// the reference results' layout
		{"client=0-3,proxy=4,origin=5-7", eight, Layout{Client: []int{0, 1, 2, 3}, Proxy: []int{4}, Origin: []int{5, 6, 7}}, ""},
		// lists with commas continue the role's list
		{"client=0,2,proxy=1,origin=3", eight, Layout{Client: []int{0, 2}, Proxy: []int{1}, Origin: []int{3}}, ""},
		// client and origin may share, with a warning
		{"client=0,proxy=1,origin=0", []int{0, 1}, Layout{Client: []int{0}, Proxy: []int{1}, Origin: []int{0},
			Warning: "client and origin share CPU 0; they may set the pace (the CSV's bound column; ‡ in the tables)"}, ""},
		// a CPU that is not online
		{"client=0,proxy=9,origin=0", []int{0, 1}, Layout{}, "CPU 9 is not online"},
		// the proxy overlapping another role
		{"client=0-1,proxy=1,origin=0", []int{0, 1}, Layout{}, "CPU 1 is both the proxy's and the client's"},
		// a missing role
		{"client=0,proxy=1", []int{0, 1}, Layout{}, "no CPUs for origin"},
		// an unknown role
		{"client=0,proxy=1,server=0", []int{0, 1}, Layout{}, `unknown role "server"`},
		// a role twice
		{"client=0,client=1,proxy=1,origin=0", []int{0, 1}, Layout{}, "given twice"},
		// a bad range
		{"client=3-1,proxy=4,origin=5", eight, Layout{}, "not a CPU range"},
		// no role at all
		{"0-3", eight, Layout{}, "is not role=cpus"},
	}
	for _, tt := range tests {
		got, err := ParseLayout(tt.spec, tt.online)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseLayout(%q) error = %v; want one containing %q", tt.spec, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseLayout(%q) = %+v, %v; want %+v", tt.spec, got, err, tt.want)
		}
		if err == nil && got.String() != tt.spec {
			t.Errorf("ParseLayout(%q).String() = %q", tt.spec, got.String())
		}
	}
}

func TestDefaultLayout(t *testing.T) {
	tests := []struct {
		online  []int
		want    string // the spec form
		warning bool
	}{
		{[]int{0, 1, 2, 3, 4, 5, 6, 7}, "client=0-3,proxy=4,origin=5-7", false}, // the reference results'
		{[]int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, "client=0-3,proxy=4,origin=5-7", false},
		{[]int{0, 1}, "client=0,proxy=1,origin=0", true}, // this kind of machine
		{[]int{0, 1, 2}, "client=0,proxy=1,origin=2", true},
		{[]int{0, 1, 2, 3}, "client=0,2,proxy=1,origin=3", true},
		{[]int{0, 1, 2, 3, 4, 5}, "client=0,2-3,proxy=1,origin=4-5", true},
	}
	for _, tt := range tests {
		got, err := DefaultLayout(tt.online)
		if err != nil || got.String() != tt.want || (got.Warning != "") != tt.warning {
			t.Errorf("DefaultLayout(%v) = %q (warning %q), %v; want %q (warning: %v)", tt.online, got, got.Warning, err, tt.want, tt.warning)
		}
		if _, err := ParseLayout(got.String(), tt.online); err != nil {
			t.Errorf("DefaultLayout(%v) does not parse back: %v", tt.online, err)
		}
	}
	if _, err := DefaultLayout([]int{0}); err == nil {
		t.Errorf("DefaultLayout([0]) = nil error; want one: the proxy needs a CPU of its own")
	}
}

func TestCPUMask(t *testing.T) {
	tests := []struct {
		cpus []int
		want string
	}{
		{[]int{0}, "00000001"},
		{[]int{4}, "00000010"},
		{[]int{0, 1, 2, 3}, "0000000f"},
		{[]int{5, 6, 7}, "000000e0"},
		{[]int{33}, "00000002,00000000"},
	}
	for _, tt := range tests {
		if got := CPUMask(tt.cpus); got != tt.want {
			t.Errorf("CPUMask(%v) = %q; want %q", tt.cpus, got, tt.want)
		}
	}
}

func TestParseThrottle(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		want     throttle
	}{
		{"v1", "nr_periods 120\nnr_throttled 100\nthrottled_time 5000000000\nnr_bursts 0\nburst_time 0\n", throttle{120, 100, 5e9}},
		{"v2", "usage_usec 9\nuser_usec 5\nsystem_usec 4\nnr_periods 120\nnr_throttled 100\nthrottled_usec 5000000\nnr_bursts 0\nburst_usec 0\n", throttle{120, 100, 5e9}},
	} {
		got, err := parseThrottle([]byte(tt.in))
		if err != nil || got != tt.want {
			t.Errorf("%s: parseThrottle = %+v, %v; want %+v", tt.name, got, err, tt.want)
		}
	}
	if _, err := parseThrottle([]byte("usage_usec 9\n")); err == nil {
		t.Errorf("parseThrottle without the throttling = nil error; want one")
	}
}

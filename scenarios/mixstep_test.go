package scenarios

import (
	"math"
	"testing"
	"time"
)

func TestFormatMixStep(t *testing.T) {
	start := time.Unix(1700000000, 123456789)
	cases := []struct {
		w     MixWindow
		start time.Time
		line  string
	}{
		// as the session asks for a step: now
		{MixWindow{Rate: 4000, Warmup: 2 * time.Second, Duration: 5 * time.Second}, time.Time{}, "step 4000 2s 5s"},
		// as a split mix's parent asks its workers: a start and an offset
		{MixWindow{Rate: 1333.5, Offset: 250 * time.Microsecond, Warmup: 0, Duration: time.Second}, start, "step 1333.5 0s 1s 1700000000123456789 250µs"},
	}
	for _, c := range cases {
		line := FormatMixStep(c.w, c.start)
		if line != c.line {
			t.Errorf("FormatMixStep(%+v, %v) = %q; want %q", c.w, c.start, line, c.line)
		}
		w, st, ok, err := ParseMixStep(line + "\n")
		if err != nil || !ok || w != c.w || !st.Equal(c.start) {
			t.Errorf("ParseMixStep(%q) = %+v, %v, %v, %v; want %+v, %v", line, w, st, ok, err, c.w, c.start)
		}
	}
	for _, bad := range []string{
		"step",                  // no figures
		"step fast 2s 5s",       // a rate that is not a number
		"step 4000 2 5s",        // a warm-up without its unit
		"step 4000 2s 5s 12",    // a start without its offset
		"step 0 2s 5s",          // no rate
		"step 4000 2s 0s",       // no window
		"step 4000 2s 5s x 1ms", // a start that is not a number
	} {
		if _, _, ok, err := ParseMixStep(bad); !ok || err == nil {
			t.Errorf("ParseMixStep(%q) = ok %v, %v; want an error", bad, ok, err)
		}
	}
	if _, _, ok, err := ParseMixStep("go 123"); ok || err != nil {
		t.Errorf("ParseMixStep(%q) = ok %v, %v; want no step and no error", "go 123", ok, err)
	}
}

// TestMixWindowCheck: a step's rate is refused at 0, below it, infinite, not
// a number, or beyond what a schedule of time.Duration holds; its window
// must be positive.
func TestMixWindowCheck(t *testing.T) {
	for _, c := range []struct {
		w  MixWindow
		ok bool
	}{
		{MixWindow{Rate: 500, Duration: time.Second}, true},
		{MixWindow{Rate: 0.001, Duration: time.Second}, true},
		{MixWindow{Rate: 0, Duration: time.Second}, false},
		{MixWindow{Rate: -5, Duration: time.Second}, false},
		{MixWindow{Rate: math.Inf(1), Duration: time.Second}, false},
		{MixWindow{Rate: math.NaN(), Duration: time.Second}, false},
		{MixWindow{Rate: 1e-300, Duration: time.Second}, false},
		{MixWindow{Rate: 500}, false},
		{MixWindow{Rate: 500, Duration: time.Second, Warmup: -time.Second}, false},
	} {
		if err := c.w.Check(); (err == nil) != c.ok {
			t.Errorf("%+v: Check() = %v; want ok %v", c.w, err, c.ok)
		}
	}
}

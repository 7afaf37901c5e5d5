package results

import (
	"strings"
	"testing"
)

// TestStep: a step's note reads back as the step, with other notes after
// it, and a note that is no step is told apart from a broken one.
func TestStep(t *testing.T) {
	for _, s := range []Step{
		{N: 1, Pass: true},
		{N: 7, Why: "p99 63.2 ms over 50 ms"},
		{Confirm: true, Pass: true},
		{Confirm: true, Why: "errors 0.4% over 0.1%"},
	} {
		for _, note := range []string{s.String(), s.String() + "; 3 connections did not open"} {
			got, ok, err := ParseStep(note)
			if err != nil || !ok || got != s {
				t.Errorf("ParseStep(%q) = %+v, %v, %v; want %+v", note, got, ok, err, s)
			}
		}
	}
	for _, c := range []struct {
		note    string
		ok, bad bool
	}{
		{"", false, false},                  // no note
		{"proxy exited", false, false},      // another note
		{"sweep step x: pass", false, true}, // no number
		{"sweep step 0: pass", false, true}, // steps count from 1
		{"sweep step 2", false, true},       // no verdict
		{"sweep step 2: fail: ", false, true},
		{"sweep middle: pass", false, true},
	} {
		_, ok, err := ParseStep(c.note)
		if ok != c.ok || (err != nil) != c.bad {
			t.Errorf("ParseStep(%q) = ok %v, error %v; want ok %v, an error %v", c.note, ok, err, c.ok, c.bad)
		}
		if err != nil && !strings.Contains(err.Error(), c.note) {
			t.Errorf("ParseStep(%q): error %q does not quote the note", c.note, err)
		}
	}
}

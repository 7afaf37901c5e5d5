package harness

import (
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"bench/results"
)

func TestSettingErrorText(t *testing.T) {
	flag := func(s Setting) string { return fmt.Sprintf("<%d>", int(s)) }
	st := results.Settings{Reps: 1, Window: results.Span(time.Second), CallGraph: results.CallGraphDWARF}
	err := checkSettings(st)
	var se *SettingError
	if !errors.As(err, &se) {
		t.Fatalf("checkSettings = %v; want a SettingError", err)
	}
	if got, want := se.Text(flag), fmt.Sprintf("<%d> goes with <%d>", SettingCallGraph, SettingProfileOn); got != want {
		t.Errorf("Text = %q; want %q", got, want)
	}
	if got, want := err.Error(), "the call graph goes with a profile"; got != want {
		t.Errorf("Error = %q; want %q", got, want)
	}

	// A rule of package results, its refusal's subject the setting, and
	// what it wraps kept.
	missing := t.TempDir() + "/none/x"
	err = checkSetting(SettingOut, func(what string) error { return results.CheckDir(what, missing) })
	if !errors.As(err, &se) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("checkSetting = %v; want a SettingError wrapping ErrNotExist", err)
	}
	if got, want := se.Text(flag), fmt.Sprintf("<%d>", SettingOut)+err.Error()[len(SettingOut.String()):]; got != want {
		t.Errorf("Text = %q; want %q", got, want)
	}
}

package harness

import (
	"fmt"
	"strings"

	"bench/results"
)

// Setting is a setting the user gives, as the harness refers to it in an
// error (see SettingError): the caller names it in its own terms, as
// cmd/bench names each by its flag.
type Setting int

// The settings an error may name.
const (
	SettingReps           Setting = iota + 1 // a number of repetitions
	SettingRepsAuto                          // automatic repetitions
	SettingCallGraph                         // how perf unwinds the stacks
	SettingProfileOn                         // a CPU profile of the proxy
	SettingSweep                             // the sweeps of the modes selected
	SettingSweepFrom                         // the search's first rate
	SettingSweepPrecision                    // the search's precision
	SettingSLO                               // the search's objective
	SettingOut                               // the session's folder
	SettingSession                           // the session's id
	SettingMachine                           // the machine's label
	SettingProxyColumn                       // a column name the user picked
)

// settingWords are the settings' names in the harness's own words.
var settingWords = map[Setting]string{
	SettingReps:           "a number of repetitions",
	SettingRepsAuto:       "automatic repetitions",
	SettingCallGraph:      "the call graph",
	SettingProfileOn:      "a profile",
	SettingSweep:          "the sweeps",
	SettingSweepFrom:      "the first rate",
	SettingSweepPrecision: "the precision",
	SettingSLO:            "the objective",
	SettingOut:            "the output folder",
	SettingSession:        "the session id",
	SettingMachine:        "the machine label",
	SettingProxyColumn:    "a column name",
}

// String is the setting in the harness's own words.
func (s Setting) String() string {
	if w, ok := settingWords[s]; ok {
		return w
	}
	return fmt.Sprintf("setting %d", int(s))
}

// SettingError is an error whose message names settings of the user's:
// format and args as fmt.Errorf takes them, each Setting among args put
// in words by the caller (Text), or by its own String (Error).
type SettingError struct {
	format string
	args   []any
	err    error // what it wraps, if anything
}

// settingErrorf is fmt.Errorf with Settings among args.
func settingErrorf(format string, args ...any) error {
	e := &SettingError{format: format, args: args}
	for _, a := range args {
		if err, ok := a.(error); ok {
			e.err = err
		}
	}
	return e
}

// checkSetting runs check, a rule of package results that names what it
// refuses by its first argument, on setting s: its refusal names s so
// that the caller may put it in words.
func checkSetting(s Setting, check func(what string) error) error {
	err := check(s.String())
	if err == nil {
		return nil
	}
	rest, ok := strings.CutPrefix(err.Error(), s.String())
	if !ok {
		return err
	}
	return &SettingError{format: "%v%s", args: []any{s, rest}, err: err}
}

// Error is the message with the settings in the harness's words.
func (e *SettingError) Error() string { return e.Text(Setting.String) }

// Text is the message with each setting put in words by name.
func (e *SettingError) Text(name func(Setting) string) string {
	args := make([]any, len(e.args))
	for i, a := range e.args {
		if s, ok := a.(Setting); ok {
			a = name(s)
		}
		args[i] = a
	}
	return fmt.Errorf(e.format, args...).Error()
}

// Unwrap returns the error it wraps, or nil.
func (e *SettingError) Unwrap() error { return e.err }

// checkName is results.CheckName of setting s.
func checkName(s Setting, name string) error {
	return checkSetting(s, func(what string) error { return results.CheckName(what, name) })
}

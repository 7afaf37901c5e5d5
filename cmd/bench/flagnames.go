package main

import (
	"strings"

	"bench/harness"
)

// settingFlags are the flags of the settings the harness names in its
// errors (harness.SettingError).
var settingFlags = map[harness.Setting]string{
	harness.SettingReps:           "--reps N",
	harness.SettingRepsAuto:       "--reps auto",
	harness.SettingCallGraph:      "--call-graph",
	harness.SettingProfileOn:      "--profile=on",
	harness.SettingSweep:          "--sweep",
	harness.SettingSweepFrom:      "--sweep-from",
	harness.SettingSweepPrecision: "--sweep-precision",
	harness.SettingSLO:            "--slo",
	harness.SettingOut:            "--out",
	harness.SettingSession:        "--session",
	harness.SettingMachine:        "--machine",
	harness.SettingProxyColumn:    "--proxy's column name",
}

// flagOf is the flag that gives setting s.
func flagOf(s harness.Setting) string {
	if f, ok := settingFlags[s]; ok {
		return f
	}
	return s.String()
}

// flagText is err's message with each setting the harness names in it
// put as its flag.
func flagText(err error) string {
	msg := err.Error()
	for _, se := range settingErrors(err) {
		msg = strings.Replace(msg, se.Error(), se.Text(flagOf), 1)
	}
	return msg
}

// settingErrors are the harness.SettingErrors in err's tree, outermost
// first.
func settingErrors(err error) []*harness.SettingError {
	switch e := err.(type) {
	case nil:
		return nil
	case *harness.SettingError:
		return []*harness.SettingError{e}
	case interface{ Unwrap() []error }:
		var out []*harness.SettingError
		for _, x := range e.Unwrap() {
			out = append(out, settingErrors(x)...)
		}
		return out
	case interface{ Unwrap() error }:
		return settingErrors(e.Unwrap())
	}
	return nil
}

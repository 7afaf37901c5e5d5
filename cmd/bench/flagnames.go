package main

import (
	"strings"

	"bench/harness"
	"bench/harness/host"
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

// hostFlags are the flags of the settings harness/host names in its
// advice (host.Advice).
var hostFlags = map[host.Setting]string{
	host.SettingCPUs:         "--cpus",
	host.SettingCgroupParent: "--cgroup-parent",
	host.SettingProfileOn:    "--profile=on",
}

// hostFlagOf is the flag that gives host's setting s.
func hostFlagOf(s host.Setting) string {
	if f, ok := hostFlags[s]; ok {
		return f
	}
	return s.String()
}

// flagOf is the flag that gives setting s.
func flagOf(s harness.Setting) string {
	if f, ok := settingFlags[s]; ok {
		return f
	}
	return s.String()
}

// flagText is err's message with each setting the harness and its host
// layer name in it put as its flag.
func flagText(err error) string {
	msg := err.Error()
	for _, e := range namingErrors(err) {
		switch e := e.(type) {
		case *harness.SettingError:
			msg = strings.Replace(msg, e.Error(), e.Text(flagOf), 1)
		case *host.Advice:
			msg = strings.Replace(msg, e.Error(), e.Text(hostFlagOf), 1)
		}
	}
	return msg
}

// namingErrors are the errors in err's tree that name settings
// (harness.SettingError, host.Advice), outermost first.
func namingErrors(err error) []error {
	switch e := err.(type) {
	case nil:
		return nil
	case *harness.SettingError, *host.Advice:
		return []error{e}
	case interface{ Unwrap() []error }:
		var out []error
		for _, x := range e.Unwrap() {
			out = append(out, namingErrors(x)...)
		}
		return out
	case interface{ Unwrap() error }:
		return namingErrors(e.Unwrap())
	}
	return nil
}

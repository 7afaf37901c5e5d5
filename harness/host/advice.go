package host

import (
	"fmt"
	"strconv"
)

// Setting is a setting of host's caller that an advice of host names,
// where the remedy is to set it; the caller puts it in its own words
// (Advice.Text): a command, as its flag.
type Setting int

// The settings an advice may name.
const (
	SettingCPUs         Setting = iota + 1 // the CPUs the roles run on
	SettingCgroupParent                    // the cgroup beneath which the harness makes its own
	SettingProfileOn                       // a CPU profile of the proxy, asked for
)

// String is the setting in host's own words.
func (s Setting) String() string {
	switch s {
	case SettingCPUs:
		return "the CPUs setting"
	case SettingCgroupParent:
		return "the cgroup parent setting"
	case SettingProfileOn:
		return "the profile setting"
	}
	return "setting " + strconv.Itoa(int(s))
}

// Advice is a message of host that names settings of its caller: an
// error, or a check's detail (CheckItem.Advice).
type Advice struct {
	format string
	args   []any // a Setting among them is put in words by Text
}

// advise is the advice of format and args, as fmt.Errorf takes them (an
// error among args is wrapped where format says %w).
func advise(format string, args ...any) *Advice { return &Advice{format: format, args: args} }

// Error is the advice with each setting in host's words.
func (a *Advice) Error() string { return a.Text(Setting.String) }

// Text is the advice with each setting put in words by name.
func (a *Advice) Text(name func(Setting) string) string {
	args := make([]any, len(a.args))
	for i, v := range a.args {
		if s, ok := v.(Setting); ok {
			v = name(s)
		}
		args[i] = v
	}
	return fmt.Errorf(a.format, args...).Error()
}

// Unwrap is the error the advice wraps, nil for none.
func (a *Advice) Unwrap() error {
	for _, v := range a.args {
		if err, ok := v.(error); ok {
			return err
		}
	}
	return nil
}

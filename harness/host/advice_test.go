package host

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
)

// TestAdvice: an advice names its settings in host's words as an error,
// in its caller's through Text, and wraps the error its %w formats.
func TestAdvice(t *testing.T) {
	a := advise("%w: pass %s an empty one, or set %s", fs.ErrPermission, SettingCgroupParent, SettingCPUs)
	if got, want := a.Error(), "permission denied: pass the cgroup parent setting an empty one, or set the CPUs setting"; got != want {
		t.Errorf("Error() = %q; want %q", got, want)
	}
	flags := map[Setting]string{SettingCgroupParent: "--cgroup-parent", SettingCPUs: "--cpus"}
	if got, want := a.Text(func(s Setting) string { return flags[s] }), "permission denied: pass --cgroup-parent an empty one, or set --cpus"; got != want {
		t.Errorf("Text(flags) = %q; want %q", got, want)
	}
	if !errors.Is(a, fs.ErrPermission) {
		t.Errorf("advice %q does not wrap fs.ErrPermission", a)
	}
	if errors.Unwrap(advise("no error here: %s", SettingProfileOn)) != nil {
		t.Error("an advice without an error unwraps to one")
	}
}

// advises reports whether err holds an advice that names setting.
func advises(err error, setting Setting) bool {
	var a *Advice
	if !errors.As(err, &a) {
		return false
	}
	mark := func(s Setting) string { return "<setting " + s.String() + ">" }
	return strings.Contains(a.Text(mark), mark(setting))
}

package host

import (
	"fmt"
	"testing"

	sd "github.com/coreos/go-systemd/v22/dbus"
)

func TestCgroupUnit(t *testing.T) {
	for _, tc := range []struct {
		path, unit, slice string
	}{
		// a login session's scope, in the user's slice
		{"/user.slice/user-1000.slice/session-2.scope", "session-2.scope", "user-1000.slice"},
		// a service
		{"/system.slice/runner.service", "runner.service", "system.slice"},
		// a service in a slice of its own within system.slice
		{"/system.slice/system-ci.slice/runner.service", "runner.service", "system-ci.slice"},
		// a user manager's service: the system's unit is user@1000.service
		{"/user.slice/user-1000.slice/user@1000.service/app.slice/job.service", "user@1000.service", "user-1000.slice"},
		// a cgroup of a delegated unit's own, beneath it
		{"/system.slice/run-r1.scope/payload", "run-r1.scope", "system.slice"},
		// a unit in the root slice
		{"/init.scope", "init.scope", "-.slice"},
		// systemd's escape of a name the kernel's files could clash with
		{"/system.slice/_cpu.service", "cpu.service", "system.slice"},
		// the root cgroup, a slice, a cgroup named as no unit: none
		{"/", "", ""},
		{"/system.slice", "", ""},
		{"/bench-parent/x", "", ""},
	} {
		if unit, slice := cgroupUnit(tc.path); unit != tc.unit || slice != tc.slice {
			t.Errorf("cgroupUnit(%q) = %q, %q; want %q, %q", tc.path, unit, slice, tc.unit, tc.slice)
		}
	}
}

// props maps each property's name to its value as fmt prints it.
func props(ps []sd.Property) map[string]string {
	m := map[string]string{}
	for _, p := range ps {
		m[p.Name] = fmt.Sprint(p.Value.Value())
	}
	return m
}

func TestScopeProperties(t *testing.T) {
	const unit = "bench-session.scope"
	for _, tc := range []struct {
		name   string
		req    scopeRequest
		state  string // the caller's ActiveState
		want   map[string]string
		absent []string
	}{
		// a service that runs: bound to it, stopped before it
		{"service", scopeRequest{unit: unit, pid: 7, caller: "runner.service", slice: "system.slice"}, "active",
			map[string]string{"Slice": "system.slice", "BindsTo": "[runner.service]", "After": "[runner.service]", "Delegate": "true"},
			[]string{"PartOf"}},
		// a Type=oneshot service running its command: not After=, or the
		// scope's start would wait for the service's, which waits for bench
		{"oneshot", scopeRequest{unit: unit, pid: 7, caller: "nightly.service", slice: "system.slice"}, "activating",
			map[string]string{"BindsTo": "[nightly.service]"},
			[]string{"After", "PartOf"}},
		// a login session's scope: PartOf=, as a scope bench leaves empty ends
		{"scope", scopeRequest{unit: unit, pid: 7, caller: "session-2.scope", slice: "user-1000.slice"}, "active",
			map[string]string{"Slice": "user-1000.slice", "PartOf": "[session-2.scope]", "After": "[session-2.scope]"},
			[]string{"BindsTo"}},
		// started in no unit: systemd's default slice, bound to nothing
		{"none", scopeRequest{unit: unit, pid: 7}, "",
			map[string]string{"PIDs": "[7]", "CollectMode": "inactive-or-failed"},
			[]string{"Slice", "BindsTo", "PartOf", "After"}},
		// a unit systemd does not have running: bound to nothing
		{"inactive", scopeRequest{unit: unit, pid: 7, caller: "gone.service", slice: "system.slice"}, "inactive",
			map[string]string{"Slice": "system.slice"},
			[]string{"BindsTo", "PartOf", "After"}},
	} {
		got := props(scopeProperties(tc.req, tc.state))
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%s: scopeProperties(%+v, %q)[%s] = %q; want %q", tc.name, tc.req, tc.state, k, got[k], v)
			}
		}
		for _, k := range tc.absent {
			if _, ok := got[k]; ok {
				t.Errorf("%s: scopeProperties(%+v, %q) sets %s = %s; want none", tc.name, tc.req, tc.state, k, got[k])
			}
		}
	}
}

package host

import (
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The cgroup v2 paths of a session, on a fake hierarchy laid out as
// systemd lays it out: controllers enabled from the root down only as far
// as its units ask (never cpuset), a login session's scope holding the
// shell, sudo and bench, a service's cgroup holding its processes.

const benchPID = 4242

// fakeLayout is the CPU layout the tests' sessions ask for.
var fakeLayout = Layout{Client: []int{0, 1, 2, 3}, Proxy: []int{4}, Origin: []int{5, 6, 7}}

// systemdTree is a v2 hierarchy as systemd makes it, with bench in the
// cgroup at own.
func systemdTree(t *testing.T, own string) (*fakeKernel, *fakeSystemd) {
	k := newFakeKernel(t, true)
	k.add("/init.scope", "memory pids", 1)
	k.add("/system.slice/benchtest.service", "memory pids", 500, 501)
	k.add("/user.slice/user-1000.slice/session-1.scope", "memory pids", 1000, 1001)
	k.add(own, "memory pids")
	k.movePID(filepath.Join(k.root, own), "4242")
	return k, newFakeSystemd(k)
}

// delegatedSession is a session's cgroups under systemd, bench having
// started in own.
func delegatedSession(t *testing.T, own string) (*fakeKernel, *fakeSystemd, *cgroupTree, *cgroupSet) {
	t.Helper()
	k, sd := systemdTree(t, own)
	tree := k.tree(benchPID, map[string]string{"": own}, sd)
	cs, err := newCgroupSet(tree, "bench-", "", fakeLayout, 0)
	if err != nil {
		t.Fatal(err)
	}
	return k, sd, tree, cs
}

// checkSession checks the role cgroups of cs beneath parent: pinned to the
// layout, the proxy's quota, and bench itself in none of them.
func checkSession(t *testing.T, k *fakeKernel, cs *cgroupSet, parent string) {
	t.Helper()
	for _, r := range roles {
		dir := filepath.Join(k.root, parent, "bench-"+string(r))
		if got, want := k.get(dir, "cpuset.cpus"), CPUList(fakeLayout.cpus(r)); got != want {
			t.Errorf("%s: cpuset.cpus = %q; want %q", dir, got, want)
		}
		if got := cs.roles[r].dirs; !slices.Equal(got, []string{dir}) {
			t.Errorf("%s's cgroups = %v; want [%s]", r, got, dir)
		}
	}
	proxy := filepath.Join(k.root, parent, "bench-proxy")
	if got := k.get(proxy, "cpu.max"); got != "50000 100000" {
		t.Errorf("proxy's cpu.max = %q; want a quota of half a CPU", got)
	}
	if cs.cpuStat != filepath.Join(proxy, "cpu.stat") || cs.roles[RoleProxy].mem != proxy {
		t.Errorf("throttling read from %q, memory from %q; want the proxy's cgroup %s", cs.cpuStat, cs.roles[RoleProxy].mem, proxy)
	}
	if got := k.get(filepath.Join(k.root, parent), "cgroup.subtree_control"); !hasAll(got, sessionControllers) {
		t.Errorf("%s hands on %q; want %v", parent, got, sessionControllers)
	}
}

func hasAll(list string, want []string) bool {
	for _, w := range want {
		if !slices.Contains(strings.Fields(list), w) {
			return false
		}
	}
	return true
}

// A session started from a login session's scope (or a service's cgroup)
// under systemd asks for a scope of its own, bound to the unit it started
// in and in that unit's slice, works in it, and when it ends is back
// where it was, with the scope stopped and nothing left.
func TestV2SystemdDelegates(t *testing.T) {
	for _, tc := range []struct {
		own    string
		caller string // the unit the scope is bound to
		slice  string // and its slice, the scope's
		scope  string // the scope's cgroup
	}{
		// sudo bench run from a login shell
		{"/user.slice/user-1000.slice/session-2.scope", "session-2.scope", "user-1000.slice", "/user.slice/user-1000.slice/bench-session.scope"},
		// a CI runner's service
		{"/system.slice/runner.service", "runner.service", "system.slice", "/system.slice/bench-session.scope"},
	} {
		t.Run(tc.own, func(t *testing.T) {
			k, sd := systemdTree(t, tc.own)
			k.movePID(filepath.Join(k.root, tc.own), "1002") // the shell and sudo are there too
			tree := k.tree(benchPID, map[string]string{"": tc.own}, sd)
			cs, err := newCgroupSet(tree, "bench-", "", fakeLayout, 0.5)
			if err != nil {
				t.Fatalf("newCgroupSet: %v", err)
			}
			want := scopeRequest{unit: "bench-session.scope", pid: benchPID, caller: tc.caller, slice: tc.slice}
			if !slices.Equal(sd.asked, []scopeRequest{want}) {
				t.Errorf("asked systemd for %+v; want %+v", sd.asked, want)
			}
			if cs.unit != "bench-session.scope" || sd.units[cs.unit] == "" {
				t.Errorf("unit %q, systemd's units %v; want bench-session.scope started", cs.unit, sd.units)
			}
			checkSession(t, k, cs, tc.scope)
			// bench moved to a leaf of the scope: a cgroup handing on
			// controllers holds no process.
			if got := k.cgroupOf("", benchPID); got != tc.scope+"/bench-harness" {
				t.Errorf("bench is in %s; want %s/bench-harness", got, tc.scope)
			}
			if err := cs.close(); err != nil {
				t.Fatalf("close: %v", err)
			}
			if got := k.cgroupOf("", benchPID); got != tc.own {
				t.Errorf("after close bench is in %s; want back in %s", got, tc.own)
			}
			if left := k.named("bench-"); len(left) > 0 {
				t.Errorf("left after close: %v", left)
			}
			if !slices.Equal(sd.stopped, []string{"bench-session.scope"}) || len(sd.units) > 0 {
				t.Errorf("stopped %v, still loaded %v; want the scope stopped", sd.stopped, sd.units)
			}
			if got := k.get(filepath.Join(k.root, tc.own), "cgroup.procs"); !strings.Contains(got, "1002") {
				t.Errorf("%s's processes = %q; want the shell's left alone", tc.own, got)
			}
		})
	}
}

// systemd took the request for the scope, and bench is in it, but the
// start's job failed or the scope's cgroup could not be read: bench goes
// back where it was and the scope is stopped, as after a session.
func TestV2DelegationFailsAfterStart(t *testing.T) {
	own := "/system.slice/runner.service"
	for _, tc := range []struct {
		name              string
		failJob, failRead error
	}{
		// the scope's start job ended "failed" or timed out
		{"job", errors.New("start systemd scope bench-session.scope: job failed"), nil},
		// its ControlGroup property could not be read
		{"property", nil, errors.New("cgroup of systemd scope bench-session.scope: timeout")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, sd := systemdTree(t, own)
			sd.failJob, sd.failRead = tc.failJob, tc.failRead
			_, err := newCgroupSet(k.tree(benchPID, map[string]string{"": own}, sd), "bench-", "", fakeLayout, 0)
			if err == nil || !strings.Contains(err.Error(), "bench-session.scope") {
				t.Errorf("newCgroupSet = %v; want the scope's error", err)
			}
			if got := k.cgroupOf("", benchPID); got != own {
				t.Errorf("bench is in %s; want back in %s", got, own)
			}
			if !slices.Equal(sd.stopped, []string{"bench-session.scope"}) || len(sd.units) > 0 {
				t.Errorf("stopped %v, still loaded %v; want the scope stopped", sd.stopped, sd.units)
			}
			if left := k.named("bench-"); len(left) > 0 {
				t.Errorf("left: %v", left)
			}
		})
	}
}

// The unit bench was started in was stopped, and systemd with it stops
// the session's scope (SIGTERM to all in it): bench tears down in the
// scope and does not leave it, so that the stop, and the caller's after
// it, end only once bench has exited.
func TestV2ScopeStopping(t *testing.T) {
	own := "/system.slice/runner.service"
	k, sd, _, cs := delegatedSession(t, own)
	scope := sd.units["bench-session.scope"]
	sd.draining["bench-session.scope"] = true
	if err := cs.close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if got, want := k.cgroupOf("", benchPID), "/system.slice/bench-session.scope/bench-harness"; got != want {
		t.Errorf("bench is in %s after close; want still in %s", got, want)
	}
	if len(sd.stopped) > 0 {
		t.Errorf("stopped %v; want systemd left to end the stop it began", sd.stopped)
	}
	if left := k.named("bench-"); !slices.Equal(left, []string{scope, filepath.Join(scope, "bench-harness")}) {
		t.Errorf("left: %v; want only the scope and bench's leaf, which systemd removes", left)
	}
}

// A slice whose AllowedCPUs= leaves out a CPU of the layout: the kernel
// runs the role on the slice's CPUs instead, and the session is refused
// with what it found and what to do, leaving nothing behind.
func TestV2SliceAllowsFewerCPUs(t *testing.T) {
	own := "/system.slice/system-ci.slice/runner.service"
	k, sd := systemdTree(t, own)
	slice := filepath.Join(k.root, "system.slice/system-ci.slice")
	k.add("/system.slice/system-ci.slice", "cpuset cpu memory pids")
	if err := k.write(slice, "cpuset.cpus", "0-3"); err != nil { // AllowedCPUs=0-3
		t.Fatal(err)
	}
	_, err := newCgroupSet(k.tree(benchPID, map[string]string{"": own}, sd), "bench-", "", fakeLayout, 0)
	t.Logf("refused: %v", err)
	for _, want := range []string{"bench-proxy: cpuset.cpus.effective is 0-3, not the proxy's CPUs 4:", "allow only 0-3"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("newCgroupSet in a slice of CPUs 0-3 = %v; want %q", err, want)
		}
	}
	if !advises(err, SettingCPUs) {
		t.Errorf("newCgroupSet in a slice of CPUs 0-3 = %v; want advice to set %s", err, SettingCPUs)
	}
	if got := sd.asked[0].slice; got != "system-ci.slice" {
		t.Errorf("scope asked for in %q; want the caller's system-ci.slice", got)
	}
	if got := k.cgroupOf("", benchPID); got != own {
		t.Errorf("bench is in %s; want back in %s", got, own)
	}
	if left := k.named("bench-"); len(left) > 0 {
		t.Errorf("left: %v", left)
	}
}

// Without systemd, the login session's scope is refused as it is: it has
// no cpuset to hand on, and once it has one it still holds other
// processes. Each error says what to do, and nothing is left behind.
func TestV2WithoutDelegation(t *testing.T) {
	own := "/user.slice/user-1000.slice/session-2.scope"
	k, _ := systemdTree(t, own)
	k.movePID(filepath.Join(k.root, own), "1002")
	tree := k.tree(benchPID, map[string]string{"": own}, nil)
	_, err := newCgroupSet(tree, "bench-", "", fakeLayout, 0)
	if err == nil || !strings.Contains(err.Error(), "lacks the cpuset controller") || !strings.Contains(err.Error(), "session-2.scope") {
		t.Errorf("newCgroupSet in a session scope without cpuset = %v; want it to name the missing cpuset and the scope", err)
	}
	// cpuset handed down to the scope: other processes are still in it.
	k.add(own, "cpuset cpu memory pids")
	_, err = newCgroupSet(tree, "bench-", "", fakeLayout, 0)
	if err == nil || !strings.Contains(err.Error(), "holds other processes") || !strings.Contains(err.Error(), "Delegate=yes") {
		t.Errorf("newCgroupSet in a shared scope = %v; want the other processes named, with what to run instead", err)
	}
	if left := k.named("bench-"); len(left) > 0 {
		t.Errorf("left after the refusals: %v", left)
	}
	if got := k.cgroupOf("", benchPID); got != own {
		t.Errorf("bench is in %s; want where it was, %s", got, own)
	}
}

// systemd that cannot delegate (no D-Bus, a scope it refuses): the error
// says so and names the flag that does without it.
func TestV2DelegationFails(t *testing.T) {
	own := "/user.slice/user-1000.slice/session-2.scope"
	k, sd := systemdTree(t, own)
	sd.fail = errors.New("reach systemd over D-Bus: connection refused")
	_, err := newCgroupSet(k.tree(benchPID, map[string]string{"": own}, sd), "bench-", "", fakeLayout, 0)
	if err == nil || !strings.Contains(err.Error(), "connection refused") || !advises(err, SettingCgroupParent) {
		t.Errorf("newCgroupSet with systemd out of reach = %v; want its error and the way round it", err)
	}
	if left := k.named("bench-"); len(left) > 0 {
		t.Errorf("left: %v", left)
	}
	// The clean-up before a session does not stop on it when no scope
	// was recorded, so that the session's own error is the one seen; a
	// recorded scope it cannot stop is an error.
	tree := k.tree(benchPID, map[string]string{"": own}, sd)
	if _, err := tree.removeLeftovers("bench-", lockState{}, nil); err != nil {
		t.Errorf("removeLeftovers with nothing recorded, systemd out of reach = %v; want nil", err)
	}
	if _, err := tree.removeLeftovers("bench-", lockState{Unit: "bench-session.scope"}, nil); err == nil {
		t.Errorf("removeLeftovers of a recorded scope, systemd out of reach = nil; want its error")
	}
}

// The root cgroup may hand controllers on while it holds processes: a
// session started there (a container's init, a plain init) uses it.
func TestV2RootCgroup(t *testing.T) {
	k := newFakeKernel(t, true)
	k.put(k.root, "cgroup.procs", "1\n4242")
	k.add("/other", "")
	tree := k.tree(benchPID, map[string]string{"": "/"}, nil)
	cs, err := newCgroupSet(tree, "bench-", "", fakeLayout, 0.5)
	if err != nil {
		t.Fatalf("newCgroupSet in the root cgroup: %v", err)
	}
	checkSession(t, k, cs, "/")
	if cs.v2Leaf != "" || k.cgroupOf("", benchPID) != "/" {
		t.Errorf("bench moved to %q (leaf %q); want it left in the root", k.cgroupOf("", benchPID), cs.v2Leaf)
	}
	if err := cs.close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if left := k.named("bench-"); len(left) > 0 {
		t.Errorf("left after close: %v", left)
	}
}

// A parent given with --cgroup-parent is used as it is, systemd or not;
// one lacking a controller is refused with its name; a cgroup of its own
// holding only bench gets a leaf for bench, and is as it was afterwards.
func TestV2GivenParent(t *testing.T) {
	own := "/user.slice/user-1000.slice/session-2.scope"
	k, sd := systemdTree(t, own)
	k.add("/bench-parent", "cpuset cpu memory")
	tree := k.tree(benchPID, map[string]string{"": own}, sd)
	cs, err := newCgroupSet(tree, "bench-", "/bench-parent", fakeLayout, 0.5)
	if err != nil {
		t.Fatalf("newCgroupSet with an empty parent: %v", err)
	}
	checkSession(t, k, cs, "/bench-parent")
	if len(sd.units) > 0 || cs.unit != "" {
		t.Errorf("units %v with a parent given; want none", sd.units)
	}
	if err := cs.close(); err != nil {
		t.Fatal(err)
	}
	if got := k.named("bench-"); !slices.Equal(got, []string{filepath.Join(k.root, "bench-parent")}) {
		t.Errorf("after close: %v; want only the parent given", got)
	}
	if got := k.get(filepath.Join(k.root, "bench-parent"), "cgroup.subtree_control"); got != "" {
		t.Errorf("the parent hands on %q after close; want what it had, nothing", got)
	}

	k.add("/no-memory", "cpuset cpu")
	if _, err := newCgroupSet(tree, "bench-", "/no-memory", fakeLayout, 0); err == nil || !strings.Contains(err.Error(), "lacks the memory controller") {
		t.Errorf("newCgroupSet beneath a parent without memory = %v; want memory named", err)
	}

	// bench alone in a delegated cgroup of its own (systemd-run --scope
	// -p Delegate=yes bench run): a leaf for bench.
	mine := "/system.slice/run-1.scope"
	k.add(mine, "cpuset cpu io memory pids")
	k.movePID(filepath.Join(k.root, mine), "4242")
	tree = k.tree(benchPID, map[string]string{"": mine}, nil)
	cs, err = newCgroupSet(tree, "bench-", "", fakeLayout, 0)
	if err != nil {
		t.Fatalf("newCgroupSet alone in a delegated scope: %v", err)
	}
	if got := k.cgroupOf("", benchPID); got != mine+"/bench-harness" {
		t.Errorf("bench is in %s; want %s/bench-harness", got, mine)
	}
	if err := cs.close(); err != nil {
		t.Fatal(err)
	}
	if got := k.cgroupOf("", benchPID); got != mine {
		t.Errorf("bench is in %s after close; want %s", got, mine)
	}
	if got := k.get(filepath.Join(k.root, mine), "cgroup.subtree_control"); got != "" {
		t.Errorf("%s hands on %q after close; want nothing, as before", mine, got)
	}
}

// A killed session's scope, with processes still in its cgroups: the
// clean-up kills them, removes the cgroups, and stops the scope, found by
// the prefix even when the lock recorded nothing.
func TestV2CleanStopsScope(t *testing.T) {
	k, _, tree, cs := delegatedSession(t, "/system.slice/benchtest.service")
	k.movePID(cs.roles[RoleProxy].dirs[0], "7000") // a proxy the killed session left
	dirs := tree.leftovers("bench-", cs.made)
	if len(dirs) != len(cs.made) {
		t.Errorf("leftovers = %v; want the recorded %v", dirs, cs.made)
	}
	k.put(cs.roles[RoleProxy].dirs[0], "cgroup.procs", "") // killed by the caller
	k.put(cs.v2Leaf, "cgroup.procs", "")                   // bench itself, killed
	removed, err := tree.removeLeftovers("bench-", lockState{}, dirs)
	if err != nil {
		t.Fatalf("removeLeftovers: %v", err)
	}
	if !slices.Contains(removed, "systemd scope bench-session.scope") {
		t.Errorf("removed %v; want the scope among them", removed)
	}
	if left := k.named("bench-"); len(left) > 0 {
		t.Errorf("left: %v", left)
	}
	// Nothing to find a second time.
	if removed, err := tree.removeLeftovers("bench-", lockState{}, tree.leftovers("bench-", nil)); err != nil || len(removed) > 0 {
		t.Errorf("second clean-up = %v, %v; want nothing", removed, err)
	}
}

// A scope that systemd lets go with its cgroup still there (it stopped by
// itself, its last process killed, while the cgroups inside it were being
// removed): the clean-up removes the empty directory, once systemd has had
// its time to.
func TestV2CleanPrunesScopeLeft(t *testing.T) {
	k, sd, tree, cs := delegatedSession(t, "/system.slice/benchtest.service")
	sd.leave = true
	tree.scopeGrace = time.Millisecond
	k.put(cs.v2Leaf, "cgroup.procs", "") // bench itself, killed
	scope := filepath.Dir(cs.roles[RoleProxy].dirs[0])
	removed, err := tree.removeLeftovers("bench-", lockState{Cgroups: cs.made}, tree.leftovers("bench-", cs.made))
	if err != nil {
		t.Fatalf("removeLeftovers: %v", err)
	}
	if !slices.Contains(removed, "systemd scope bench-session.scope") || !slices.Contains(removed, "cgroup "+scope) {
		t.Errorf("removed %v; want the scope and its cgroup %s", removed, scope)
	}
	if left := k.named("bench-"); len(left) > 0 {
		t.Errorf("left: %v", left)
	}
}

// bench clean run from elsewhere (another login, a service) finds a
// killed session's scope in the slice of the unit that session started
// in, with nothing recorded: systemd stops it by its name, with what is
// left in it.
func TestV2CleanFindsScopeInItsSlice(t *testing.T) {
	k, sd, _, cs := delegatedSession(t, "/user.slice/user-1000.slice/session-2.scope")
	k.movePID(cs.roles[RoleProxy].dirs[0], "7000") // a proxy the killed session left
	clean := k.tree(500, map[string]string{"": "/system.slice/benchtest.service"}, sd)
	removed, err := clean.removeLeftovers("bench-", lockState{}, clean.leftovers("bench-", nil))
	if err != nil {
		t.Fatalf("removeLeftovers: %v", err)
	}
	if !slices.Equal(removed, []string{"systemd scope bench-session.scope"}) {
		t.Errorf("removed %v; want the scope", removed)
	}
	if left := k.named("bench-"); len(left) > 0 {
		t.Errorf("left: %v", left)
	}
}

// bench check on v2 says where a session's cgroups would go, and what is
// in the way.
func TestV2Check(t *testing.T) {
	own := "/user.slice/user-1000.slice/session-2.scope"
	k, sd := systemdTree(t, own)
	k.movePID(filepath.Join(k.root, own), "1002")
	if it := k.tree(benchPID, map[string]string{"": own}, sd).check(); !it.OK || !strings.Contains(it.Detail, "systemd delegates") ||
		!strings.Contains(it.Detail, "bench-session.scope in user-1000.slice, bound to session-2.scope") {
		t.Errorf("check under systemd = %+v; want ok, by a delegated scope in the session's slice", it)
	}
	if it := k.tree(benchPID, map[string]string{"": own}, nil).check(); it.OK || !strings.Contains(it.Detail, "lacks cpuset") {
		t.Errorf("check in a session scope without systemd = %+v; want cpuset missing", it)
	}
	k.add(own, "cpuset cpu memory pids")
	if it := k.tree(benchPID, map[string]string{"": own}, nil).check(); it.OK || !strings.Contains(it.Detail, "other processes") {
		t.Errorf("check in a shared scope = %+v; want the other processes named", it)
	}
}

// bench alone in a scope of systemd-run: once bench moved to its session's
// scope, systemd collected the emptied one. At the end bench goes to the
// root cgroup instead, and its session's scope is stopped only once
// bench is out of it.
func TestV2HomeGone(t *testing.T) {
	own := "/system.slice/run-7.scope"
	k, sd, _, cs := delegatedSession(t, own)
	if err := k.rmdir(filepath.Join(k.root, own)); err != nil {
		t.Fatal(err)
	}
	if err := cs.close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if got := k.cgroupOf("", benchPID); got != "/" {
		t.Errorf("bench is in %q after close; want the root cgroup", got)
	}
	if !slices.Equal(sd.stopped, []string{"bench-session.scope"}) {
		t.Errorf("stopped %v; want the session's scope", sd.stopped)
	}
	if left := k.named("bench-"); len(left) > 0 {
		t.Errorf("left: %v", left)
	}
}

// Two hosts' agents of one session on one systemd (the tests' lab of
// hosts; containers), each with its own /run and so its own lock: each
// places its roles in a scope of its own, named by its process, and
// stops only its own.
func TestV2AgentsShareSystemd(t *testing.T) {
	own := "/system.slice/sshd.service"
	k, sd := systemdTree(t, own)
	const other = benchPID + 1
	k.movePID(filepath.Join(k.root, own), strconv.Itoa(other))
	var sets []*cgroupSet
	for _, pid := range []int{benchPID, other} {
		tree := k.tree(pid, map[string]string{"": own}, sd)
		tree.scope = agentScope("bench-", pid)
		cs, err := newCgroupSet(tree, "bench-", "", fakeLayout, 0)
		if err != nil {
			t.Fatalf("agent %d: %v", pid, err)
		}
		sets = append(sets, cs)
	}
	want := []string{"bench-session-4242.scope", "bench-session-4243.scope"}
	if got := []string{sd.asked[0].unit, sd.asked[1].unit}; !slices.Equal(got, want) {
		t.Errorf("scopes asked for %v; want %v", got, want)
	}
	if err := sets[0].close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := sd.units[want[1]]; !slices.Equal(sd.stopped, want[:1]) || !ok {
		t.Errorf("stopped %v, loaded %v; want only the first agent's scope stopped", sd.stopped, sd.units)
	}
	if err := sets[1].close(); err != nil {
		t.Fatal(err)
	}
	if left := k.named("bench-"); len(left) > 0 {
		t.Errorf("left: %v", left)
	}
}

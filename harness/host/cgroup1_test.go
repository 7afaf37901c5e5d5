package host

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/testenv"
)

// The cgroup v1 path of a session, on a fake hierarchy of the cpuset, cpu
// and memory controllers, as on a hybrid host: the roles' cgroups go
// beneath this process's own cgroup in each hierarchy (or the parent
// given), missing parents get their CPUs and memory nodes before a
// process may join, and nothing is left afterwards.
func TestV1Session(t *testing.T) {
	for _, tc := range []struct {
		name   string
		own    map[string]string
		parent string
		want   map[string]string // hierarchy -> where the roles' cgroups go
	}{
		// bench in each hierarchy's root, as a root shell is
		{"root", map[string]string{"cpuset": "/", "cpu": "/", "memory": "/"}, "", map[string]string{"cpuset": "/", "cpu": "/", "memory": "/"}},
		// memory in a cgroup of a service, the others in their roots
		{"own", map[string]string{"cpuset": "/", "cpu": "/", "memory": "/svc/x"}, "", map[string]string{"cpuset": "/", "cpu": "/", "memory": "/svc/x"}},
		// a parent given, not there yet: made, in every hierarchy
		{"given", map[string]string{"cpuset": "/", "cpu": "/", "memory": "/svc/x"}, "/bench/a", map[string]string{"cpuset": "/bench/a", "cpu": "/bench/a", "memory": "/bench/a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newFakeKernel(t, false)
			k.add("/memory/svc/x", "", benchPID)
			tree := k.tree(benchPID, tc.own, nil)
			cs, err := newCgroupSet(tree, "bench-", tc.parent, fakeLayout, 0.5)
			if err != nil {
				t.Fatalf("newCgroupSet: %v", err)
			}
			for _, r := range roles {
				cpuset := filepath.Join(k.root, "cpuset", tc.want["cpuset"], "bench-"+string(r))
				if got, want := k.get(cpuset, "cpuset.cpus"), CPUList(fakeLayout.cpus(r)); got != want {
					t.Errorf("%s cpuset.cpus = %q; want %q", r, got, want)
				}
				// A process may join every cgroup of the role.
				for _, f := range cs.roles[r].procsFiles() {
					if err := k.write(filepath.Dir(f), "cgroup.procs", "9000"); err != nil {
						t.Errorf("join %s: %v", f, err)
					}
					k.put(filepath.Dir(f), "cgroup.procs", "")
				}
			}
			proxyCPU := filepath.Join(k.root, "cpu", tc.want["cpu"], "bench-proxy")
			if q := k.get(proxyCPU, "cpu.cfs_quota_us"); q != "50000" || k.get(proxyCPU, "cpu.cfs_period_us") != "100000" {
				t.Errorf("proxy's quota %q per %q; want 50000 per 100000", q, k.get(proxyCPU, "cpu.cfs_period_us"))
			}
			if got, want := cs.roles[RoleProxy].mem, filepath.Join(k.root, "memory", tc.want["memory"], "bench-proxy"); got != want {
				t.Errorf("memory read from %s; want %s", got, want)
			}
			if err := cs.resetPeak(); err != nil {
				t.Errorf("resetPeak: %v", err)
			}
			if err := cs.close(); err != nil {
				t.Fatalf("close: %v", err)
			}
			if left := k.named("bench"); len(left) > 0 {
				t.Errorf("left after close: %v", left)
			}
			if got := k.cgroupOf("memory", benchPID); got != "/svc/x" {
				t.Errorf("bench's memory cgroup = %s after close; want /svc/x", got)
			}
		})
	}
}

// A hierarchy that is not mounted is named.
func TestV1Unmounted(t *testing.T) {
	k := newFakeKernel(t, false)
	tree := k.tree(benchPID, map[string]string{"cpuset": "/", "cpu": "/", "memory": "/"}, nil)
	tree.root = filepath.Join(k.root, "cpuset") // nothing mounted beneath
	if _, err := newCgroupSet(tree, "bench-", "", fakeLayout, 0); err == nil || !strings.Contains(err.Error(), "cpuset is not mounted") {
		t.Errorf("newCgroupSet without cpuset mounted = %v; want it named", err)
	}
	if it := tree.check(); it.OK || !strings.Contains(it.Detail, "not mounted: cpuset, cpu, memory") {
		t.Errorf("check = %+v; want the three named", it)
	}
}

// A cpuset above that lacks a CPU of the layout: v1 refuses the CPU, and
// the session is refused with the cpuset's effective CPUs named.
func TestV1ParentAllowsFewerCPUs(t *testing.T) {
	k := newFakeKernel(t, false)
	limited := k.add("/cpuset/limited", "")
	for file, value := range map[string]string{"cpuset.cpus": "0-3", "cpuset.mems": "0"} {
		if err := k.write(limited, file, value); err != nil {
			t.Fatal(err)
		}
	}
	tree := k.tree(benchPID, map[string]string{"cpuset": "/", "cpu": "/", "memory": "/"}, nil)
	_, err := newCgroupSet(tree, "bench-", "/limited", fakeLayout, 0)
	for _, want := range []string{"bench-proxy: cpuset.effective_cpus is 0-3, not the proxy's CPUs 4:", "allow only 0-3"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("newCgroupSet beneath a cpuset of CPUs 0-3 = %v; want %q", err, want)
		}
	}
	if left := k.named("bench"); len(left) > 0 {
		t.Errorf("left: %v", left)
	}
}

// The kernel's v1 cpusets: a role's CPUs outside those of the cpuset above
// are refused, and named with the file the kernel gives; CPUs among them
// are taken.
func TestV1PinByKernel(t *testing.T) {
	testenv.NeedRoot(t, "makes cpusets")
	tree, err := hostTree()
	if err != nil {
		t.Fatal(err)
	}
	if tree.version != 1 {
		t.Skipf("cgroup v%d: v2's cpusets are checked in the VM test (make vm-test)", tree.version)
	}
	layout := testLayout(t)
	mount, err := tree.v1Mount("cpuset")
	if err != nil {
		t.Fatal(err)
	}
	// A cpuset beneath this process's own, of the proxy's CPUs only,
	// and one beneath it for the client.
	parent := filepath.Join(mount, tree.own["cpuset"], testPrefix(t)+"parent")
	cs := &cgroupSet{t: tree, drv: cgroupV1{}}
	t.Cleanup(func() {
		if err := cs.close(); err != nil {
			t.Error(err)
		}
	})
	if err := cs.mkdirAll(mount, parent, true); err != nil {
		t.Fatal(err)
	}
	if err := cs.pin(parent, RoleProxy, layout.Proxy); err != nil {
		t.Fatalf("pin the proxy's CPUs %v: %v", layout.Proxy, err)
	}
	client := filepath.Join(parent, "client")
	if err := cs.mkdirAll(mount, client, true); err != nil {
		t.Fatal(err)
	}
	err = cs.pin(client, RoleClient, layout.Client)
	t.Logf("refused: %v", err)
	want := "cpuset.effective_cpus is " + CPUList(layout.Proxy) + ", not the client's CPUs " + CPUList(layout.Client) + ":"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("pin the client's CPUs beneath the proxy's = %v; want %q", err, want)
	}
	if b, _ := os.ReadFile(filepath.Join(client, "cpuset.effective_cpus")); strings.TrimSpace(string(b)) != CPUList(layout.Proxy) {
		t.Errorf("the client's cpuset.effective_cpus = %q; want its parent's, %s", b, CPUList(layout.Proxy))
	}
}

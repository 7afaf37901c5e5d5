package host

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"bench/internal/testenv"
)

// fakeV2Parent makes a directory standing for a v2 cgroup whose children
// have cpuset, cpu and memory; a regular file keeps what is written to
// cgroup.subtree_control.
func fakeV2Parent(t *testing.T) string {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("cpuset cpu memory\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// kernelTree is a tree whose writes go to the files as the kernel's do.
func kernelTree() *cgroupTree { return &cgroupTree{fs: kernelFS{}} }

func subtreeControl(t *testing.T, dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func TestDisableV2(t *testing.T) {
	parent := fakeV2Parent(t)
	leaf := filepath.Join(parent, "bench-harness")
	os.Mkdir(leaf, 0o755)
	// Only the harness's own leaf beneath: taken back.
	done, err := kernelTree().disableV2(parent, []string{"cpuset", "memory"}, leaf)
	if err != nil || !done {
		t.Fatalf("disableV2 = %v, %v; want done", done, err)
	}
	if got := subtreeControl(t, parent); got != "-cpuset -memory" {
		t.Errorf("cgroup.subtree_control written %q; want %q", got, "-cpuset -memory")
	}
	// Another cgroup beneath may rely on them: left alone.
	parent = fakeV2Parent(t)
	os.Mkdir(filepath.Join(parent, "someone-else"), 0o755)
	if done, err := kernelTree().disableV2(parent, []string{"cpuset"}); err != nil || done {
		t.Errorf("disableV2 with another child = %v, %v; want not done, no error", done, err)
	}
	if got := subtreeControl(t, parent); got != "cpuset cpu memory" {
		t.Errorf("cgroup.subtree_control = %q with another child; want it untouched", got)
	}
}

// vanishingFS is the kernel's file systems where the cgroup gone is
// removed just before a write: a scope systemd prunes once its last
// cgroup is removed.
type vanishingFS struct {
	kernelFS
	gone string
}

func (f vanishingFS) write(dir, file, value string) error {
	os.RemoveAll(f.gone)
	return f.kernelFS.write(dir, file, value)
}

// dyingFS is the kernel's file systems where the cgroup dying is being
// removed as it is written to: the kernel answers ENODEV.
type dyingFS struct {
	kernelFS
	dying string
}

func (f dyingFS) write(dir, file, value string) error {
	if dir == f.dying {
		return &os.PathError{Op: "write", Path: filepath.Join(dir, file), Err: syscall.ENODEV}
	}
	return f.kernelFS.write(dir, file, value)
}

// TestDisableV2Gone: a parent gone between its listing and the write
// (systemd pruned it), or being removed as it is written (bench clean
// after a killed session, its scope stopping by itself: the kernel
// answers ENODEV), has nothing left to take back: not an error.
func TestDisableV2Gone(t *testing.T) {
	for name, fs := range map[string]func(parent string) cgroupFS{
		"vanished": func(parent string) cgroupFS { return vanishingFS{gone: parent} },
		"dying":    func(parent string) cgroupFS { return dyingFS{dying: parent} },
	} {
		parent := fakeV2Parent(t)
		tree := &cgroupTree{fs: fs(parent)}
		done, err := tree.disableV2(parent, []string{"cpuset", "memory"})
		if err != nil || done {
			t.Errorf("disableV2 of a parent %s = %v, %v; want not done, no error", name, done, err)
		}
	}
}

// Clean takes back the v2 controllers a killed session recorded that it
// had enabled, and only those.
func TestCleanTakesBackV2Controllers(t *testing.T) {
	testenv.NeedRoot(t, "the lock is in /run")
	prefix := testPrefix(t)
	parent := fakeV2Parent(t)
	st, _ := json.Marshal(lockState{PID: 1 << 30, V2Parent: parent, V2Enabled: []string{"cpu", "memory"}})
	if err := os.WriteFile(lockPath(prefix), st, 0o600); err != nil {
		t.Fatal(err)
	}
	removed, err := Clean(prefix)
	if err != nil {
		t.Fatal(err)
	}
	if got := subtreeControl(t, parent); got != "-cpu -memory" {
		t.Errorf("cgroup.subtree_control written %q; want %q", got, "-cpu -memory")
	}
	if !slices.ContainsFunc(removed, func(r string) bool { return strings.HasPrefix(r, "controllers cpu, memory") }) {
		t.Errorf("Clean removed %v; want the controllers among them", removed)
	}
	if b, _ := os.ReadFile(lockPath(prefix)); len(b) != 0 {
		t.Errorf("lock after Clean = %q; want it cleared", b)
	}
}

func TestWaitCgroupEmpty(t *testing.T) {
	dir := t.TempDir()
	procs := filepath.Join(dir, "cgroup.procs")
	os.WriteFile(procs, nil, 0o644)
	if err := waitCgroupEmpty(dir, 0); err != nil {
		t.Errorf("waitCgroupEmpty of an empty cgroup = %v; want nil", err)
	}
	// A process still there when the time is up is named.
	os.WriteFile(procs, []byte("4242\n"), 0o644)
	if err := waitCgroupEmpty(dir, 0); err == nil || !strings.Contains(err.Error(), "4242") {
		t.Errorf("waitCgroupEmpty with process 4242 left = %v; want an error naming it", err)
	}
	// One that leaves in time is waited for.
	left := make(chan struct{})
	go func() {
		defer close(left)
		os.WriteFile(procs, nil, 0o644)
	}()
	if err := waitCgroupEmpty(dir, time.Minute); err != nil {
		t.Errorf("waitCgroupEmpty with the process leaving = %v; want nil", err)
	}
	<-left
}

//go:build vmtest

package vmtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"bench/harness/host"

	"bench/internal/child"
)

// TestImageKilled kills image.sh in the middle of debootstrap, when the
// root it builds has /proc mounted, and holds that the host never sees
// a mount of the build: a build killed with SIGKILL leaves files only,
// which removing the cache cannot turn into a removal of the host's
// /dev. Before that, image.sh meets a build directory left by a killed
// builder of the older kind, with a host directory bind-mounted inside
// it, and must unmount it and remove the rest without touching what
// the mount showed.
func TestImageKilled(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("image.sh builds with debootstrap: run it as root (sudo make vm-test)")
	}
	cache, err := os.MkdirTemp("", "bench-vmimage-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeUnmounted(t, cache) })

	canary := t.TempDir()
	if err := os.WriteFile(filepath.Join(canary, "null"), []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(cache, "build.stale", "root", "dev")
	if err := os.MkdirAll(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount(canary, stale, "", syscall.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command("bash", "image.sh", cache)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := child.Start(cmd); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	killed := false
	t.Cleanup(func() {
		if !killed {
			syscall.Kill(-pid, syscall.SIGKILL)
			<-done
		}
	})

	// The builder's own namespace shows its mounts; the host's must not.
	deadline := time.Now().Add(20 * time.Minute)
	for {
		for _, m := range mountsUnder(t, "/proc/self/mountinfo", cache) {
			if !strings.HasPrefix(m, filepath.Dir(stale)) {
				t.Fatalf("the host sees the build's mount %s", m)
			}
		}
		inner := mountsUnder(t, "/proc/"+strconv.Itoa(pid)+"/mountinfo", cache)
		if slices.ContainsFunc(inner, func(m string) bool { return strings.HasSuffix(m, "/root/proc") }) {
			t.Logf("the build's namespace has %v", inner)
			break
		}
		select {
		case err := <-done:
			killed = true
			t.Fatalf("image.sh ended (%v) before debootstrap mounted /proc:\n%s", err, stderr.String())
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("debootstrap did not mount /proc in the build's root within 20 minutes:\n%s", stderr.String())
		}
	}
	if _, err := os.Stat(filepath.Join(cache, "build.stale")); !os.IsNotExist(err) {
		t.Errorf("the killed build of the older kind is still there (%v)", err)
	}
	if b, err := os.ReadFile(filepath.Join(canary, "null")); err != nil || string(b) != "kept" {
		t.Errorf("removing the older build went through its mount: %q, %v", b, err)
	}
	if !strings.Contains(stderr.String(), "build.stale, left by a build that did not finish") {
		t.Errorf("image.sh did not say it removed the older build:\n%s", stderr.String())
	}

	syscall.Kill(-pid, syscall.SIGKILL)
	<-done
	killed = true
	if m := mountsUnder(t, "/proc/self/mountinfo", cache); len(m) > 0 {
		t.Fatalf("the killed build left mounts on the host: %v", m)
	}
	left, _ := filepath.Glob(filepath.Join(cache, "build.*", "root", "proc"))
	if len(left) == 0 {
		t.Fatal("no killed build's root left to check: the test did not kill it where it meant to")
	}
}

// mountsUnder lists the mount points at dir or beneath it in a
// mountinfo file; a process gone has none.
func mountsUnder(t *testing.T, mountinfo, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(mountinfo)
	if os.IsNotExist(err) {
		return nil
	} else if err != nil {
		t.Fatal(err)
	}
	return host.MountsUnder(string(b), dir)
}

// removeUnmounted removes dir after unmounting anything still mounted
// under it, and never crosses into another file system: a failed test
// must not take a host directory with it.
func removeUnmounted(t *testing.T, dir string) {
	if _, err := host.UnmountUnder(dir); err != nil {
		t.Error(err)
	}
	if out, err := child.CombinedOutput(exec.Command("rm", "-rf", "--one-file-system", dir)); err != nil {
		t.Errorf("remove %s: %v\n%s", dir, err, out)
	}
}

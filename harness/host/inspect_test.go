package host

import (
	"fmt"
	"os"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// What the tests read back of the namespaces a host set up.

// readSysctl reads a network sysctl of a namespace.
func readSysctl(ns, key string) (string, error) {
	var v string
	err := inNamespace(ns, func() error {
		b, err := os.ReadFile("/proc/sys/" + key)
		v = strings.TrimSpace(string(b))
		return err
	})
	return v, err
}

// readRPSMask returns the rps_cpus mask of a link inside a namespace, as
// the kernel prints it.
func readRPSMask(ns, link string) (string, error) {
	var mask string
	err := withSysfs(ns, func(sys string) error {
		b, err := os.ReadFile(rpsPath(sys, link))
		if err != nil {
			return fmt.Errorf("read rps mask of %s in %s: %w", link, ns, err)
		}
		mask = strings.TrimSpace(string(b))
		return nil
	})
	return mask, err
}

// withSysfs runs fn with the path of a sysfs that shows the named
// namespace's links (the host's /sys shows only the host's). It uses a
// thread of its own with a private mount namespace, which is never reused,
// so nothing is mounted where anyone else can see it, nor left behind.
func withSysfs(name string, fn func(sys string) error) error {
	errc := make(chan error, 1)
	go func() {
		// Never unlocked: this thread ends with a mount namespace of its own.
		runtime.LockOSThread()
		errc <- func() error {
			if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
				return fmt.Errorf("unshare mount namespace: %w", err)
			}
			if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
				return fmt.Errorf("make mounts private: %w", err)
			}
			if err := enterNamespace(name); err != nil {
				return err
			}
			if err := unix.Mount("sysfs", "/sys", "sysfs", 0, ""); err != nil {
				return fmt.Errorf("mount sysfs for network namespace %s: %w", name, err)
			}
			return fn("/sys")
		}()
	}()
	return <-errc
}

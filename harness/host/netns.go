package host

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// netnsDir is where named network namespaces are bind-mounted, as
// iproute2 does, so that `ip netns` and `bench clean` see them.
const netnsDir = "/run/netns"

// inNamespace runs fn on an OS thread switched into the named network
// namespace. Sockets fn opens belong to that namespace.
func inNamespace(name string, fn func() error) error {
	return onThread(func() error {
		if err := enterNamespace(name); err != nil {
			return err
		}
		return fn()
	})
}

// enterNamespace switches the calling thread into the named network
// namespace; the caller has locked it.
func enterNamespace(name string) error {
	target, err := netns.GetFromName(name)
	if err != nil {
		return fmt.Errorf("open network namespace %s: %w", name, err)
	}
	defer target.Close()
	if err := netns.Set(target); err != nil {
		return fmt.Errorf("enter network namespace %s: %w", name, err)
	}
	return nil
}

// onThread runs fn on a locked OS thread, then switches the thread back
// to the network namespace it had, whether fn switched it or not. A thread
// whose switch back fails is never reused: its goroutine ends still
// locked, and the runtime ends the thread with it.
func onThread(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("get current network namespace: %w", err)
			return
		}
		defer orig.Close()
		ferr := fn()
		if err := netns.Set(orig); err != nil {
			errc <- errors.Join(ferr, fmt.Errorf("return to the host's network namespace: %w", err))
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// createNamespace makes a named network namespace with its loopback down
// (as the kernel makes it) and leaves the calling goroutine's thread where
// it was.
func createNamespace(name string) error {
	if err := shareNetnsDir(); err != nil {
		return err
	}
	return onThread(func() error {
		// NewNamed switches the thread into the new namespace.
		h, err := netns.NewNamed(name)
		if err != nil {
			return fmt.Errorf("create network namespace %s: %w", name, err)
		}
		return h.Close()
	})
}

// shareNetnsDir makes netnsDir a shared mount point, as iproute2's `ip
// netns add` does (and leaves it): a mount of itself where it is none
// yet. Without it, the first `ip netns add` run while a session holds its
// namespaces makes netnsDir a mount point over them, copies of their
// mounts on top, and the session's own can no longer be removed (the
// file stays a mount point below: "device or resource busy").
func shareNetnsDir() error {
	if err := os.MkdirAll(netnsDir, 0o755); err != nil {
		return err
	}
	err := unix.Mount("", netnsDir, "none", unix.MS_SHARED|unix.MS_REC, "")
	if errors.Is(err, unix.EINVAL) {
		// not a mount point: make it one, as ip does
		if err = unix.Mount(netnsDir, netnsDir, "none", unix.MS_BIND|unix.MS_REC, ""); err == nil {
			err = unix.Mount("", netnsDir, "none", unix.MS_SHARED|unix.MS_REC, "")
		}
	}
	if err != nil {
		return fmt.Errorf("share %s as ip netns does: %w", netnsDir, err)
	}
	return nil
}

// deleteNamespace unmounts and removes a named network namespace; one
// already gone is not an error. The namespace itself ends when no process
// is left in it.
func deleteNamespace(name string) error {
	p := filepath.Join(netnsDir, name)
	if err := unix.Unmount(p, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("unmount network namespace %s: %w", name, err)
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove network namespace %s: %w", name, err)
	}
	return nil
}

// namespaceExists reports whether a named network namespace is mounted.
func namespaceExists(name string) bool {
	_, err := os.Stat(filepath.Join(netnsDir, name))
	return err == nil
}

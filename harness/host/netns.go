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
	return onThread(func() error {
		// NewNamed switches the thread into the new namespace.
		h, err := netns.NewNamed(name)
		if err != nil {
			return fmt.Errorf("create network namespace %s: %w", name, err)
		}
		return h.Close()
	})
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

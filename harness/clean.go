package harness

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Clean removes what a session with this prefix ("" = DefaultPrefix) left
// when it was killed: the processes in its namespaces and cgroups, the
// namespaces and their links, links still in the host's namespace, its
// cgroups (those its lock recorded, and any beneath this process's own
// cgroups with the prefix), its run directories and its lock. It refuses
// while a live session holds the lock. It returns what it removed.
func Clean(prefix string) ([]string, error) {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	if err := validatePrefix(prefix); err != nil {
		return nil, err
	}
	if geteuid() != 0 {
		return nil, errors.New("not root: removing namespaces and cgroups needs root; run with sudo")
	}
	lock, err := takeLock(prefix)
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	removed, err := clean(prefix)
	if rerr := os.Remove(lock.Name()); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
		err = errors.Join(err, fmt.Errorf("remove lock: %w", rerr))
	}
	return removed, err
}

// clean removes a prefix's leftovers. The caller holds the lock and has
// not yet written its own record into it, so the record read is the
// killed session's.
func clean(prefix string) ([]string, error) {
	var removed []string
	var errs []error
	st, _ := readLockState(lockPath(prefix))

	// Exact names only: another prefix may start with this one.
	var namespaces []string
	for _, r := range Roles {
		if namespaceExists(prefix + string(r)) {
			namespaces = append(namespaces, prefix+string(r))
		}
	}
	cgroupDirs := leftoverCgroups(prefix, st.Cgroups)

	// Processes first: a namespace lives on while a process is in it, and
	// a cgroup cannot go while it holds one.
	var pids []int
	for _, ns := range namespaces {
		pids = append(pids, namespacePIDs(ns)...)
	}
	for _, d := range cgroupDirs {
		p, _ := readPIDs(filepath.Join(d, "cgroup.procs"))
		pids = append(pids, p...)
	}
	pids = uniqueInts(pids)
	killAndWait(pids, 2*time.Second)
	for _, pid := range pids {
		removed = append(removed, "process "+strconv.Itoa(pid))
		if processAlive(pid) {
			errs = append(errs, fmt.Errorf("process %d survived SIGKILL", pid))
		}
	}
	// Deepest cgroup first.
	sort.Slice(cgroupDirs, func(i, j int) bool { return len(cgroupDirs[i]) > len(cgroupDirs[j]) })
	for _, d := range cgroupDirs {
		if err := removeCgroup(d); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, "cgroup "+d)
	}
	for _, ns := range namespaces {
		if err := deleteNamespace(ns); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, "namespace "+ns)
	}
	links, err := deleteHostLinks(prefix)
	removed = append(removed, links...)
	if err != nil {
		errs = append(errs, err)
	}
	runDirs, _ := filepath.Glob(filepath.Join(runBase, prefix+"run-*"))
	if st.RunDir != "" && st.OwnRun {
		runDirs = append(runDirs, st.RunDir)
	}
	for _, d := range uniqueStrings(runDirs) {
		if _, err := os.Stat(d); err != nil {
			continue
		}
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, fmt.Errorf("remove run directory: %w", err))
			continue
		}
		removed = append(removed, "run directory "+d)
	}
	return removed, errors.Join(errs...)
}

// leftoverCgroups returns the cgroup directories of a prefix that exist:
// those a lock recorded, and those named with the prefix directly beneath
// this process's own cgroup in each hierarchy (exact role names only).
func leftoverCgroups(prefix string, recorded []string) []string {
	var dirs []string
	for _, d := range recorded {
		if _, err := os.Stat(d); err == nil {
			dirs = append(dirs, d)
		}
	}
	own, err := ownCgroups()
	if err != nil {
		return dirs
	}
	var parents []string
	switch cgroupVersion() {
	case 1:
		for _, c := range []string{"cpuset", "cpu", "memory"} {
			if mount, err := v1Mount(c); err == nil {
				parents = append(parents, filepath.Join(mount, own[c]))
			}
		}
	case 2:
		parents = append(parents, filepath.Join(cgroupRoot, own[""]))
	}
	for _, p := range parents {
		for _, r := range Roles {
			dirs = append(dirs, filepath.Join(p, prefix+string(r)))
		}
	}
	var out []string
	for _, d := range uniqueStrings(dirs) {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			out = append(out, d)
		}
	}
	return out
}

// namespacePIDs returns the processes whose network namespace is the
// named one.
func namespacePIDs(name string) []int {
	var target syscall.Stat_t
	if err := syscall.Stat(filepath.Join(netnsDir, name), &target); err != nil {
		return nil
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		var st syscall.Stat_t
		if err := syscall.Stat("/proc/"+e.Name()+"/ns/net", &st); err != nil {
			continue
		}
		if st.Ino == target.Ino && st.Dev == target.Dev {
			pids = append(pids, pid)
		}
	}
	return pids
}

func uniqueInts(v []int) []int {
	seen := map[int]bool{}
	var out []int
	for _, x := range v {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

func uniqueStrings(v []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range v {
		if !seen[x] && strings.TrimSpace(x) != "" {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

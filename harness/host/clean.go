package host

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Clean removes what a session with this prefix ("" = DefaultPrefix) left
// when it was killed: the processes in its namespaces and cgroups, the
// namespaces and their links, links still in the host's namespace, its
// cgroups (those its lock recorded, and any beneath this process's own
// cgroups with the prefix), its run directories with what is mounted in
// them, and what its lock recorded, which it then clears. It refuses while
// a live session holds the lock. It returns what it removed.
func Clean(prefix string) ([]string, error) {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	if err := validatePrefix(prefix); err != nil {
		return nil, err
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("not root: removing namespaces and cgroups needs root; run with sudo")
	}
	_, statErr := os.Stat(lockPath(prefix))
	lock, err := takeLock(prefix)
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	removed, err := clean(prefix)
	if err == nil {
		err = clearLock(lock)
	}
	if errors.Is(statErr, os.ErrNotExist) {
		// No session ever used the prefix: leave no lock file made
		// only to look (it is held, so no session can be using it).
		os.Remove(lockPath(prefix))
	}
	return removed, err
}

// CleanKilled cleans up after every session whose prefix starts with
// start, whose lock file was last written over age ago and is not held:
// sessions killed before they could clean up, as test binaries are when
// a run of the tests is stopped (their processes, namespaces and cgroups
// stay, and a spinner at nice -20 left running slows every test after
// it). Each prefix is cleaned as Clean does, then forgotten (its lock
// file removed). A prefix a live session holds is left alone. It returns
// what it removed.
func CleanKilled(start string, age time.Duration) ([]string, error) {
	locks, err := filepath.Glob(filepath.Join(runBase, start+"*lock"))
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, l := range locks {
		prefix := strings.TrimSuffix(filepath.Base(l), "lock")
		fi, err := os.Stat(l)
		if err != nil || time.Since(fi.ModTime()) < age || validatePrefix(prefix) != nil {
			continue // gone, just taken (opened, not yet locked), or not a prefix's
		}
		r, err := Clean(prefix)
		if errors.Is(err, ErrPrefixBusy) {
			continue
		}
		removed = append(removed, r...)
		if err == nil {
			err = ForgetPrefix(prefix)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("prefix %s: %w", prefix, err))
			continue
		}
		removed = append(removed, "lock "+l)
	}
	return removed, errors.Join(errs...)
}

// clearLock empties a held lock file: nothing recorded. The file itself
// stays: unlinked while held, a process that opened it just before could
// lock the old file while a third creates and locks a new one, and two
// sessions would run.
func clearLock(lock *os.File) error {
	if err := lock.Truncate(0); err != nil {
		return fmt.Errorf("clear lock %s: %w", lock.Name(), err)
	}
	return nil
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
	for _, r := range roles {
		if namespaceExists(prefix + string(r)) {
			namespaces = append(namespaces, prefix+string(r))
		}
	}
	tree, err := hostTree()
	if err != nil {
		errs = append(errs, err)
	}
	var cgroupDirs []string
	if tree != nil {
		cgroupDirs = tree.leftovers(prefix, st.Cgroups)
	}

	// Processes first: a namespace lives on while a process is in it, and
	// a cgroup cannot go while it holds one.
	var pids []int
	for _, ns := range namespaces {
		pids = append(pids, namespacePIDs(ns)...)
	}
	for _, d := range cgroupDirs {
		p, _ := procsOf(d)
		pids = append(pids, p...)
	}
	pids = unique(pids, anyValue[int])
	killAndWait(pids, 2*time.Second)
	for _, pid := range pids {
		removed = append(removed, "process "+strconv.Itoa(pid))
		if processAlive(pid) {
			errs = append(errs, fmt.Errorf("process %d survived SIGKILL", pid))
		}
	}
	if tree != nil {
		r, err := tree.removeLeftovers(prefix, st, cgroupDirs)
		removed = append(removed, r...)
		if err != nil {
			errs = append(errs, err)
		}
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
	r, err := removeRunDirs(prefix, st)
	removed = append(removed, r...)
	if err != nil {
		errs = append(errs, err)
	}
	return removed, errors.Join(errs...)
}

// removeRunDirs removes a prefix's run directories, the killed session's
// among them, once the origin's tmpfs beneath each is unmounted.
func removeRunDirs(prefix string, st lockState) ([]string, error) {
	var removed []string
	var errs []error
	dirs := runDirs(runBase, prefix)
	if st.RunDir != "" && st.OwnRun {
		dirs = append(dirs, st.RunDir)
	}
	for _, d := range unique(dirs, nonBlank) {
		if _, err := os.Stat(d); err != nil {
			continue
		}
		// The origin's tmpfs, mounted in the host's mount namespace.
		mounts, err := UnmountUnder(d)
		for _, m := range mounts {
			removed = append(removed, "mount "+m)
		}
		if err != nil {
			errs = append(errs, err)
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

// leftovers returns the cgroup directories of a prefix that exist: those
// a lock recorded, and those named with the prefix directly beneath this
// process's own cgroup in each hierarchy (exact role names only).
func (t *cgroupTree) leftovers(prefix string, recorded []string) []string {
	var dirs []string
	for _, d := range recorded {
		if _, err := os.Stat(d); err == nil {
			dirs = append(dirs, d)
		}
	}
	var parents []string
	switch t.version {
	case 1:
		for _, c := range sessionControllers {
			if mount, err := t.v1Mount(c); err == nil {
				parents = append(parents, filepath.Join(mount, t.own[c]))
			}
		}
	case 2:
		parents = append(parents, filepath.Join(t.root, t.own[""]))
	}
	for _, p := range parents {
		for _, r := range roles {
			dirs = append(dirs, filepath.Join(p, prefix+string(r)))
		}
	}
	var out []string
	for _, d := range unique(dirs, nonBlank) {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			out = append(out, d)
		}
	}
	return out
}

// removeLeftovers removes a killed session's cgroups once their processes
// are gone: the directories, deepest first, then the controllers it
// handed to their parent (v2), then its systemd scope, found by the
// prefix, which systemd stops with whatever is still in it.
func (t *cgroupTree) removeLeftovers(prefix string, st lockState, dirs []string) ([]string, error) {
	var removed []string
	var errs []error
	dirs = slices.Clone(dirs)
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
	for _, d := range dirs {
		if err := t.remove(d); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, "cgroup "+d)
	}
	if st.V2Parent != "" && len(st.V2Enabled) > 0 {
		done, err := t.disableV2(st.V2Parent, st.V2Enabled)
		if err != nil {
			errs = append(errs, err)
		} else if done {
			removed = append(removed, fmt.Sprintf("controllers %s of cgroup %s's children", strings.Join(st.V2Enabled, ", "), st.V2Parent))
		}
	}
	if t.systemd != nil {
		unit := scopeUnit(prefix)
		if st.Unit != "" {
			unit = st.Unit
		}
		// Where systemd cannot be reached, a scope the lock did not
		// record is not looked for: the session that needs one says so.
		gone, err := t.systemd.stop(unit)
		switch {
		case err != nil && st.Unit != "":
			errs = append(errs, err)
		case gone:
			removed = append(removed, "systemd scope "+unit)
		}
		// systemd prunes a scope's cgroup as it stops, but not where the
		// scope stopped by itself, its last process gone, while the
		// cgroups inside it were still being removed: the unit is gone
		// and its directory stays, empty, for this harness to remove.
		for _, d := range scopeDirs(unit, dirs) {
			ok, err := t.pruneScope(d)
			if err != nil {
				errs = append(errs, err)
			} else if ok {
				removed = append(removed, "cgroup "+d)
			}
		}
	}
	return removed, errors.Join(errs...)
}

// scopeDirs returns the cgroups of a scope unit that hold the given
// cgroups: the parents named after the unit.
func scopeDirs(unit string, dirs []string) []string {
	var out []string
	for _, d := range dirs {
		if p := filepath.Dir(d); filepath.Base(p) == unit {
			out = append(out, p)
		}
	}
	return unique(out, nonBlank)
}

// scopeGrace is how long a stopped scope's cgroup is given to go before
// this harness removes it.
const scopeGrace = 2 * time.Second

// pruneScope waits up to t.scopeGrace for systemd to remove a stopped
// scope's cgroup, then removes it and what is left inside it, and
// reports whether it had to.
func (t *cgroupTree) pruneScope(dir string) (bool, error) {
	grace := t.scopeGrace
	if grace == 0 {
		grace = scopeGrace
	}
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		if time.Since(start) >= grace {
			break
		}
	}
	var inside []string
	_ = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && e.IsDir() {
			inside = append(inside, p)
		}
		return nil
	})
	sort.Slice(inside, func(i, j int) bool { return len(inside[i]) > len(inside[j]) })
	for _, d := range inside {
		if err := t.remove(d); err != nil {
			return false, err
		}
	}
	return true, nil
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

// unique is v without repeats, in order, and without the values keep
// refuses.
func unique[T comparable](v []T, keep func(T) bool) []T {
	seen := map[T]bool{}
	var out []T
	for _, x := range v {
		if !seen[x] && keep(x) {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// anyValue keeps every value; nonBlank keeps the strings that are not blank.
func anyValue[T any](T) bool { return true }

func nonBlank(s string) bool { return strings.TrimSpace(s) != "" }

// UnmountUnder detaches every mount at dir or beneath it, deepest first,
// and returns their mount points. Callers give it only directories they
// made: the harness its run directories, tests their temporary ones.
func UnmountUnder(dir string) ([]string, error) {
	// The mounts of this thread's mount namespace, the host's: the main
	// thread's (/proc/self) may be one withSysfs left in a namespace of
	// its own.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b, err := os.ReadFile("/proc/thread-self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("read mounts: %w", err)
	}
	points := MountsUnder(string(b), filepath.Clean(dir))
	var done []string
	var errs []error
	for _, m := range points {
		if err := unix.Unmount(m, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", m, err))
			continue
		}
		done = append(done, m)
	}
	return done, errors.Join(errs...)
}

// MountsUnder returns the mount points of a mountinfo text at dir or
// beneath it, deepest first, each once.
func MountsUnder(mountinfo, dir string) []string {
	var points []string
	for _, line := range strings.Split(mountinfo, "\n") {
		// ID, parent ID, major:minor, root, mount point, ...
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		m := unescapeMount(f[4])
		if m == dir || strings.HasPrefix(m, dir+"/") {
			points = append(points, m)
		}
	}
	points = unique(points, nonBlank)
	sort.SliceStable(points, func(i, j int) bool {
		return strings.Count(points[i], "/") > strings.Count(points[j], "/")
	})
	return points
}

// unescapeMount undoes mountinfo's octal escapes of space, tab, newline
// and backslash ("\040").
func unescapeMount(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

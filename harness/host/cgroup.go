package host

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/containerd/cgroups/v3"
)

// The cgroups of a session are made through the cgroup file systems
// directly. github.com/containerd/cgroups/v3 tells the version apart; its
// cgroup1 and cgroup2 managers would add nine modules (runtime-spec,
// protobuf, ebpf, dbus, systemd, logrus, ...) to the build for the dozen
// file writes a session needs, and neither handles cgroup v2's rule that
// a cgroup handing controllers to children holds no processes itself.
// Under systemd the session's cgroups are in a scope systemd delegates to
// it (systemd.go), asked for with go-systemd's D-Bus client alone.

// cgroupRoot is where the kernel's cgroup file systems are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// cgroupTree is the cgroup hierarchy a session's cgroups are made in, as
// this process sees it: hostTree() is the kernel's; the tests put one in
// a temporary directory, with a stand-in for the kernel's rules.
type cgroupTree struct {
	root    string            // where the file systems are mounted
	version int               // 1 (legacy or hybrid), 2 (unified), 0 (none)
	own     map[string]string // this process's cgroup per v1 controller, v2's under ""
	pid     int               // this process
	fs      cgroupFS          // what changes the hierarchy
	// systemd delegates a cgroup of the session's own on v2 where it is
	// the init; nil elsewhere.
	systemd delegator
	// scopeGrace is how long a stopped scope's cgroup is given to go
	// before the clean-up removes it (0: scopeGrace).
	scopeGrace time.Duration
}

// cgroupFS makes, removes and writes cgroups; reads are plain file reads.
type cgroupFS interface {
	// mkdir makes a cgroup (the kernel fills in its control files).
	mkdir(dir string) error
	// rmdir removes an empty cgroup.
	rmdir(dir string) error
	// write writes a value to a control file of a cgroup.
	write(dir, file, value string) error
}

// kernelFS is the kernel's cgroup file systems.
type kernelFS struct{}

func (kernelFS) mkdir(dir string) error { return os.Mkdir(dir, 0o755) }
func (kernelFS) rmdir(dir string) error { return os.Remove(dir) }
func (kernelFS) write(dir, file, value string) error {
	return os.WriteFile(filepath.Join(dir, file), []byte(value), 0)
}

// hostTree is the kernel's cgroup hierarchy as this process sees it.
func hostTree() (*cgroupTree, error) {
	own, err := ownCgroups()
	if err != nil {
		return nil, err
	}
	t := &cgroupTree{root: cgroupRoot, version: cgroupVersion(), own: own, pid: os.Getpid(), fs: kernelFS{}}
	if t.version == 2 && systemdBooted() {
		t.systemd = systemdManager{}
	}
	return t, nil
}

// cfsPeriod is the CFS period a CPU quota is expressed in (the kernel's
// default, 100 ms).
const cfsPeriod = 100000

// cgroupVersion returns 1 on legacy and hybrid hosts (the controllers are
// in the v1 hierarchies), 2 on unified ones, 0 when cgroups are missing.
func cgroupVersion() int {
	switch cgroups.Mode() {
	case cgroups.Legacy, cgroups.Hybrid:
		return 1
	case cgroups.Unified:
		return 2
	}
	return 0
}

// roleGroups are the cgroups of one role: one directory per v1 hierarchy
// it uses, or one v2 directory.
type roleGroups struct {
	dirs []string // every directory, the cpuset's (v1) or the only one (v2) first
	mem  string   // the directory with memory accounting, proxy only
}

// procsFiles returns the files a process writes its PID to in order to
// join every cgroup of the role.
func (g roleGroups) procsFiles() []string {
	files := make([]string, len(g.dirs))
	for i, d := range g.dirs {
		files[i] = filepath.Join(d, "cgroup.procs")
	}
	return files
}

// cgroupSet is the cgroups of a session: a cpuset per role, memory
// accounting and an optional CPU quota for the proxy.
type cgroupSet struct {
	t       *cgroupTree
	version int
	roles   map[Role]roleGroups
	made    []string // directories made, in the order made
	// v2 only: the leaf this process moved into, and the controllers it
	// enabled on the parent, to undo on close.
	v2Parent  string
	v2Leaf    string
	v2Enabled []string
	// unit is the systemd scope the session's cgroups are in (v2 under
	// systemd), and home the cgroup this process came from, to go back
	// to before the scope is stopped.
	unit string
	home string
	// peakFile is the proxy's memory.peak on v2 when the kernel resets it
	// per descriptor (Linux 6.12 on): the peak is read through it.
	peakFile *os.File
	// quota is the proxy's CPU quota in CPUs (0 = none), and cpuStat the
	// cpu.stat file of its cgroup that counts the throttling, when it has
	// one.
	quota   float64
	cpuStat string
}

// ownCgroups returns this process's cgroup path per v1 controller
// ("cpuset" -> "/") and its v2 path under the key "".
func ownCgroups() (map[string]string, error) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return nil, fmt.Errorf("read own cgroups: %w", err)
	}
	defer f.Close()
	paths := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			paths[c] = parts[2]
		}
	}
	return paths, sc.Err()
}

// v1Mount returns the mount point of a v1 controller's hierarchy.
func (t *cgroupTree) v1Mount(controller string) (string, error) {
	p := filepath.Join(t.root, controller)
	if _, err := os.Stat(filepath.Join(p, "cgroup.procs")); err != nil {
		return "", fmt.Errorf("cgroup v1 controller %s is not mounted at %s: %w", controller, p, err)
	}
	return p, nil
}

// newCgroupSet makes the cgroups of a session in t beneath parent: the
// given path in each hierarchy, or by default, on v2 under systemd, a
// scope systemd delegates to the session, and elsewhere this process's
// own cgroup. On error it removes what it made.
func newCgroupSet(t *cgroupTree, prefix, parent string, layout Layout, quota float64) (cs *cgroupSet, err error) {
	cs = &cgroupSet{t: t, version: t.version, roles: map[Role]roleGroups{}, quota: quota}
	defer func() {
		if err != nil {
			err = errors.Join(err, cs.close())
			cs = nil
		}
	}()
	switch cs.version {
	case 1:
		err = cs.makeV1(prefix, parent, layout, quota)
	case 2:
		err = cs.makeV2(prefix, parent, layout, quota)
	default:
		err = fmt.Errorf("no cgroup file system at %s: mount cgroup v1 or v2", t.root)
	}
	return cs, err
}

// parentPath returns the parent within a hierarchy: the given one, or
// this process's own path there.
func parentPath(parent, own string) string {
	if parent != "" {
		return parent
	}
	return own
}

func (cs *cgroupSet) makeV1(prefix, parent string, layout Layout, quota float64) error {
	for _, r := range roles {
		var g roleGroups
		controllers := []string{"cpuset"}
		if r == RoleProxy {
			controllers = append(controllers, "memory")
			if quota > 0 {
				controllers = append(controllers, "cpu")
			}
		}
		for _, c := range controllers {
			mount, err := cs.t.v1Mount(c)
			if err != nil {
				return err
			}
			dir := filepath.Join(mount, parentPath(parent, cs.t.own[c]), prefix+string(r))
			if err := cs.mkdirAll(mount, dir, c == "cpuset"); err != nil {
				return err
			}
			g.dirs = append(g.dirs, dir)
			switch c {
			case "cpuset":
				if err := cs.pin(dir, r, layout.cpus(r)); err != nil {
					return err
				}
			case "memory":
				g.mem = dir
			case "cpu":
				if err := cs.t.write(dir, "cpu.cfs_period_us", strconv.Itoa(cfsPeriod)); err != nil {
					return err
				}
				if err := cs.t.write(dir, "cpu.cfs_quota_us", strconv.Itoa(int(quota*cfsPeriod))); err != nil {
					return err
				}
				cs.cpuStat = filepath.Join(dir, "cpu.stat")
			}
		}
		cs.roles[r] = g
	}
	return nil
}

// mkdirAll makes dir and any missing parent below mount; in the cpuset
// hierarchy each new directory gets its parent's CPUs and memory nodes
// first, as the kernel refuses processes in a cpuset without them.
func (cs *cgroupSet) mkdirAll(mount, dir string, cpuset bool) error {
	rel, err := filepath.Rel(mount, dir)
	if err != nil || strings.HasPrefix(rel, "..") {
		return fmt.Errorf("cgroup %s is outside %s", dir, mount)
	}
	cur := mount
	for _, part := range strings.Split(rel, "/") {
		up := cur
		cur = filepath.Join(cur, part)
		if _, err := os.Stat(cur); err == nil {
			continue
		}
		if err := cs.t.mkdir(cur); err != nil {
			return err
		}
		cs.made = append(cs.made, cur)
		if cpuset {
			for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
				b, err := os.ReadFile(filepath.Join(up, f))
				if err != nil {
					return fmt.Errorf("read %s of cgroup %s: %w", f, up, err)
				}
				if err := cs.t.write(cur, f, strings.TrimSpace(string(b))); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// effectiveCPUsFile is the control file of a cpuset that gives the CPUs
// its processes run on: those it asked for in cpuset.cpus, as far as the
// cgroups above it allow.
func effectiveCPUsFile(version int) string {
	if version == 1 {
		return "cpuset.effective_cpus"
	}
	return "cpuset.cpus.effective"
}

// pin gives role r's cpuset dir the CPUs of the layout, and refuses when
// its processes would run on others: a cgroup above it may allow fewer (a
// systemd slice's AllowedCPUs=, a cpuset made by hand), and then v2 runs
// them on the CPUs it allows (its parent's, when none of those asked for
// are among them) and v1 refuses the CPUs (EACCES; the cpuset keeps its
// parent's). Each role would then be measured on CPUs it did not run on.
func (cs *cgroupSet) pin(dir string, r Role, cpus []int) error {
	want := CPUList(cpus)
	err := cs.t.write(dir, "cpuset.cpus", want)
	if err != nil && !errors.Is(err, syscall.EACCES) && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	file := effectiveCPUsFile(cs.version)
	got, rerr := readCPUs(filepath.Join(dir, file))
	if rerr != nil {
		return errors.Join(err, rerr)
	}
	if err == nil && got == want {
		return nil
	}
	allowed, _ := readCPUs(filepath.Join(filepath.Dir(dir), file))
	return fmt.Errorf("cgroup %s: %s is %s, not the %s's CPUs %s: the cgroups above it allow only %s "+
		"(a systemd slice's AllowedCPUs=, a cpuset), and the %s would be measured on CPUs it does not run on; "+
		"pass --cpus with CPUs among %s, or lift the limit", dir, file, got, r, want, allowed, r, allowed)
}

// readCPUs reads a cpuset's list of CPUs, in the kernel's list format:
// "none" for an empty one.
func readCPUs(file string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", file, err)
	}
	cpus, err := parseCPUList(strings.TrimSpace(string(b)))
	if err != nil {
		return "none", nil
	}
	return CPUList(cpus), nil
}

// v2Controllers are what a session's cgroups need on cgroup v2.
var v2Controllers = []string{"cpuset", "cpu", "memory"}

func (cs *cgroupSet) makeV2(prefix, parent string, layout Layout, quota float64) error {
	t := cs.t
	if parent == "" {
		parent = t.own[""]
		if t.systemd != nil {
			req := newScopeRequest(scopeUnit(prefix), t.pid, t.own[""])
			p, started, err := t.systemd.delegate(req)
			if started {
				// Recorded before anything else can fail: bench may be
				// in the scope, and close moves it back and stops it.
				cs.unit, cs.home = req.unit, t.own[""]
			}
			if err != nil {
				return fmt.Errorf("%w: bench needs a cgroup of its own with cpuset, cpu and memory; "+
					"pass --cgroup-parent an empty one (made beneath a delegated unit, e.g. of systemd-run -p Delegate=yes)", err)
			}
			parent = p
		}
	}
	pdir := filepath.Join(t.root, parent)
	avail, err := os.ReadFile(filepath.Join(pdir, "cgroup.controllers"))
	if err != nil {
		return fmt.Errorf("read controllers of cgroup %s: %w", pdir, err)
	}
	for _, c := range v2Controllers {
		if !slices.Contains(strings.Fields(string(avail)), c) {
			return fmt.Errorf("cgroup %s lacks the %s controller: enable it in its parent's cgroup.subtree_control or pass a cgroup parent that has it", pdir, c)
		}
	}
	enabled, _ := os.ReadFile(filepath.Join(pdir, "cgroup.subtree_control"))
	var missing []string
	for _, c := range v2Controllers {
		if !slices.Contains(strings.Fields(string(enabled)), c) {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		if err := cs.enableV2(prefix, pdir, missing); err != nil {
			return err
		}
	}
	for _, r := range roles {
		dir := filepath.Join(pdir, prefix+string(r))
		if err := t.mkdir(dir); err != nil {
			return err
		}
		cs.made = append(cs.made, dir)
		if err := cs.pin(dir, r, layout.cpus(r)); err != nil {
			return err
		}
		g := roleGroups{dirs: []string{dir}}
		if r == RoleProxy {
			g.mem = dir
			if quota > 0 {
				if err := t.write(dir, "cpu.max", fmt.Sprintf("%d %d", int(quota*cfsPeriod), cfsPeriod)); err != nil {
					return err
				}
				cs.cpuStat = filepath.Join(dir, "cpu.stat")
			}
		}
		cs.roles[r] = g
	}
	return nil
}

// enableV2 hands controllers to the children of pdir. A v2 cgroup that
// does so may hold no processes, the root cgroup apart; when the only one
// in it is this process, it moves into a leaf of its own first.
func (cs *cgroupSet) enableV2(prefix, pdir string, controllers []string) error {
	t := cs.t
	procs, err := readPIDs(filepath.Join(pdir, "cgroup.procs"))
	if err != nil {
		return err
	}
	if len(procs) > 0 && !isRootCgroup(pdir) {
		if len(procs) != 1 || procs[0] != t.pid {
			return fmt.Errorf("cgroup %s holds other processes (%v), so it cannot hand cpuset, cpu and memory to a session's cgroups: "+
				"start bench in a cgroup of its own (systemd-run --scope -p Delegate=yes) or pass an empty cgroup parent", pdir, procs)
		}
		leaf := filepath.Join(pdir, prefix+"harness")
		if err := t.mkdir(leaf); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
		cs.made = append(cs.made, leaf)
		if err := t.write(leaf, "cgroup.procs", strconv.Itoa(t.pid)); err != nil {
			return err
		}
		cs.v2Parent, cs.v2Leaf = pdir, leaf
	}
	var toggle []string
	for _, c := range controllers {
		toggle = append(toggle, "+"+c)
	}
	if err := t.write(pdir, "cgroup.subtree_control", strings.Join(toggle, " ")); err != nil {
		return err
	}
	cs.v2Parent, cs.v2Enabled = pdir, controllers
	return nil
}

// isRootCgroup says whether a v2 directory is the hierarchy's root, the
// one cgroup without a cgroup.type, which may hand controllers to its
// children while it holds processes.
func isRootCgroup(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "cgroup.type"))
	return errors.Is(err, os.ErrNotExist)
}

// close removes the cgroups, deepest first, once their processes are gone
// (it waits up to a second for the kernel to let go of exiting ones),
// undoes what makeV2 did to this process's own cgroup, and under systemd
// moves this process back to where it came from and stops the scope,
// unless systemd is stopping it already.
func (cs *cgroupSet) close() error {
	if cs == nil {
		return nil
	}
	t := cs.t
	cs.closePeak()
	var errs []error
	for i := len(cs.made) - 1; i >= 0; i-- {
		d := cs.made[i]
		if d == cs.v2Leaf {
			continue
		}
		if err := t.remove(d); err != nil {
			errs = append(errs, err)
		}
	}
	if len(cs.v2Enabled) > 0 {
		if _, err := t.disableV2(cs.v2Parent, cs.v2Enabled, cs.v2Leaf); err != nil {
			errs = append(errs, err)
		}
	}
	// out: this process is out of the cgroups made for the session.
	out := cs.v2Leaf == "" && cs.unit == ""
	// A scope systemd is stopping (the unit bench was started in was
	// stopped, see scopeProperties) goes once bench has exited: bench
	// stays in it, as leaving it would end the stop, and with it the
	// caller's, while bench still tears down and holds the lock.
	stay := cs.unit != "" && cs.scopeStopping()
	if !out && !stay {
		back := []string{cs.v2Parent}
		if cs.unit != "" {
			// Where it came from, or the root cgroup when that went: a
			// scope of systemd-run that held bench alone went when bench
			// left it.
			back = []string{filepath.Join(t.root, cs.home), t.root}
		}
		var err error
		for _, dir := range back {
			if err = t.write(dir, "cgroup.procs", strconv.Itoa(t.pid)); err == nil {
				out = true
				break
			}
		}
		if !out {
			errs = append(errs, err)
		}
	}
	if out && cs.v2Leaf != "" {
		if err := t.remove(cs.v2Leaf); err != nil {
			errs = append(errs, err)
		}
	}
	// Stopping the scope ends what is in it: not while bench still is;
	// systemd collects it once bench has exited.
	if cs.unit != "" && out {
		if _, err := t.systemd.stop(cs.unit); err != nil {
			errs = append(errs, err)
		}
	}
	cs.made, cs.v2Enabled, cs.v2Leaf, cs.unit = nil, nil, "", ""
	return errors.Join(errs...)
}

// scopeStopping says whether systemd is stopping the session's scope; a
// scope whose state is unknown is not.
func (cs *cgroupSet) scopeStopping() bool {
	stopping, err := cs.t.systemd.stopping(cs.unit)
	return err == nil && stopping
}

// disableV2 takes back controllers this harness handed to the children of
// parent, unless parent has children other than ours (the harness's own
// leaf, if any): another session, started while they were on, may rely
// on them, and the kernel would take them from its cgroups too. It
// reports whether it took them back.
func (t *cgroupTree) disableV2(parent string, controllers []string, ours ...string) (bool, error) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		return false, fmt.Errorf("list cgroup %s: %w", parent, err)
	}
	for _, e := range entries {
		if e.IsDir() && !slices.Contains(ours, filepath.Join(parent, e.Name())) {
			return false, nil
		}
	}
	var toggle []string
	for _, c := range controllers {
		toggle = append(toggle, "-"+c)
	}
	if err := t.write(parent, "cgroup.subtree_control", strings.Join(toggle, " ")); err != nil {
		return false, err
	}
	return true, nil
}

// mkdir makes a cgroup directory.
func (t *cgroupTree) mkdir(dir string) error {
	if err := t.fs.mkdir(dir); err != nil {
		return fmt.Errorf("create cgroup %s: %w", dir, err)
	}
	return nil
}

// write writes one value to a cgroup's control file.
func (t *cgroupTree) write(dir, file, value string) error {
	if err := t.fs.write(dir, file, value); err != nil {
		return fmt.Errorf("write %q to %s of cgroup %s: %w", value, file, dir, err)
	}
	return nil
}

// remove removes an empty cgroup directory; one already gone is not an
// error. The kernel refuses (EBUSY) while exiting processes are still
// charged to it, so it retries for a second.
func (t *cgroupTree) remove(dir string) error {
	var err error
	for delay := 5 * time.Millisecond; delay < time.Second; delay *= 2 {
		err = t.fs.rmdir(dir)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		time.Sleep(delay)
	}
	pids, _ := readPIDs(filepath.Join(dir, "cgroup.procs"))
	return fmt.Errorf("remove cgroup %s (processes %v): %w", dir, pids, err)
}

// pids returns the processes in a role's cgroup now.
func (cs *cgroupSet) pids(r Role) ([]int, error) {
	g, ok := cs.roles[r]
	if !ok || len(g.dirs) == 0 {
		return nil, nil
	}
	return readPIDs(filepath.Join(g.dirs[0], "cgroup.procs"))
}

// killProcs ends every process left in the roles' cgroups and waits up to
// deadline for them to go: through cgroup.kill on v2 (Linux 5.14 on),
// which the kernel applies to the whole cgroup at once, else by the PIDs
// in cgroup.procs (each is a live member's when read; it cannot be reaped
// and its PID given again in the microseconds before the signal).
func (cs *cgroupSet) killProcs(deadline time.Duration) {
	if cs == nil {
		return
	}
	var pids []int
	for _, r := range roles {
		p, _ := cs.pids(r)
		if len(p) == 0 {
			continue
		}
		if cs.version == 2 {
			if err := cs.t.write(cs.roles[r].dirs[0], "cgroup.kill", "1"); err == nil {
				p = nil
			}
		}
		pids = append(pids, p...)
	}
	killAndWait(pids, deadline)
	end := time.Now().Add(deadline)
	for _, r := range roles {
		for time.Now().Before(end) {
			if p, _ := cs.pids(r); len(p) == 0 {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// resetPeak starts the proxy's peak memory afresh. A session calls it
// before it starts the proxy of a run, right after the last run's proxy
// stopped.
func (cs *cgroupSet) resetPeak() error {
	g := cs.roles[RoleProxy]
	if cs.version == 1 {
		// Pages charged to the cgroup earlier (the proxy binary's and
		// libraries' page cache, read first by a config check or an
		// earlier run) would count in every later peak; with no process
		// left in it the kernel can move them out, so that each run's
		// peak is what its proxy used, as a fresh cgroup gives on v2.
		if pids, err := readPIDs(filepath.Join(g.mem, "cgroup.procs")); err == nil && len(pids) == 0 {
			_ = cs.t.write(g.mem, "memory.force_empty", "0")
		}
		return cs.t.write(g.mem, "memory.max_usage_in_bytes", "0")
	}
	// Linux 6.12 on: a write to memory.peak starts the peak afresh for
	// what is read through the same descriptor, whatever runs in the
	// cgroup.
	if f, err := os.OpenFile(filepath.Join(g.mem, "memory.peak"), os.O_RDWR, 0); err == nil {
		if _, err := f.WriteString("reset\n"); err == nil {
			cs.closePeak()
			cs.peakFile = f
			return nil
		}
		f.Close()
	}
	// Before, the peak is reset by a fresh cgroup, which needs the
	// proxy's empty: the last proxy's workers, killed with it, may still
	// be on their way out.
	cs.closePeak()
	if err := waitCgroupEmpty(g.mem, 2*time.Second); err != nil {
		return fmt.Errorf("reset peak memory: %w", err)
	}
	cpus, err := os.ReadFile(filepath.Join(g.mem, "cpuset.cpus"))
	if err != nil {
		return fmt.Errorf("read cpuset of cgroup %s: %w", g.mem, err)
	}
	quota, _ := os.ReadFile(filepath.Join(g.mem, "cpu.max"))
	if err := cs.t.remove(g.mem); err != nil {
		return err
	}
	if err := cs.t.mkdir(g.mem); err != nil {
		return err
	}
	if err := cs.t.write(g.mem, "cpuset.cpus", strings.TrimSpace(string(cpus))); err != nil {
		return err
	}
	if q := strings.TrimSpace(string(quota)); q != "" && !strings.HasPrefix(q, "max") {
		return cs.t.write(g.mem, "cpu.max", q)
	}
	return nil
}

// closePeak closes the descriptor the peak was reset through.
func (cs *cgroupSet) closePeak() {
	if cs.peakFile != nil {
		cs.peakFile.Close()
		cs.peakFile = nil
	}
}

// waitCgroupEmpty waits up to deadline for a cgroup to hold no process,
// and names those left when it does not.
func waitCgroupEmpty(dir string, deadline time.Duration) error {
	end := time.Now().Add(deadline)
	for {
		pids, err := readPIDs(filepath.Join(dir, "cgroup.procs"))
		if err != nil {
			return err
		}
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(end) {
			return fmt.Errorf("cgroup %s still holds processes %v after %v: stop them first", dir, pids, deadline)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// peak returns the proxy's peak memory since the reset, in bytes.
func (cs *cgroupSet) peak() (int64, error) {
	g := cs.roles[RoleProxy]
	file := "memory.peak"
	if cs.version == 1 {
		file = "memory.max_usage_in_bytes"
	}
	var b []byte
	var err error
	if cs.peakFile != nil {
		b = make([]byte, 64)
		var n int
		n, err = cs.peakFile.ReadAt(b, 0)
		if n > 0 {
			b, err = b[:n], nil
		}
	} else {
		b, err = os.ReadFile(filepath.Join(g.mem, file))
	}
	if err != nil {
		return 0, fmt.Errorf("read peak memory of cgroup %s: %w", g.mem, err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s/%s: %q is not a number: %w", g.mem, file, b, err)
	}
	return n, nil
}

// readPIDs reads a cgroup.procs file.
func readPIDs(file string) ([]int, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

package host

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
	// the init; nil elsewhere. scope is the name of the scope it is asked
	// for ("": scopeUnit of the session's prefix).
	systemd delegator
	scope   string
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

// The control files of a cgroup that both versions have.
const (
	procsFile   = "cgroup.procs" // the processes in it, one PID a line
	cpusFile    = "cpuset.cpus"  // the CPUs a cpuset asks for
	memsFile    = "cpuset.mems"  // the memory nodes a cpuset asks for
	cpuStatFile = "cpu.stat"     // the CPU controller's counts, the throttling among them
)

// sessionControllers are what a session's cgroups need: a cpuset per
// role, memory accounting and an optional CPU quota for the proxy.
var sessionControllers = []string{"cpuset", "cpu", "memory"}

// cgroupDriver is what cgroup v1 (cgroup1.go) and v2 (cgroup2.go) do
// apart; a cgroupSet does the rest the same on both through it.
type cgroupDriver interface {
	// make makes the roles' cgroups of cs beneath parent (this process's
	// own cgroup when empty), recording what it made in cs.
	make(cs *cgroupSet, prefix, parent string, layout Layout, quota float64) error
	// effectiveCPUs is the control file of a cpuset that gives the CPUs
	// its processes run on: those it asked for in cpuset.cpus, as far as
	// the cgroups above it allow.
	effectiveCPUs() string
	// kill ends every process of cgroup dir at once, and reports
	// whether it could.
	kill(t *cgroupTree, dir string) bool
	// resetPeak starts the peak memory of cgroup dir afresh.
	resetPeak(cs *cgroupSet, dir string) error
	// peakControl is the control file of a cgroup's peak memory.
	peakControl() string
}

// driverOf is the driver of a cgroup version (cgroupTree.version), nil
// for none.
func driverOf(version int) cgroupDriver {
	switch version {
	case 1:
		return cgroupV1{}
	case 2:
		return cgroupV2{}
	}
	return nil
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
		files[i] = filepath.Join(d, procsFile)
	}
	return files
}

// cgroupSet is the cgroups of a session: a cpuset per role, memory
// accounting and an optional CPU quota for the proxy.
type cgroupSet struct {
	t     *cgroupTree
	drv   cgroupDriver
	roles map[Role]roleGroups
	made  []string // directories made, in the order made
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

// newCgroupSet makes the cgroups of a session in t beneath parent: the
// given path in each hierarchy, or by default, on v2 under systemd, a
// scope systemd delegates to the session, and elsewhere this process's
// own cgroup. On error it removes what it made.
func newCgroupSet(t *cgroupTree, prefix, parent string, layout Layout, quota float64) (cs *cgroupSet, err error) {
	cs = &cgroupSet{t: t, drv: driverOf(t.version), roles: map[Role]roleGroups{}, quota: quota}
	if cs.drv == nil {
		return nil, fmt.Errorf("no cgroup file system at %s: mount cgroup v1 or v2", t.root)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, cs.close())
			cs = nil
		}
	}()
	return cs, cs.drv.make(cs, prefix, parent, layout, quota)
}

// parentPath returns the parent within a hierarchy: the given one, or
// this process's own path there.
func parentPath(parent, own string) string {
	if parent != "" {
		return parent
	}
	return own
}

// pin gives role r's cpuset dir the CPUs of the layout, and refuses when
// its processes would run on others: a cgroup above it may allow fewer (a
// systemd slice's AllowedCPUs=, a cpuset made by hand), and then v2 runs
// them on the CPUs it allows (its parent's, when none of those asked for
// are among them) and v1 refuses the CPUs (EACCES; the cpuset keeps its
// parent's). Each role would then be measured on CPUs it did not run on.
func (cs *cgroupSet) pin(dir string, r Role, cpus []int) error {
	want := CPUList(cpus)
	err := cs.t.write(dir, cpusFile, want)
	if err != nil && !errors.Is(err, syscall.EACCES) && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	file := cs.drv.effectiveCPUs()
	got, rerr := readCPUs(filepath.Join(dir, file))
	if rerr != nil {
		return errors.Join(err, rerr)
	}
	if err == nil && got == want {
		return nil
	}
	allowed, _ := readCPUs(filepath.Join(filepath.Dir(dir), file))
	return advise("cgroup %s: %s is %s, not the %s's CPUs %s: the cgroups above it allow only %s "+
		"(a systemd slice's AllowedCPUs=, a cpuset), and the %s would be measured on CPUs it does not run on; "+
		"pass %s with CPUs among %s, or lift the limit", dir, file, got, r, want, allowed, r, SettingCPUs, allowed)
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

// close removes the cgroups, deepest first, once their processes are gone
// (it waits up to a second for the kernel to let go of exiting ones),
// undoes what v2 did (leaveV2) to this process's own cgroup, and under systemd
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
	errs = append(errs, cs.leaveV2()...)
	cs.made, cs.v2Enabled, cs.v2Leaf, cs.unit = nil, nil, "", ""
	return errors.Join(errs...)
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

// moveHere moves this process into cgroup dir.
func (t *cgroupTree) moveHere(dir string) error { return t.write(dir, procsFile, strconv.Itoa(t.pid)) }

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
	pids, _ := procsOf(dir)
	return fmt.Errorf("remove cgroup %s (processes %v): %w", dir, pids, err)
}

// pids returns the processes in a role's cgroup now.
func (cs *cgroupSet) pids(r Role) ([]int, error) {
	g, ok := cs.roles[r]
	if !ok || len(g.dirs) == 0 {
		return nil, nil
	}
	return procsOf(g.dirs[0])
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
		p, _ := cs.pids(r) // none for a role not held
		if len(p) == 0 {
			continue
		}
		if cs.drv.kill(cs.t, cs.roles[r].dirs[0]) {
			p = nil
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
func (cs *cgroupSet) resetPeak() error { return cs.drv.resetPeak(cs, cs.roles[RoleProxy].mem) }

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
		pids, err := procsOf(dir)
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
	file := cs.drv.peakControl()
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

// procsOf reads the processes of cgroup dir: none when it is gone.
func procsOf(dir string) ([]int, error) { return readPIDs(filepath.Join(dir, procsFile)) }

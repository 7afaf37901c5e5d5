package host

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// cgroup v2 (unified hosts): one hierarchy at cgroupRoot, where a cgroup
// that hands controllers to its children holds no processes itself (the
// root apart), and under systemd a scope it delegates to the session.

// The control files of cgroup v2 a session writes or reads.
const (
	controllersFile    = "cgroup.controllers"     // the controllers a cgroup may use
	subtreeControlFile = "cgroup.subtree_control" // those it hands to its children
	typeFile           = "cgroup.type"            // every cgroup's but the root's
	killFile           = "cgroup.kill"            // Linux 5.14 on
	effectiveCPUsV2    = "cpuset.cpus.effective"
	cpuMaxFile         = "cpu.max"
	memoryPeakFile     = "memory.peak"
)

// cgroupV2 is the cgroupDriver of cgroup v2.
type cgroupV2 struct{}

var _ cgroupDriver = cgroupV2{}

// A toggle of subtree_control hands controllers to a cgroup's children
// (enable) or takes them back (disable).
const (
	enable  = "+"
	disable = "-"
)

// toggle is the line that turns controllers on or off in a
// cgroup.subtree_control: "+cpuset +cpu +memory".
func toggle(sign string, controllers []string) string {
	words := make([]string, len(controllers))
	for i, c := range controllers {
		words[i] = sign + c
	}
	return strings.Join(words, " ")
}

// make makes a cgroup per role beneath parent, in a scope systemd
// delegates under systemd, after handing the controllers to parent's
// children.
func (cgroupV2) make(cs *cgroupSet, prefix, parent string, layout Layout, quota float64) error {
	t := cs.t
	if parent == "" {
		parent = t.own[""]
		if t.systemd != nil {
			unit := t.scope
			if unit == "" {
				unit = scopeUnit(prefix)
			}
			req := newScopeRequest(unit, t.pid, t.own[""])
			p, started, err := t.systemd.delegate(req)
			if started {
				// Recorded before anything else can fail: bench may be
				// in the scope, and close moves it back and stops it.
				cs.unit, cs.home = req.unit, t.own[""]
			}
			if err != nil {
				return advise("%w: bench needs a cgroup of its own with cpuset, cpu and memory; "+
					"pass %s an empty one (made beneath a delegated unit, e.g. of systemd-run -p Delegate=yes)", err, SettingCgroupParent)
			}
			parent = p
		}
	}
	pdir := filepath.Join(t.root, parent)
	avail, err := os.ReadFile(filepath.Join(pdir, controllersFile))
	if err != nil {
		return fmt.Errorf("read controllers of cgroup %s: %w", pdir, err)
	}
	for _, c := range sessionControllers {
		if !slices.Contains(strings.Fields(string(avail)), c) {
			return fmt.Errorf("cgroup %s lacks the %s controller: enable it in its parent's cgroup.subtree_control or pass a cgroup parent that has it", pdir, c)
		}
	}
	enabled, _ := os.ReadFile(filepath.Join(pdir, subtreeControlFile))
	var missing []string
	for _, c := range sessionControllers {
		if !slices.Contains(strings.Fields(string(enabled)), c) {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		if err := cs.enableV2(prefix, pdir, missing); err != nil {
			return err
		}
	}
	for _, r := range layout.held() {
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
				if err := t.write(dir, cpuMaxFile, fmt.Sprintf("%d %d", int(quota*cfsPeriod), cfsPeriod)); err != nil {
					return err
				}
				cs.cpuStat = filepath.Join(dir, cpuStatFile)
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
	procs, err := procsOf(pdir)
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
		if err := t.moveHere(leaf); err != nil {
			return err
		}
		cs.v2Parent, cs.v2Leaf = pdir, leaf
	}
	if err := t.write(pdir, subtreeControlFile, toggle(enable, controllers)); err != nil {
		return err
	}
	cs.v2Parent, cs.v2Enabled = pdir, controllers
	return nil
}

// isRootCgroup says whether a v2 directory is the hierarchy's root, the
// one cgroup without a cgroup.type, which may hand controllers to its
// children while it holds processes.
func isRootCgroup(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, typeFile))
	return errors.Is(err, os.ErrNotExist)
}

// leaveV2 undoes what make did to this process's own cgroup: it takes
// back the controllers handed to its children, and moves this process
// back out of its leaf or the systemd scope and stops the scope.
func (cs *cgroupSet) leaveV2() []error {
	t := cs.t
	var errs []error
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
			if err = t.moveHere(dir); err == nil {
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
	return errs
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
	if err := t.write(parent, subtreeControlFile, toggle(disable, controllers)); err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENODEV) {
			// Gone since it was listed, or going (the kernel answers
			// ENODEV for a cgroup being removed): systemd prunes a
			// scope whose last cgroup was just removed, and what was
			// handed to its children goes with it.
			return false, nil
		}
		return false, err
	}
	return true, nil
}

func (cgroupV2) effectiveCPUs() string { return effectiveCPUsV2 }

// kill writes cgroup.kill, which the kernel applies to the whole cgroup
// at once.
func (cgroupV2) kill(t *cgroupTree, dir string) bool { return t.write(dir, killFile, "1") == nil }

func (cgroupV2) peakControl() string { return memoryPeakFile }

// resetPeak resets the peak through a descriptor of memory.peak kept
// open, or where the kernel cannot, by making the cgroup afresh.
func (cgroupV2) resetPeak(cs *cgroupSet, dir string) error {
	// Linux 6.12 on: a write to memory.peak starts the peak afresh for
	// what is read through the same descriptor, whatever runs in the
	// cgroup.
	if f, err := os.OpenFile(filepath.Join(dir, memoryPeakFile), os.O_RDWR, 0); err == nil {
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
	if err := waitCgroupEmpty(dir, 2*time.Second); err != nil {
		return fmt.Errorf("reset peak memory: %w", err)
	}
	cpus, err := os.ReadFile(filepath.Join(dir, cpusFile))
	if err != nil {
		return fmt.Errorf("read cpuset of cgroup %s: %w", dir, err)
	}
	quota, _ := os.ReadFile(filepath.Join(dir, cpuMaxFile))
	if err := cs.t.remove(dir); err != nil {
		return err
	}
	if err := cs.t.mkdir(dir); err != nil {
		return err
	}
	if err := cs.t.write(dir, cpusFile, strings.TrimSpace(string(cpus))); err != nil {
		return err
	}
	if q := strings.TrimSpace(string(quota)); q != "" && !strings.HasPrefix(q, "max") {
		return cs.t.write(dir, cpuMaxFile, q)
	}
	return nil
}

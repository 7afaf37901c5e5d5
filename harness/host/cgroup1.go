package host

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// cgroup v1 (legacy and hybrid hosts): a hierarchy per controller, each
// mounted at cgroupRoot/<controller>, and a role's cgroups one in each.

// The control files of cgroup v1 a session writes or reads.
const (
	effectiveCPUsV1 = "cpuset.effective_cpus"
	cfsPeriodFile   = "cpu.cfs_period_us"
	cfsQuotaFile    = "cpu.cfs_quota_us"
	maxUsageFile    = "memory.max_usage_in_bytes"
	forceEmptyFile  = "memory.force_empty"
)

// cgroupV1 is the cgroupDriver of cgroup v1.
type cgroupV1 struct{}

var _ cgroupDriver = cgroupV1{}

// v1Mount returns the mount point of a v1 controller's hierarchy.
func (t *cgroupTree) v1Mount(controller string) (string, error) {
	p := filepath.Join(t.root, controller)
	if _, err := os.Stat(filepath.Join(p, procsFile)); err != nil {
		return "", fmt.Errorf("cgroup v1 controller %s is not mounted at %s: %w", controller, p, err)
	}
	return p, nil
}

// make makes a cgroup per role in each v1 hierarchy it uses: the cpuset
// of each, the proxy's memory and, with a quota, its cpu.
func (cgroupV1) make(cs *cgroupSet, prefix, parent string, layout Layout, quota float64) error {
	for _, r := range layout.held() {
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
				if err := cs.t.write(dir, cfsPeriodFile, strconv.Itoa(cfsPeriod)); err != nil {
					return err
				}
				if err := cs.t.write(dir, cfsQuotaFile, strconv.Itoa(int(quota*cfsPeriod))); err != nil {
					return err
				}
				cs.cpuStat = filepath.Join(dir, cpuStatFile)
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
			for _, f := range []string{cpusFile, memsFile} {
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

func (cgroupV1) effectiveCPUs() string { return effectiveCPUsV1 }

// kill cannot: v1 has no cgroup.kill.
func (cgroupV1) kill(*cgroupTree, string) bool { return false }

func (cgroupV1) peakControl() string { return maxUsageFile }

// resetPeak resets the peak to what the cgroup holds now.
func (cgroupV1) resetPeak(cs *cgroupSet, dir string) error {
	// Pages charged to the cgroup earlier (the proxy binary's and
	// libraries' page cache, read first by a config check or an
	// earlier run) would count in every later peak; with no process
	// left in it the kernel can move them out, so that each run's
	// peak is what its proxy used, as a fresh cgroup gives on v2.
	if pids, err := procsOf(dir); err == nil && len(pids) == 0 {
		_ = cs.t.write(dir, forceEmptyFile, "0")
	}
	return cs.t.write(dir, maxUsageFile, "0")
}

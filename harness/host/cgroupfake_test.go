package host

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// fakeKernel is a cgroup hierarchy in a temporary directory with the
// kernel's rules for what the harness does to it: a new cgroup gets the
// control files of the controllers its parent hands on; a process is in
// one cgroup of a hierarchy at a time; on v2 a cgroup other than the root
// that hands controllers on holds no process, and hands on only what it
// has; a cpuset's processes run on the CPUs it asks for as far as the
// cgroups above allow (v2), or it may ask only for its parent's (v1); a
// cgroup with children or processes cannot be removed; a control file
// that is not there cannot be written.
type fakeKernel struct {
	t    *testing.T
	root string
	v2   bool
}

// v1Hierarchies are the v1 hierarchies a fake v1 kernel mounts.
var v1Hierarchies = []string{"cpuset", "cpu", "memory"}

func newFakeKernel(t *testing.T, v2 bool) *fakeKernel {
	k := &fakeKernel{t: t, root: t.TempDir(), v2: v2}
	if v2 {
		k.put(k.root, "cgroup.controllers", "cpuset cpu io memory pids")
		k.put(k.root, "cgroup.subtree_control", "")
		k.put(k.root, "cgroup.procs", "")
		k.put(k.root, "cpuset.cpus.effective", "0-7")
		k.put(k.root, "cpuset.mems.effective", "0")
		return k
	}
	for _, h := range v1Hierarchies {
		dir := filepath.Join(k.root, h)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		k.populate(dir)
		if h == "cpuset" {
			k.put(dir, "cpuset.cpus", "0-7")
			k.put(dir, "cpuset.effective_cpus", "0-7")
			k.put(dir, "cpuset.mems", "0")
		}
	}
	return k
}

// tree is the hierarchy as a process with PID pid in cgroup own sees it.
func (k *fakeKernel) tree(pid int, own map[string]string, systemd delegator) *cgroupTree {
	version := 1
	if k.v2 {
		version = 2
	}
	return &cgroupTree{root: k.root, version: version, own: own, pid: pid, fs: k, systemd: systemd}
}

func (k *fakeKernel) put(dir, file, value string) {
	k.t.Helper()
	if err := os.WriteFile(filepath.Join(dir, file), []byte(value), 0o644); err != nil {
		k.t.Fatal(err)
	}
}

func (k *fakeKernel) get(dir, file string) string {
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// add makes a cgroup (and its parents) at path holding pids, as the
// system set it up before the harness ran; on v2 its parents hand it the
// controllers listed.
func (k *fakeKernel) add(path string, controllers string, pids ...int) string {
	k.t.Helper()
	dir := k.root
	for _, part := range strings.Split(strings.Trim(path, "/"), "/") {
		if k.v2 && controllers != "" {
			k.setSubtree(dir, controllers)
		}
		dir = filepath.Join(dir, part)
		if _, err := os.Stat(dir); err != nil {
			if err := k.mkdir(dir); err != nil {
				k.t.Fatal(err)
			}
		}
	}
	for _, p := range pids {
		k.movePID(dir, strconv.Itoa(p))
	}
	return dir
}

// setSubtree sets what a v2 cgroup hands on, which is what its children
// have: they get the control files of the controllers handed on, and lose
// those of the others.
func (k *fakeKernel) setSubtree(dir, controllers string) {
	k.put(dir, "cgroup.subtree_control", controllers)
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		child := filepath.Join(dir, e.Name())
		k.put(child, "cgroup.controllers", controllers)
		for _, c := range v1Hierarchies {
			if slices.Contains(strings.Fields(controllers), c) {
				k.populateController(child, c)
			} else {
				files, _ := filepath.Glob(filepath.Join(child, c+".*"))
				for _, f := range files {
					os.Remove(f)
				}
			}
		}
	}
}

// hierarchy is the v1 hierarchy dir is in ("" on v2).
func (k *fakeKernel) hierarchy(dir string) string {
	if k.v2 {
		return ""
	}
	rel, _ := filepath.Rel(k.root, dir)
	h, _, _ := strings.Cut(rel, "/")
	return h
}

// populate writes the control files the kernel gives a new cgroup.
func (k *fakeKernel) populate(dir string) {
	k.put(dir, "cgroup.procs", "")
	var controllers []string
	if k.v2 {
		k.put(dir, "cgroup.type", "domain")
		k.put(dir, "cgroup.subtree_control", "")
		k.put(dir, "cgroup.kill", "")
		controllers = strings.Fields(k.get(filepath.Dir(dir), "cgroup.subtree_control"))
		k.put(dir, "cgroup.controllers", strings.Join(controllers, " "))
	} else {
		controllers = []string{k.hierarchy(dir)}
	}
	for _, c := range controllers {
		k.populateController(dir, c)
	}
}

// populateController writes the control files of a controller a cgroup
// gets, unless it has them.
func (k *fakeKernel) populateController(dir, c string) {
	if files, _ := filepath.Glob(filepath.Join(dir, c+".*")); len(files) > 0 {
		return
	}
	switch c {
	case "cpuset":
		k.put(dir, "cpuset.cpus", "")
		k.put(dir, "cpuset.mems", "")
		// A v2 cpuset that asks for nothing runs on the CPUs above it;
		// a v1 one has none until given some.
		if k.v2 {
			k.put(dir, "cpuset.cpus.effective", k.effectiveAbove(dir))
		} else {
			k.put(dir, "cpuset.effective_cpus", "")
		}
	case "cpu":
		k.put(dir, "cpu.stat", "nr_periods 0\nnr_throttled 0\n")
		if k.v2 {
			k.put(dir, "cpu.max", "max 100000")
		} else {
			k.put(dir, "cpu.cfs_period_us", "100000")
			k.put(dir, "cpu.cfs_quota_us", "-1")
		}
	case "memory":
		if k.v2 {
			k.put(dir, "memory.peak", "0")
		} else {
			k.put(dir, "memory.max_usage_in_bytes", "0")
			k.put(dir, "memory.force_empty", "")
		}
	}
}

// effectiveAbove is the CPUs the cgroups above a v2 cgroup allow: the
// nearest cpuset's effective CPUs (the root's at the top).
func (k *fakeKernel) effectiveAbove(dir string) string {
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "cpuset.cpus.effective")); err == nil || d == k.root {
			return k.get(d, "cpuset.cpus.effective")
		}
	}
}

// setCPUs writes a cpuset's CPUs as the kernel takes them. v2 runs a
// cpuset's processes on what it asks for as far as the cgroups above
// allow, on all they allow when that leaves none, and works the change
// down to the cpusets beneath; v1 refuses CPUs its parent lacks.
func (k *fakeKernel) setCPUs(dir, value string) error {
	if !k.v2 {
		if dir != filepath.Join(k.root, "cpuset") {
			have, _ := parseCPUList(k.get(filepath.Dir(dir), "cpuset.cpus"))
			want, err := parseCPUList(value)
			if err != nil {
				return syscall.EINVAL
			}
			for _, c := range want {
				if !slices.Contains(have, c) {
					return syscall.EACCES
				}
			}
		}
		k.put(dir, "cpuset.cpus", value)
		k.put(dir, "cpuset.effective_cpus", value)
		return nil
	}
	k.put(dir, "cpuset.cpus", value)
	return filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if _, err := os.Stat(filepath.Join(p, "cpuset.cpus")); err != nil {
			return nil
		}
		allowed, _ := parseCPUList(k.effectiveAbove(p))
		asked, _ := parseCPUList(k.get(p, "cpuset.cpus"))
		eff := slices.DeleteFunc(slices.Clone(asked), func(c int) bool { return !slices.Contains(allowed, c) })
		if len(eff) == 0 {
			eff = allowed
		}
		k.put(p, "cpuset.cpus.effective", CPUList(eff))
		return nil
	})
}

func (k *fakeKernel) mkdir(dir string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	k.populate(dir)
	return nil
}

func (k *fakeKernel) rmdir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			return syscall.EBUSY
		}
	}
	if k.get(dir, "cgroup.procs") != "" {
		return syscall.EBUSY
	}
	return os.RemoveAll(dir)
}

func (k *fakeKernel) write(dir, file, value string) error {
	path := filepath.Join(dir, file)
	if _, err := os.Stat(path); err != nil {
		return err // no such control file: the controller is not there
	}
	switch file {
	case "cgroup.procs":
		if k.v2 && k.get(dir, "cgroup.subtree_control") != "" && !isRootCgroup(dir) {
			return syscall.EBUSY // no internal processes
		}
		if !k.v2 && k.hierarchy(dir) == "cpuset" && (k.get(dir, "cpuset.cpus") == "" || k.get(dir, "cpuset.mems") == "") {
			return syscall.ENOSPC
		}
		k.movePID(dir, value)
		return nil
	case "cpuset.cpus":
		return k.setCPUs(dir, value)
	case "cgroup.kill":
		k.put(dir, "cgroup.procs", "")
		return nil
	case "cgroup.subtree_control":
		on := strings.Fields(k.get(dir, file))
		have := strings.Fields(k.get(dir, "cgroup.controllers"))
		for _, tok := range strings.Fields(value) {
			c := tok[1:]
			switch tok[0] {
			case '+':
				if !slices.Contains(have, c) {
					return syscall.ENOENT
				}
				if k.get(dir, "cgroup.procs") != "" && !isRootCgroup(dir) {
					return syscall.EBUSY
				}
				if !slices.Contains(on, c) {
					on = append(on, c)
				}
			case '-':
				on = slices.DeleteFunc(on, func(s string) bool { return s == c })
			default:
				return syscall.EINVAL
			}
		}
		k.setSubtree(dir, strings.Join(on, " "))
		return nil
	}
	k.put(dir, file, value)
	return nil
}

// movePID takes a process out of every cgroup of dir's hierarchy and puts
// it in dir.
func (k *fakeKernel) movePID(dir, pid string) {
	top := filepath.Join(k.root, k.hierarchy(dir))
	filepath.WalkDir(top, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "cgroup.procs" {
			return err
		}
		pids := strings.Fields(k.get(filepath.Dir(p), "cgroup.procs"))
		pids = slices.DeleteFunc(pids, func(s string) bool { return s == pid })
		k.put(filepath.Dir(p), "cgroup.procs", strings.Join(pids, "\n"))
		return nil
	})
	pids := append(strings.Fields(k.get(dir, "cgroup.procs")), pid)
	k.put(dir, "cgroup.procs", strings.Join(pids, "\n"))
}

// cgroupOf is the cgroup of a hierarchy that holds pid, relative to the
// hierarchy's root; "" when none does.
func (k *fakeKernel) cgroupOf(hierarchy string, pid int) string {
	top := filepath.Join(k.root, hierarchy)
	var found string
	filepath.WalkDir(top, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "cgroup.procs" && slices.Contains(strings.Fields(k.get(filepath.Dir(p), "cgroup.procs")), strconv.Itoa(pid)) {
			rel, _ := filepath.Rel(top, filepath.Dir(p))
			found = "/" + strings.TrimPrefix(rel, ".")
		}
		return nil
	})
	return found
}

// named lists the directories of the hierarchy whose name starts with
// prefix.
func (k *fakeKernel) named(prefix string) []string {
	var out []string
	filepath.WalkDir(k.root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && strings.HasPrefix(d.Name(), prefix) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// fakeSystemd delegates scopes in a fake v2 hierarchy as systemd does: it
// enables every controller from the root down to the slice asked for,
// makes the scope there and moves the process into it; stopping a scope
// ends what is in it and removes its cgroups. fail makes every call fail
// (systemd out of reach); failJob and failRead make delegate fail once
// it took the request, the process in the scope: the scope's start job
// failed, its cgroup could not be read.
type fakeSystemd struct {
	k        *fakeKernel
	units    map[string]string // unit -> cgroup directory
	asked    []scopeRequest
	stopped  []string
	draining map[string]bool // units being stopped
	// leave: a stopped unit's cgroup stays, as systemd leaves a scope
	// that stopped by itself while cgroups inside it were being removed.
	leave    bool
	fail     error
	failJob  error
	failRead error
}

func newFakeSystemd(k *fakeKernel) *fakeSystemd {
	return &fakeSystemd{k: k, units: map[string]string{}, draining: map[string]bool{}}
}

// slicePath is where systemd puts a slice: foo-bar.slice in foo.slice,
// in the root slice, "-.slice" (systemd.slice(5)).
func slicePath(slice string) string {
	name := strings.TrimSuffix(slice, ".slice")
	if name == "-" {
		return "/"
	}
	path := ""
	parts := strings.Split(name, "-")
	for i := range parts {
		path += "/" + strings.Join(parts[:i+1], "-") + ".slice"
	}
	return path
}

func (s *fakeSystemd) delegate(req scopeRequest) (string, bool, error) {
	s.asked = append(s.asked, req)
	if s.fail != nil {
		return "", false, s.fail
	}
	if _, ok := s.units[req.unit]; ok {
		return "", false, errors.New("unit " + req.unit + " already exists")
	}
	slice := req.slice
	if slice == "" {
		slice = "system.slice"
	}
	var plus []string
	for _, c := range strings.Fields(s.k.get(s.k.root, "cgroup.controllers")) {
		plus = append(plus, "+"+c)
	}
	dir := s.k.root
	for _, part := range append(strings.Split(strings.Trim(slicePath(slice), "/"), "/"), "") {
		if err := s.k.write(dir, "cgroup.subtree_control", strings.Join(plus, " ")); err != nil {
			return "", false, err
		}
		if part == "" {
			break
		}
		dir = filepath.Join(dir, part)
		if _, err := os.Stat(dir); err != nil {
			if err := s.k.mkdir(dir); err != nil {
				return "", false, err
			}
		}
	}
	dir = filepath.Join(dir, req.unit)
	if err := s.k.mkdir(dir); err != nil {
		return "", false, err
	}
	s.k.movePID(dir, strconv.Itoa(req.pid))
	s.units[req.unit] = dir
	if s.failJob != nil {
		return "", true, s.failJob
	}
	if s.failRead != nil {
		return "", true, s.failRead
	}
	rel, _ := filepath.Rel(s.k.root, dir)
	return "/" + rel, true, nil
}

func (s *fakeSystemd) stopping(unit string) (bool, error) {
	if s.fail != nil {
		return false, s.fail
	}
	return s.draining[unit], nil
}

func (s *fakeSystemd) stop(unit string) (bool, error) {
	if s.fail != nil {
		return false, s.fail
	}
	dir, ok := s.units[unit]
	if !ok {
		return false, nil
	}
	delete(s.units, unit)
	s.stopped = append(s.stopped, unit)
	if s.leave {
		return true, nil
	}
	return true, os.RemoveAll(dir)
}

package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// DefaultPrefix starts the name of everything a session makes.
const DefaultPrefix = "bench-"

// runBase is where the lock and the run directories live.
const runBase = "/run"

// Config says how to build a Host.
type Config struct {
	// Prefix starts every namespace, link, cgroup and run directory name
	// ("" = DefaultPrefix); lower-case letters, digits and dashes ending
	// with a dash, at most 13 characters so that link names fit the
	// kernel's 15.
	Prefix string
	// Layout assigns CPUs to the roles; a zero Layout means DefaultLayout
	// of the online CPUs.
	Layout Layout
	// ProxyCPUQuota caps the proxy's cgroup at this many CPUs (0 = no
	// cap; 0.5 = half a CPU): cpu.max on v2, cpu.cfs_quota_us on v1.
	ProxyCPUQuota float64
	// CgroupParent is the cgroup path, in each hierarchy, the role
	// cgroups are made beneath ("" = on cgroup v2 under systemd, a scope
	// systemd delegates to the session; elsewhere this process's own
	// cgroup).
	CgroupParent string
	// Own says the host is one of its own, holding only the roles its
	// Layout gives CPUs, in its own network: no namespaces or links, its
	// processes on the host's own interfaces (a host of a hosts file,
	// driven by an Agent). Its Layout names no default.
	Own bool
	// scope is the systemd scope's name where one is asked for ("":
	// scopeUnit of the prefix; an agent's is agentScope).
	scope string
	// Hosts puts the roles on hosts of their own, a hosts file's lines,
	// each held through an agent (Deploy) over the ssh SSHOf gives it;
	// this machine then holds none, and Layout and Own are not read.
	Hosts Hosts
	SSHOf func(Destination) SSH
	// RunDir is the session's private directory for logs and files ("" =
	// a new directory /run/<prefix>run-<random>, mode 0700, removed by
	// Close).
	RunDir string
}

// Host is the kernel state of one session: three network namespaces
// linked by two veth pairs, a cgroup per role, a run directory, the
// processes started in them, and the lock that keeps a second session
// with the same prefix out. Make it with New; Close undoes all of it.
type Host struct {
	prefix   string
	layout   Layout
	own      bool
	runDir   string
	ownRun   bool
	lock     *os.File
	cgroups  *cgroupSet
	nsMade   []Role
	stale    []string // what New removed that a killed session had left
	procsMu  sync.Mutex
	procs    map[*Proc]struct{} // started and not yet reaped
	logNames map[string]int
	closed   bool
	closeErr error
	// ownPipes are the pipes the proxy held when it became ready (see
	// ProxyReady).
	pipesMu  sync.Mutex
	ownPipes map[uint64]bool
	// affinity is the harness's CPU affinity before New pinned it
	// (see pinSelf); pinned says whether it did.
	affinity unix.CPUSet
	pinned   bool
	// sampling is what the tests change in the samplers it starts, and
	// kill, when set (by the tests), replaces syscall.Kill in what its
	// processes are signalled with.
	sampling samplerHooks
	kill     func(pid int, sig syscall.Signal) error
	// remotes are the hosts of their own holding the roles, by role, and
	// placed every host an agent was deployed to (spread.go).
	remotes map[Role]*placed
	placed  []*placed
	// clients are the client hosts, where several share the load, in
	// the file's order; remotes holds the first.
	clients []*placed
	addrs   Addrs // the hosts' (Addrs)
	// root is the run directory's, which the files brought back from
	// the hosts are written through; follows counts the processes on
	// them still followed (spreadrun.go).
	root    *os.Root
	follows sync.WaitGroup
}

// newHooks are what the tests change in New; the zero value is the real
// thing.
type newHooks struct {
	// geteuid, when set, replaces os.Geteuid.
	geteuid func() int
	// afterLinks, when set, runs between moving the links and
	// configuring the namespaces; the tests make it fail to check what a
	// failed New leaves.
	afterLinks func() error
}

// root says whether New runs as root.
func (k newHooks) root() bool {
	if k.geteuid != nil {
		return k.geteuid() == 0
	}
	return os.Geteuid() == 0
}

// lockState is what the lock file records, for Clean to find a killed
// session's state.
type lockState struct {
	PID     int      `json:"pid"`
	RunDir  string   `json:"run_dir,omitempty"`
	OwnRun  bool     `json:"own_run,omitempty"`
	Cgroups []string `json:"cgroups,omitempty"`
	// V2Parent and V2Enabled: on cgroup v2, the controllers the session
	// enabled in the parent's cgroup.subtree_control, for Clean to take
	// back.
	V2Parent  string   `json:"v2_parent,omitempty"`
	V2Enabled []string `json:"v2_enabled,omitempty"`
	// Unit is the systemd scope the cgroups are in, for Clean to stop.
	Unit string `json:"unit,omitempty"`
}

// prefixRE is what a prefix may be. It ends with a dash, and no name a
// prefix makes has a dash past it but a run directory's, whose "run-" is
// followed by 8 hex digits, a length no other name's rest has: a name of
// one prefix is never a name of another, even of one that starts with
// it ("bench-" and "bench-run-"), so that cleaning one never reaches
// another's.
var prefixRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,11}-$`)

// validatePrefix checks a prefix fits link names and file names, and
// makes names no other prefix makes.
func validatePrefix(prefix string) error {
	if !prefixRE.MatchString(prefix) {
		return fmt.Errorf("prefix %q: want 2 to 13 lower-case letters, digits or dashes, ending with a dash (link names are at most 15 characters; the dash keeps one prefix's names from another's)", prefix)
	}
	return nil
}

// runDirRE is the name of a run directory past its prefix.
var runDirRE = regexp.MustCompile(`^run-[0-9a-f]{8}$`)

// runDirs returns the run directories of a prefix in base: exactly the
// names makeRunDir gives, not those of another prefix that starts with
// this one.
func runDirs(base, prefix string) []string {
	entries, _ := os.ReadDir(base)
	var dirs []string
	for _, e := range entries {
		if rest, ok := strings.CutPrefix(e.Name(), prefix); ok && runDirRE.MatchString(rest) {
			dirs = append(dirs, filepath.Join(base, e.Name()))
		}
	}
	return dirs
}

// validateLayout checks a layout against the online CPUs.
func validateLayout(l Layout, online []int) error {
	_, err := ParseLayout(l.String(), online)
	if err != nil {
		return err
	}
	for _, r := range roles {
		if len(l.cpus(r)) == 0 {
			return fmt.Errorf("cpu layout %s: no CPUs for %s", l, r)
		}
	}
	return nil
}

// Check validates the configuration against the online CPUs, filling in
// the default prefix and layout: what New checks before it creates
// anything, for callers that want the errors before they show a plan.
func (c *Config) Check(online []int) error {
	if c.Prefix == "" {
		c.Prefix = DefaultPrefix
	}
	if err := validatePrefix(c.Prefix); err != nil {
		return err
	}
	if len(c.Hosts.Lines) > 0 {
		if c.SSHOf == nil {
			return errors.New("hosts of their own and no ssh to reach them")
		}
		return nil
	}
	if c.Own {
		return c.checkOwn(online)
	}
	if len(c.Layout.Client)+len(c.Layout.Proxy)+len(c.Layout.Origin) == 0 {
		l, err := DefaultLayout(online)
		if err != nil {
			return err
		}
		c.Layout = l
	} else if err := validateLayout(c.Layout, online); err != nil {
		return err
	}
	if c.ProxyCPUQuota < 0 || c.ProxyCPUQuota > float64(len(c.Layout.Proxy)) {
		return fmt.Errorf("proxy cpu quota %g: want 0 (none) up to the proxy's %d CPUs", c.ProxyCPUQuota, len(c.Layout.Proxy))
	}
	return nil
}

// New checks its input, takes the prefix's lock, pins this process to
// the client's CPUs until Close (see pinSelf), removes what a killed
// session with the same prefix left, and builds the topology and the
// cgroups. A second Host with the same prefix refuses while the first is
// open. On error it undoes its own work.
func New(cfg Config) (*Host, error) {
	return newHost(cfg, newHooks{})
}

// newHost is New with the tests' hooks.
func newHost(cfg Config, hooks newHooks) (_ *Host, err error) {
	online, err := OnlineCPUs()
	if err != nil {
		return nil, err
	}
	if err := cfg.Check(online); err != nil {
		return nil, err
	}
	if !hooks.root() {
		return nil, errors.New("not root: network namespaces and cgroups need root; run with sudo")
	}
	h := &Host{prefix: cfg.Prefix, layout: cfg.Layout, own: cfg.Own, logNames: map[string]int{}, procs: map[*Proc]struct{}{}}
	if h.lock, err = takeLock(cfg.Prefix); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, h.Close())
		}
	}()
	if len(cfg.Hosts.Lines) > 0 {
		return h.newSpread(cfg)
	}
	if h.affinity, err = pinSelf(harnessCPUs(cfg.Layout, online, cfg.Own)); err != nil {
		return nil, err
	}
	h.pinned = true
	if h.stale, err = clean(cfg.Prefix); err != nil {
		return nil, fmt.Errorf("remove what an earlier session left: %w", err)
	}
	if err := h.makeRunDir(cfg.RunDir); err != nil {
		return nil, err
	}
	tree, err := hostTree()
	if err != nil {
		return nil, err
	}
	tree.scope = cfg.scope
	if h.cgroups, err = newCgroupSet(tree, cfg.Prefix, cfg.CgroupParent, cfg.Layout, cfg.ProxyCPUQuota); err != nil {
		return nil, err
	}
	// Moving into a cpuset (a delegated scope, a leaf) resets a process's
	// affinity on kernels before 6.2: pinned again.
	if _, err := pinSelf(harnessCPUs(cfg.Layout, online, cfg.Own)); err != nil {
		return nil, err
	}
	if err := h.saveState(); err != nil {
		return nil, err
	}
	if cfg.Own {
		return h, nil
	}
	h.nsMade = roles
	if err := buildTopology(cfg.Prefix, h.Namespace, cfg.Layout, hooks.afterLinks); err != nil {
		return nil, err
	}
	return h, nil
}

// lockPath returns the lock file of a prefix.
func lockPath(prefix string) string {
	return filepath.Join(runBase, prefix+"lock")
}

// ForgetPrefix removes the lock file of a prefix used once, as tests do,
// so that it leaves nothing in /run. A session never unlinks its lock (a
// process that opened the old file could then lock it beside a new one);
// this takes the lock first, so no session holds it while it goes.
func ForgetPrefix(prefix string) error {
	f, err := takeLock(prefix)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := os.Remove(lockPath(prefix)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove lock: %w", err)
	}
	return nil
}

// ErrPrefixBusy is the error of a host whose prefix a running session
// holds.
var ErrPrefixBusy = errors.New("prefix in use")

// takeLock takes the prefix's lock without waiting.
func takeLock(prefix string) (*os.File, error) {
	p := lockPath(prefix)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", p, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			holder := "another process"
			if st, rerr := readLockState(p); rerr == nil && st.PID > 0 {
				holder = "process " + strconv.Itoa(st.PID)
			}
			return nil, fmt.Errorf("%w: a session with prefix %q is running (%s holds %s)", ErrPrefixBusy, prefix, holder, p)
		}
		return nil, fmt.Errorf("lock %s: %w", p, err)
	}
	return f, nil
}

// readLockState reads what a session recorded in its lock file.
func readLockState(p string) (lockState, error) {
	var st lockState
	b, err := os.ReadFile(p)
	if err != nil {
		return st, err
	}
	if len(b) == 0 {
		return st, nil
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("%s: %w", p, err)
	}
	return st, nil
}

// saveState records in the lock file where this session's state is.
func (h *Host) saveState() error {
	st := lockState{PID: os.Getpid(), RunDir: h.runDir, OwnRun: h.ownRun}
	if h.cgroups != nil {
		st.Cgroups = slices.Clone(h.cgroups.made)
		if len(h.cgroups.v2Enabled) > 0 {
			st.V2Parent, st.V2Enabled = h.cgroups.v2Parent, slices.Clone(h.cgroups.v2Enabled)
		}
		st.Unit = h.cgroups.unit
	}
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if err := h.lock.Truncate(0); err != nil {
		return fmt.Errorf("write lock %s: %w", h.lock.Name(), err)
	}
	if _, err := h.lock.WriteAt(b, 0); err != nil {
		return fmt.Errorf("write lock %s: %w", h.lock.Name(), err)
	}
	return nil
}

// makeRunDir makes the session's private run directory.
func (h *Host) makeRunDir(dir string) error {
	if dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("create run directory %s: %w", dir, err)
		}
		h.runDir = dir
		return nil
	}
	id := make([]byte, 4)
	rand.Read(id)
	h.runDir = filepath.Join(runBase, h.prefix+"run-"+hex.EncodeToString(id))
	if err := os.Mkdir(h.runDir, 0o700); err != nil {
		return fmt.Errorf("create run directory %s: %w", h.runDir, err)
	}
	h.ownRun = true
	return nil
}

// Layout returns the CPU layout the host pins the roles to.
func (h *Host) Layout() Layout { return h.layout }

// RunDir returns the session's private directory (mode 0700): process
// logs, configuration files, the origin's documents.
func (h *Host) RunDir() string { return h.runDir }

// Namespace returns the name of role r's network namespace, as `ip netns`
// lists it.
func (h *Host) Namespace(r Role) string { return h.prefix + string(r) }

// MountTmpfs mounts a tmpfs of size (the mount option: "64m") with mode
// 0755 on dir, a directory beneath the run directory: Close unmounts it
// with the run directory if Unmount did not.
func (h *Host) MountTmpfs(dir, size string) error {
	if p := h.remotes[RoleOrigin]; p != nil {
		return p.mount(dir, size)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size="+size+",mode=0755"); err != nil {
		return fmt.Errorf("mount tmpfs on %s: %w", dir, err)
	}
	return nil
}

// Unmount detaches what is mounted on dir; nothing mounted there is not
// an error.
func Unmount(dir string) error {
	if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("unmount %s: %w", dir, err)
	}
	return nil
}

// SetForwarding turns IPv4 forwarding in the proxy's namespace on (the "no
// proxy" baseline: the kernel routes between client and origin) or off.
func (h *Host) SetForwarding(on bool) error {
	if h.Spread() {
		return nil // the client reaches the origin on the hosts' network
	}
	if h.own {
		if on {
			return errors.New("no proxy across hosts of their own: the proxy's host forwards nothing")
		}
		return nil
	}
	return setForwarding(h.Namespace(RoleProxy), on)
}

// ResetPeakMemory starts the proxy's peak memory afresh; call it before
// each run's proxy starts. On cgroup v2 before Linux 6.12 it makes the
// proxy's cgroup afresh, which must then be empty: it waits up to two
// seconds for a stopped proxy's processes to go.
func (h *Host) ResetPeakMemory() error {
	if h.remotes[RoleProxy] != nil {
		return h.callProxy("ResetPeak", nil)
	}
	if !h.Holds(RoleProxy) {
		return nil
	}
	return h.cgroups.resetPeak()
}

// PeakMemory returns the proxy cgroup's peak memory in bytes since the
// last ResetPeakMemory.
func (h *Host) PeakMemory() (int64, error) {
	if h.remotes[RoleProxy] != nil {
		var peak int64
		return peak, h.callProxy("Peak", &peak)
	}
	if !h.Holds(RoleProxy) {
		return 0, nil
	}
	return h.cgroups.peak()
}

// PIDs returns the processes in role r's cgroup now.
func (h *Host) PIDs(r Role) []int {
	if p := h.remotes[r]; p != nil {
		var pids []int
		p.remote.Call(context.Background(), "PIDs", r, &pids)
		return pids
	}
	if h.cgroups == nil {
		return nil
	}
	pids, _ := h.cgroups.pids(r)
	return pids
}

// closeGrace is how long Close lets its processes end after SIGTERM.
const closeGrace = 2 * time.Second

// Close stops every process the host started and any other left in its
// cgroups, then removes the cgroups, the namespaces with their links and
// the run directory it made (unmounting what is mounted in it), and
// clears the lock. It visits everything even when a step fails, returns
// the joined errors, and is safe to call again.
func (h *Host) Close() error {
	if h == nil {
		return nil
	}
	h.procsMu.Lock()
	if h.closed {
		h.procsMu.Unlock()
		return h.closeErr
	}
	h.closed = true
	var procs []*Proc
	for p := range h.procs {
		procs = append(procs, p)
	}
	h.procsMu.Unlock()

	var errs []error
	if err := h.closeRemotes(); err != nil {
		errs = append(errs, err)
	}
	if h.root != nil {
		h.root.Close()
	}
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.Stop(closeGrace)
		}()
	}
	wg.Wait()
	h.cgroups.killProcs(time.Second)
	for _, r := range h.nsMade {
		pids := namespacePIDs(h.Namespace(r))
		killAndWait(pids, time.Second)
	}
	if err := h.cgroups.close(); err != nil {
		errs = append(errs, err)
	}
	for _, r := range h.nsMade {
		if err := deleteNamespace(h.Namespace(r)); err != nil {
			errs = append(errs, err)
		}
	}
	if h.nsMade != nil {
		if _, err := deleteHostLinks(h.prefix); err != nil {
			errs = append(errs, err)
		}
	}
	if h.ownRun && h.runDir != "" {
		if _, err := UnmountUnder(h.runDir); err != nil {
			errs = append(errs, err)
		} else if err := os.RemoveAll(h.runDir); err != nil {
			errs = append(errs, fmt.Errorf("remove run directory: %w", err))
		}
	}
	if h.lock != nil {
		// Cleared, not removed: see clearLock.
		if err := clearLock(h.lock); err != nil {
			errs = append(errs, err)
		}
		h.lock.Close()
	}
	if h.pinned {
		if err := setAffinity(h.affinity); err != nil {
			errs = append(errs, fmt.Errorf("restore the harness's CPU affinity: %w", err))
		}
	}
	h.closeErr = errors.Join(errs...)
	return h.closeErr
}

// killAndWait sends SIGKILL to pids and waits until they are gone or the
// deadline passes.
func killAndWait(pids []int, deadline time.Duration) {
	for _, pid := range pids {
		if pid > 0 && pid != os.Getpid() {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	end := time.Now().Add(deadline)
	for _, pid := range pids {
		for time.Now().Before(end) && processAlive(pid) {
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// processAlive reports whether pid exists and is not a zombie.
func processAlive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

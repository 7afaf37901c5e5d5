package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"
)

// CheckItem is one line of `bench check`.
type CheckItem struct {
	Name   string // what was checked: "root", "cgroups", "wrk"
	Status string // what was found, short: "cgroup v1 (hybrid)", "4.1.0"
	Detail string // what it means or what to do: "apt-get install wrk"
	// Advice is Detail where it names a setting of the caller, which
	// puts the setting in its own words (Advice.Text); nil otherwise.
	Advice *Advice
	// OK is false when the check failed; a failed Required item means
	// the main job cannot run.
	OK, Required bool
}

// fdReserve is what a process keeps for itself beyond its connections:
// listeners, logs, the event loop, libraries, a runtime's poller. The
// checks, the plan's scaling and bench mix's split over processes
// (ClientConns) count it.
const fdReserve = 100

// Descriptors per connection: a proxy holds the client's and the origin's
// sockets; a splicing one (haproxy) also a pipe pair for some of them,
// about half a descriptor more a connection on average; the client holds
// its own socket.
const (
	fdsCopy   = 2.0
	fdsSplice = 2.5
	fdsClient = 1.0
)

// Load is a load a session may run, as the descriptor check weighs it: its
// name and the connections it holds open.
type Load struct {
	Name  string
	Conns int
}

// CheckSystem says whether this machine can run a session, changing
// nothing: root, network namespaces, the cgroup version and controllers,
// the online CPUs and the layout a session would use (layout, or the
// default when nil), and the descriptor limit with the connections it
// allows, weighed against the largest of loads. Proxies and load tools
// are checked by CheckBinary.
func CheckSystem(layout *Layout, loads []Load) []CheckItem {
	var items []CheckItem
	root := os.Geteuid() == 0
	items = append(items, CheckItem{Name: "root", Status: yesNo(root), OK: root, Required: true,
		Detail: ifElse(root, "", "namespaces, cgroups and clean need root: sudo bench run")})
	items = append(items, checkNamespaces())
	items = append(items, checkCgroups())
	items = append(items, checkCPUs(layout)...)
	items = append(items, checkDescriptors(loads))
	items = append(items, checkLeftovers(DefaultPrefix))
	return items
}

func yesNo(b bool) string { return ifElse(b, "yes", "no") }

func ifElse(c bool, a, b string) string {
	if c {
		return a
	}
	return b
}

func checkNamespaces() CheckItem {
	it := CheckItem{Name: "network namespaces", Required: true}
	if _, err := os.Stat("/proc/self/ns/net"); err != nil {
		it.Status, it.Detail = "missing", "the kernel lacks network namespaces (CONFIG_NET_NS)"
		return it
	}
	if _, err := exec.LookPath("ip"); err != nil {
		it.Detail = "iproute2 is not needed, but `ip netns` helps to look: apt-get install iproute2"
	}
	it.Status, it.OK = "yes", true
	return it
}

func checkCgroups() CheckItem {
	t, err := hostTree()
	if err != nil {
		return CheckItem{Name: "cgroups", Required: true, Status: "unreadable", Detail: err.Error()}
	}
	return t.check()
}

// check says whether a session can make its cgroups in t, and where.
func (t *cgroupTree) check() CheckItem {
	it := CheckItem{Name: "cgroups", Required: true}
	switch t.version {
	case 1:
		it.Status = "v1 (controllers in the v1 hierarchies)"
		var missing []string
		for _, c := range sessionControllers {
			if _, err := t.v1Mount(c); err != nil {
				missing = append(missing, c)
			}
		}
		if len(missing) > 0 {
			it.Detail = "not mounted: " + strings.Join(missing, ", ")
			return it
		}
		it.Detail = fmt.Sprintf("cpuset, cpu and memory; made beneath cpuset:%s memory:%s", t.own["cpuset"], t.own["memory"])
	case 2:
		it.Status = "v2"
		// Under systemd the session's cgroups go in a scope it delegates,
		// which gets what the root cgroup has.
		dir := filepath.Join(t.root, t.own[""])
		if t.systemd != nil {
			it.Status, dir = "v2, delegated by systemd", t.root
		}
		b, err := os.ReadFile(filepath.Join(dir, controllersFile))
		if err != nil {
			it.Detail = err.Error()
			return it
		}
		var missing []string
		for _, c := range sessionControllers {
			if !slices.Contains(strings.Fields(string(b)), c) {
				missing = append(missing, c)
			}
		}
		switch {
		case len(missing) > 0 && t.systemd != nil:
			it.Detail = fmt.Sprintf("the kernel has no %s controller to delegate", strings.Join(missing, ", "))
			return it
		case len(missing) > 0:
			it.Detail = fmt.Sprintf("cgroup %s lacks %s: start bench in a delegated cgroup (systemd-run --scope -p Delegate=yes)", dir, strings.Join(missing, ", "))
			return it
		case t.systemd != nil:
			req := newScopeRequest(scopeUnit(DefaultPrefix), t.pid, t.own[""])
			where := req.unit
			if req.caller != "" {
				where += " in " + req.slice + ", bound to " + req.caller
			}
			it.Detail = "cpuset, cpu and memory in a scope systemd delegates to each session (" + where + ")"
		default:
			procs, _ := procsOf(dir)
			if len(procs) > 1 && !isRootCgroup(dir) {
				it.Advice = advise("cgroup %s holds other processes %v: start bench in a cgroup of its own or pass %s an empty one", dir, procs, SettingCgroupParent)
				it.Detail = it.Advice.Error()
				return it
			}
			it.Detail = "cpuset, cpu and memory beneath " + dir
		}
	default:
		it.Status, it.Detail = "missing", "no cgroup file system at "+t.root
		return it
	}
	it.OK = true
	return it
}

func checkCPUs(layout *Layout) []CheckItem {
	online, err := OnlineCPUs()
	if err != nil {
		return []CheckItem{{Name: "CPUs", Status: "unreadable", Detail: err.Error(), Required: true}}
	}
	items := []CheckItem{{Name: "CPUs", Status: fmt.Sprintf("%d online (%s)", len(online), CPUList(online)), OK: true, Required: true}}
	lay := CheckItem{Name: "CPU layout", Required: true}
	var l Layout
	if layout != nil {
		l = *layout
		err = validateLayout(l, online)
	} else {
		l, err = DefaultLayout(online)
	}
	if err != nil {
		lay.Status, lay.Detail = "none", err.Error()
	} else {
		lay.Status, lay.Detail, lay.OK = l.String(), l.Warning, true
	}
	return append(items, lay)
}

func checkDescriptors(loads []Load) CheckItem {
	limit, err := NofileLimit()
	if err != nil {
		return CheckItem{Name: "descriptor limit", Status: "unreadable", Detail: err.Error()}
	}
	return descriptorItem(limit, loads)
}

// NofileLimit is the hard limit of open files, which processes started by
// the harness are raised to.
func NofileLimit() (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, fmt.Errorf("descriptor limit: %w", err)
	}
	return lim.Max, nil
}

// fdNeed is the descriptors a process needs for conns connections at per
// descriptors each.
func fdNeed(conns int, per float64) int64 {
	return int64(math.Ceil(float64(conns)*per)) + fdReserve
}

// ProxyDescriptors is what a proxy needs for conns connections, splicing
// or not; ClientDescriptors what the load tool needs. bench run refuses a
// plan that needs more than the limit, bench check reports the same.
func ProxyDescriptors(conns int, splice bool) int64 {
	if splice {
		return fdNeed(conns, fdsSplice)
	}
	return fdNeed(conns, fdsCopy)
}

// ClientDescriptors is what the load tool needs for conns connections.
func ClientDescriptors(conns int) int64 { return fdNeed(conns, fdsClient) }

// ProxyConns is how many connections a proxy can hold under a descriptor
// limit, splicing or not: the number its configuration is sized for.
func ProxyConns(limit uint64, splice bool) int {
	if splice {
		return int(fdAllows(limit, fdsSplice))
	}
	return int(fdAllows(limit, fdsCopy))
}

// ClientConns is how many connections a load tool's process can hold
// under a descriptor limit (the hard one, which the Go runtime raises the
// soft one to): bench mix splits its connections over processes by it.
func ClientConns(limit uint64) int { return int(fdAllows(limit, fdsClient)) }

// fdAllows is how many connections a limit allows at per descriptors each.
func fdAllows(limit uint64, per float64) int64 {
	return max(int64(float64(int64(limit)-fdReserve)/per), 0)
}

// descriptorItem says whether the largest of loads (the catalog's) fits a
// descriptor limit (the hard one: processes a session starts are raised
// to it) in a copying proxy, a splicing one and the client, and what the
// limit allows.
func descriptorItem(limit uint64, loads []Load) CheckItem {
	it := CheckItem{Name: "descriptor limit", Status: fmt.Sprintf("hard %d", limit), OK: true}
	largest := 0
	var names []string
	for _, l := range loads {
		switch {
		case l.Conns > largest:
			largest, names = l.Conns, []string{l.Name}
		case l.Conns == largest && !slices.Contains(names, l.Name):
			names = append(names, l.Name)
		}
	}
	allows := fmt.Sprintf("it allows about %d connections through a copying proxy, %d through a splicing one (%g and %g descriptors each), %d from the client",
		fdAllows(limit, fdsCopy), fdAllows(limit, fdsSplice), fdsCopy, fdsSplice, fdAllows(limit, fdsClient))
	if largest == 0 {
		it.Detail = allows
		return it
	}
	var short []string
	for _, side := range []struct {
		name string
		per  float64
	}{{"a copying proxy", fdsCopy}, {"a splicing proxy", fdsSplice}, {"the client", fdsClient}} {
		if need := fdNeed(largest, side.per); need > int64(limit) {
			short = append(short, fmt.Sprintf("%s needs %d", side.name, need))
		}
	}
	load := fmt.Sprintf("the catalog's largest load, %d connections (%s)", largest, strings.Join(names, ", "))
	if len(short) == 0 {
		it.Detail = fmt.Sprintf("%s fits copying and splicing proxies (%d and %d descriptors); %s",
			load, fdNeed(largest, fdsCopy), fdNeed(largest, fdsSplice), allows)
		return it
	}
	it.OK = false
	it.Detail = fmt.Sprintf("%s does not fit: %s; %s: raise the hard limit (ulimit -Hn, /etc/security/limits.conf) to run them whole; a session scales them down to what fits",
		load, strings.Join(short, ", "), allows)
	return it
}

func checkLeftovers(prefix string) CheckItem {
	it := CheckItem{Name: "leftovers", Status: "none", OK: true}
	var found []string
	for _, r := range roles {
		if namespaceExists(prefix + string(r)) {
			found = append(found, "namespace "+prefix+string(r))
		}
	}
	if dirs := runDirs(runBase, prefix); len(dirs) > 0 {
		found = append(found, dirs...)
	}
	if f, err := os.OpenFile(lockPath(prefix), os.O_RDONLY, 0); err == nil {
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); errors.Is(err, syscall.EWOULDBLOCK) {
			it.Status, it.Detail = "a session is running", "its lock "+lockPath(prefix)+" is held"
			f.Close()
			return it
		}
		f.Close()
	}
	if len(found) > 0 {
		it.Status, it.OK = "from a killed session", false
		it.Detail = strings.Join(found, ", ") + ": sudo bench clean (a new session also removes them)"
	}
	return it
}

var versionRE = regexp.MustCompile(`\d+\.\d+`)

// CheckBinary looks for the program name in PATH and runs version (its
// command that prints its version; nil when it has none): the first line
// with a version number (1.2) is the version. A missing program's detail
// is install, the command that installs it; a required one's absence is a
// failure.
func CheckBinary(name string, version []string, install string, required bool) CheckItem {
	it := CheckItem{Name: name, Required: required}
	path, err := exec.LookPath(name)
	if err != nil {
		it.Status, it.Detail = "missing", install
		return it
	}
	it.Status, it.OK, it.Detail = "found (no version printed)", true, path
	for _, line := range strings.Split(CommandOutput(version), "\n") {
		if versionRE.MatchString(line) {
			it.Status = strings.Join(strings.Fields(line), " ")
			break
		}
	}
	return it
}

// CommandOutput runs argv with a short deadline and returns what it
// printed, or "" for no command: a program's version.
func CommandOutput(argv []string) string {
	if len(argv) == 0 {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = &out, &out
	runChild(cmd)
	return out.String()
}

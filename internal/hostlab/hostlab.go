// Package hostlab is the tests' lab of hosts on one machine: each host a
// network namespace of its own running its own OpenSSH server (Debian's
// openssh-server: sshd -D -f CONFIG, its own host key), reached from the
// test's namespace over a veth pair of its own, the lab's control
// network. A key made for the lab logs in as root; an ssh config of the
// lab's (ssh -F) holds the key and a known_hosts with the hosts' keys.
// Everything it makes (namespaces, links, servers) is removed when the
// test ends, however it ends.
package hostlab

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Sshd is Debian's OpenSSH server, which must be started by its path.
const Sshd = "/usr/sbin/sshd"

// Host is a host of the lab: its namespace and its address on the
// control network, where its sshd listens on port 22.
type Host struct {
	Name string // its namespace
	Addr string // its sshd's address
	// Data is its address on the lab's data network, where the hosts
	// reach each other (a switch: a bridge in a namespace of its own),
	// on its interface DataNIC.
	Data string
	pid  int
	dir  string // the lab's
}

// DataNIC is the name of a lab host's interface on the data network.
const DataNIC = "data0"

// Run is the folder that is the host's /run; Tmp its temporary
// directory (TMPDIR of its logins).
func (h *Host) Run() string { return filepath.Join(h.dir, h.Name+".run") }
func (h *Host) Tmp() string { return filepath.Join(h.dir, h.Name+".tmp") }

// Lab is a lab of hosts and the ssh config that reaches them.
type Lab struct {
	Dir    string // the lab's files: keys, configs, known_hosts
	Config string // ssh's config file for the lab (ssh -F)
	Hosts  []*Host
	prefix string
	chain  bool // made by NewChain
}

// Option changes a host of the lab as it is made.
type Option struct {
	// Unknown leaves the host's key out of the lab's known_hosts.
	Unknown bool
	// Hide are programs the host has not: each file bind-mounted over
	// with /dev/null in a mount namespace of the host's sshd.
	Hide []string
	// Down makes the host without its sshd: nothing listens at its
	// address.
	Down bool
	// RPS steers what the host receives to its CPUs (the hosts file's
	// cpus=), as a real host's NIC interrupts its own: its data NIC's
	// rps_cpus, a mask as the kernel takes it. Without it what a host
	// receives is processed on the CPU of whichever host sent it.
	RPS string
	// PAM opens the host's logins through PAM, as a host's sshd does:
	// where systemd is init, pam_systemd makes each a login session, a
	// session-N.scope of its own. Without it a login runs in the unit
	// of the test that started the host's sshd.
	PAM bool
}

// subnet is the lab's control network, a /30 a host: 10.213.N.0/30, the
// test's end .1, the host's .2. dataNet is its data network, one /24:
// the nth host 10.214.0.N; a chain's links are chainNet's /24s from
// 10.214.1.0 (see chainAddr).
const (
	subnet   = "10.213."
	dataNet  = "10.214.0."
	chainNet = "10.214."
)

// New makes a lab of len(opts) hosts, the ith as opts[i] says, joined
// on the data network by a switch. It fails the test where the machine
// cannot (not root, no sshd).
func New(t testing.TB, opts ...Option) *Lab {
	t.Helper()
	return newLab(t, false, opts)
}

// NewChain makes a lab whose hosts are joined on the data network in a
// chain, each to the next by a veth pair of its own, the hosts between
// forwarding: the network of a session on one machine, client, proxy
// and origin, where what the client sends the origin passes through the
// proxy's namespace. A host's Data is its address on its link towards
// the first host (the first's, on its link to the second); DataNIC is
// that link's end, data1 a middle host's link to the next.
func NewChain(t testing.TB, opts ...Option) *Lab {
	t.Helper()
	return newLab(t, true, opts)
}

func newLab(t testing.TB, chain bool, opts []Option) *Lab {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("the hosts' lab needs root: network namespaces and sshd")
	}
	if _, err := os.Stat(Sshd); err != nil {
		t.Fatalf("the hosts' lab needs OpenSSH's server (apt-get install openssh-server): %v", err)
	}
	if taken(subnet) {
		t.Fatalf("the machine routes %s0.0/16 already: the lab's control network would shadow it", subnet)
	}
	l := &Lab{Dir: t.TempDir(), prefix: "bl" + strconv.Itoa(os.Getpid()%100000), chain: chain}
	if !chain {
		l.makeSwitch(t)
	}
	// sshd's privilege separation wants its folder, which the package's
	// service makes at its start
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(l.Dir, "id_ed25519")
	run(t, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "bench-lab", "-f", key)
	pub, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(l.Dir, "authorized_keys"), pub, 0o600); err != nil {
		t.Fatal(err)
	}
	var known bytes.Buffer
	for i, o := range opts {
		h := l.addHost(t, i+1, o)
		if chain && i > 0 {
			l.link(t, i, l.Hosts[i-1], h, opts[i-1].RPS, o.RPS)
		}
		hostPub, err := os.ReadFile(filepath.Join(l.Dir, h.Name+".key.pub"))
		if err != nil {
			t.Fatal(err)
		}
		if !o.Unknown {
			f := strings.Fields(string(hostPub))
			fmt.Fprintf(&known, "%s %s %s\n", h.Addr, f[0], f[1])
		}
	}
	if chain {
		l.route(t)
	}
	knownHosts := filepath.Join(l.Dir, "known_hosts")
	if err := os.WriteFile(knownHosts, known.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	l.Config = filepath.Join(l.Dir, "ssh_config")
	cfg := fmt.Sprintf("Host *\n  User root\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  GlobalKnownHostsFile /dev/null\n  LogLevel ERROR\n", key, knownHosts)
	if err := os.WriteFile(l.Config, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, h := range l.Hosts {
		if h.pid != 0 {
			waitListening(t, h)
		}
	}
	return l
}

// addHost makes the nth host: its namespace, its veth pair, its host key
// and config, and its sshd unless o.Down.
func (l *Lab) addHost(t testing.TB, n int, o Option) *Host {
	t.Helper()
	h := &Host{Name: fmt.Sprintf("%s-h%d", l.prefix, n), Addr: fmt.Sprintf("%s%d.2", subnet, n), Data: fmt.Sprintf("%s%d", dataNet, n), dir: l.Dir}
	if l.chain {
		h.Data = chainAddr(max(n-1, 1), n)
	}
	l.Hosts = append(l.Hosts, h)
	outer, inner := fmt.Sprintf("%sh%da", l.prefix, n), fmt.Sprintf("%sh%db", l.prefix, n)
	run(t, "ip", "netns", "add", h.Name)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", h.Name).Run() })
	run(t, "ip", "link", "add", outer, "type", "veth", "peer", "name", inner)
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", outer).Run() })
	run(t, "ip", "link", "set", inner, "netns", h.Name)
	run(t, "ip", "addr", "add", fmt.Sprintf("%s%d.1/30", subnet, n), "dev", outer)
	run(t, "ip", "link", "set", outer, "up")
	run(t, "ip", "-n", h.Name, "addr", "add", h.Addr+"/30", "dev", inner)
	run(t, "ip", "-n", h.Name, "link", "set", inner, "up")
	run(t, "ip", "-n", h.Name, "link", "set", "lo", "up")
	if !l.chain {
		l.plug(t, h, n, o.RPS)
	}
	hostKey := filepath.Join(l.Dir, h.Name+".key")
	run(t, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", h.Name, "-f", hostKey)
	cfg := l.sshdConfig(t, h, hostKey, o.PAM)
	if o.Down {
		return h
	}
	// sshd in the host's namespace, in a mount namespace of its own
	// where the hidden programs are /dev/null, /run is the host's own
	// and /sys shows its interfaces, in a cgroup of its own: what a
	// session makes on one host (its lock, run directory, cgroups) is no
	// other's
	var script strings.Builder
	for _, p := range o.Hide {
		path, err := exec.LookPath(p)
		if err != nil {
			t.Fatalf("hide %s: %v", p, err)
		}
		fmt.Fprintf(&script, "mount --bind /dev/null '%s' && ", path)
	}
	for _, d := range []string{h.Run(), h.Tmp()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range l.cgroup(t, h) {
		fmt.Fprintf(&script, "echo $$ > '%s' && ", f)
	}
	// under systemd, its manager and the system bus in the host's /run,
	// as a host has them: the lab's hosts share the machine's systemd
	for _, d := range systemdRun() {
		fmt.Fprintf(&script, "mkdir -p '%[1]s/%[2]s' && mount --rbind '/run/%[2]s' '%[1]s/%[2]s' && ", h.Run(), d)
	}
	// a sysfs of its namespace (its interfaces, as ip netns exec mounts
	// it), the cgroup hierarchies moved back beneath it
	fmt.Fprintf(&script, "exec nsenter --net=/run/netns/'%s' -- sh -c \"mount --rbind '%s' /run && mkdir -p /run/sshd /run/.cgroup && "+
		"mount --rbind /sys/fs/cgroup /run/.cgroup && mount -t sysfs sysfs /sys && mount --move /run/.cgroup /sys/fs/cgroup && "+
		"exec '%s' -D -e -f '%s'\"", h.Name, h.Run(), Sshd, cfg)
	cmd := exec.Command("unshare", "--mount", "--propagation", "private", "--", "sh", "-c", script.String())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start sshd of %s: %v", h.Name, err)
	}
	h.pid = cmd.Process.Pid
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("sshd of %s said: %s", h.Name, stderr.String())
		}
	})
	return h
}

// sshdConfig writes the config of h's sshd, whose host key is hostKey,
// its logins through PAM where pam says, checks it with sshd -t and
// returns its path.
func (l *Lab) sshdConfig(t testing.TB, h *Host, hostKey string, pam bool) string {
	t.Helper()
	cfg := filepath.Join(l.Dir, h.Name+".sshd_config")
	usePAM := "no"
	if pam {
		usePAM = "yes"
	}
	conf := fmt.Sprintf("Port 22\nListenAddress %s\nHostKey %s\nPidFile none\nAuthorizedKeysFile %s\n"+
		"PermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM %s\nStrictModes no\n"+
		"PrintMotd no\nLogLevel ERROR\nSetEnv TMPDIR=%s\n", h.Addr, hostKey, filepath.Join(l.Dir, "authorized_keys"), usePAM, h.Tmp())
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	run(t, Sshd, "-t", "-f", cfg)
	return cfg
}

// systemdRun are the folders of /run a lab host shares with the machine
// where systemd is its init (/run/systemd/system is there): systemd's
// private socket and the system bus, which place a session's roles in
// units. None elsewhere.
func systemdRun() []string {
	if _, err := os.Stat("/run/systemd/system"); err != nil {
		return nil
	}
	return []string{"systemd", "dbus"}
}

// Processes returns the processes in h's network namespace other than its
// sshd's listener: what a session runs or left there (a connection's own
// sshd process too, while it lasts).
func (h *Host) Processes() []int {
	var want syscall.Stat_t
	if err := syscall.Stat(filepath.Join("/run/netns", h.Name), &want); err != nil {
		return nil
	}
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == h.pid {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat(filepath.Join("/proc", e.Name(), "ns", "net"), &st) == nil && st.Ino == want.Ino && st.Dev == want.Dev {
			pids = append(pids, pid)
		}
	}
	return pids
}

// makeSwitch makes the data network's switch: a namespace holding a
// bridge, which plug joins each host to.
func (l *Lab) makeSwitch(t testing.TB) {
	t.Helper()
	ns := l.prefix + "-sw"
	run(t, "ip", "netns", "add", ns)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	run(t, "ip", "-n", ns, "link", "add", "br0", "type", "bridge")
	run(t, "ip", "-n", ns, "link", "set", "br0", "up")
}

// plug joins host h, the nth, to the data network: a veth pair, its end
// in the host DataNIC with its address Data and its receive queue
// steered by the mask rps (when there is one), the other on the
// switch's bridge.
func (l *Lab) plug(t testing.TB, h *Host, n int, rps string) {
	t.Helper()
	ns, port := l.prefix+"-sw", fmt.Sprintf("p%d", n)
	run(t, "ip", "-n", h.Name, "link", "add", DataNIC, "type", "veth", "peer", "name", port, "netns", ns)
	run(t, "ip", "-n", ns, "link", "set", port, "master", "br0")
	run(t, "ip", "-n", ns, "link", "set", port, "up")
	run(t, "ip", "-n", h.Name, "addr", "add", h.Data+"/24", "dev", DataNIC)
	run(t, "ip", "-n", h.Name, "link", "set", DataNIC, "up")
	steer(t, h, DataNIC, rps)
}

// steer sets the mask rps (none: nothing) on the receive queue of h's
// interface nic.
func steer(t testing.TB, h *Host, nic, rps string) {
	t.Helper()
	if rps != "" {
		run(t, "ip", "netns", "exec", h.Name, "sh", "-c",
			fmt.Sprintf("echo %s > /sys/class/net/%s/queues/rx-0/rps_cpus", rps, nic))
	}
}

// chainAddr is the address of the nth host on the kth link of a chain
// (the link between hosts k and k+1): 10.214.k.n.
func chainAddr(k, n int) string { return fmt.Sprintf("%s%d.%d", chainNet, k, n) }

// link joins a, the kth host of a chain, to b, the next: a veth pair,
// DataNIC in b, a's DataNIC when it is the first host and data1
// otherwise, each end's receive queue steered by its host's mask (when
// there is one).
func (l *Lab) link(t testing.TB, k int, a, b *Host, aRPS, bRPS string) {
	t.Helper()
	aNIC := "data1"
	if k == 1 {
		aNIC = DataNIC
	}
	run(t, "ip", "-n", a.Name, "link", "add", aNIC, "type", "veth", "peer", "name", DataNIC, "netns", b.Name)
	for _, e := range []struct {
		h        *Host
		nic, rps string
		n        int
	}{{a, aNIC, aRPS, k}, {b, DataNIC, bRPS, k + 1}} {
		run(t, "ip", "-n", e.h.Name, "addr", "add", chainAddr(k, e.n)+"/24", "dev", e.nic)
		run(t, "ip", "-n", e.h.Name, "link", "set", e.nic, "up")
		steer(t, e.h, e.nic, e.rps)
	}
}

// route makes every host of a chain reach the links it is not on through
// its neighbours, and the hosts between forward.
func (l *Lab) route(t testing.TB) {
	t.Helper()
	for i, h := range l.Hosts {
		n := i + 1 // on links n-1 and n
		for k := 1; k < len(l.Hosts); k++ {
			switch {
			case k < n-1:
				run(t, "ip", "-n", h.Name, "route", "add", chainAddr(k, 0)+"/24", "via", chainAddr(n-1, n-1))
			case k > n:
				run(t, "ip", "-n", h.Name, "route", "add", chainAddr(k, 0)+"/24", "via", chainAddr(n, n+1))
			}
		}
		if n > 1 && n < len(l.Hosts) {
			run(t, "ip", "netns", "exec", h.Name, "sysctl", "-qw", "net.ipv4.ip_forward=1")
		}
	}
}

// cgroupControllers are the v1 hierarchies a session's roles use: the
// lab host's sshd is in a cgroup of its own in each.
var cgroupControllers = []string{"cpuset", "memory", "cpu"}

// cgroup makes h's cgroups beneath the test's own, a cpuset with every
// CPU and memory node of its parent's, and returns their cgroup.procs
// files, for its sshd to join; they are removed when the test ends. On
// cgroup v2 the host shares the test's (none is made).
func (l *Lab) cgroup(t testing.TB, h *Host) []string {
	t.Helper()
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, line := range strings.Split(string(own), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		for _, c := range strings.Split(f[1], ",") {
			if !slices.Contains(cgroupControllers, c) {
				continue
			}
			parent := filepath.Join("/sys/fs/cgroup", c, f[2])
			dir := filepath.Join(parent, h.Name)
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { removeCgroup(dir) })
			if c == "cpuset" {
				for _, file := range []string{"cpuset.cpus", "cpuset.mems"} {
					v, err := os.ReadFile(filepath.Join(parent, file))
					if err == nil {
						err = os.WriteFile(filepath.Join(dir, file), v, 0)
					}
					if err != nil {
						t.Fatal(err)
					}
				}
			}
			files = append(files, filepath.Join(dir, "cgroup.procs"))
		}
	}
	return files
}

// removeCgroup removes a lab host's cgroup once its processes are gone
// (its sshd is killed first; its connections' processes follow).
func removeCgroup(dir string) {
	for range 100 {
		if os.Remove(dir) == nil || errors.Is(os.Remove(dir), os.ErrNotExist) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitListening waits until h's sshd answers on port 22.
func waitListening(t testing.TB, h *Host) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", net.JoinHostPort(h.Addr, "22"), time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("sshd of %s does not listen at %s:22: %v", h.Name, h.Addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// taken reports whether the machine has an address or a route in
// prefix's /16 already (another lab's, or a network of its own).
func taken(prefix string) bool {
	out, _ := exec.Command("ip", "-4", "route", "show", "table", "all").Output()
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && strings.HasPrefix(f[0], prefix) || len(f) > 1 && f[0] == "local" && strings.HasPrefix(f[1], prefix) {
			return true
		}
	}
	return false
}

func run(t testing.TB, argv ...string) {
	t.Helper()
	if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v: %s", strings.Join(argv, " "), err, out)
	}
}

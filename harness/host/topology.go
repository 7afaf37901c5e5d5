package host

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// The addresses of the reference results' topology. They exist only inside the
// namespaces a Host makes.
const (
	ClientAddr      = "10.0.1.2" // the client's end of the client link
	ProxyClientAddr = "10.0.1.1" // the proxy's end facing the client
	ProxyOriginAddr = "10.0.2.1" // the proxy's end facing the origin
	OriginAddr      = "10.0.2.2" // the origin's end of the origin link
)

// linkMTU is the reference results' MTU on both veth pairs.
const linkMTU = 1500

// maxLinkName is the kernel's limit on a link name (IFNAMSIZ - 1).
const maxLinkName = 15

// end is one end of a veth pair: its name, where it lives, its address
// and the CPUs that handle what it receives.
type end struct {
	role Role
	name string
	addr string // with its prefix length
}

// pair is a veth pair and the route each namespace needs to reach the
// far side through the proxy.
type pair struct {
	a, b end
}

// topologyPairs returns the two veth pairs of a prefix: client-proxy and
// proxy-origin.
func topologyPairs(prefix string) []pair {
	return []pair{
		{end{RoleClient, prefix + "c", ClientAddr + "/24"}, end{RoleProxy, prefix + "pc", ProxyClientAddr + "/24"}},
		{end{RoleProxy, prefix + "po", ProxyOriginAddr + "/24"}, end{RoleOrigin, prefix + "o", OriginAddr + "/24"}},
	}
}

// linkNames returns the names of every link a prefix owns.
func linkNames(prefix string) []string {
	var names []string
	for _, p := range topologyPairs(prefix) {
		names = append(names, p.a.name, p.b.name)
	}
	return names
}

// routes returns, for each role, the route that sends the far subnet
// through the proxy.
var routes = map[Role]struct{ dst, via string }{
	RoleClient: {"10.0.2.0/24", ProxyClientAddr},
	RoleOrigin: {"10.0.1.0/24", ProxyOriginAddr},
}

// rpsPath returns the file that steers what a link's first receive queue
// gets to a set of CPUs.
func rpsPath(sys, link string) string {
	return filepath.Join(sys, "class/net", link, "queues/rx-0/rps_cpus")
}

// buildTopology makes the three namespaces and the two veth pairs with
// their addresses, routes and RPS masks; afterLinks, when not nil, runs
// between moving the links and configuring the namespaces (see
// newHooks). On error it leaves behind what it made; the caller's
// teardown removes it.
func buildTopology(prefix string, nsName func(Role) string, layout Layout, afterLinks func() error) error {
	for _, r := range roles {
		if err := createNamespace(nsName(r)); err != nil {
			return err
		}
	}
	root, err := netlink.NewHandle()
	if err != nil {
		return fmt.Errorf("open netlink: %w", err)
	}
	defer root.Delete()
	for _, p := range topologyPairs(prefix) {
		veth := &netlink.Veth{
			LinkAttrs: netlink.LinkAttrs{Name: p.a.name, MTU: linkMTU},
			PeerName:  p.b.name,
			PeerMTU:   linkMTU,
		}
		if err := root.LinkAdd(veth); err != nil {
			return fmt.Errorf("create veth %s-%s: %w", p.a.name, p.b.name, err)
		}
		for _, e := range []end{p.a, p.b} {
			// The mask is written while the link is in the host's /sys;
			// it stays with the link when the link moves.
			mask := CPUMask(layout.cpus(e.role))
			if err := os.WriteFile(rpsPath("/sys", e.name), []byte(mask), 0); err != nil {
				return fmt.Errorf("set rps mask of %s to %s: %w", e.name, mask, err)
			}
			if err := moveLink(root, e.name, nsName(e.role)); err != nil {
				return err
			}
		}
	}
	if afterLinks != nil {
		if err := afterLinks(); err != nil {
			return err
		}
	}
	for _, r := range roles {
		if err := configureNamespace(prefix, r, nsName(r)); err != nil {
			return err
		}
		if err := setSysctls(nsName(r), NamespaceSysctls); err != nil {
			return err
		}
	}
	return nil
}

// moveLink moves a link of the host into a named namespace.
func moveLink(root *netlink.Handle, link, ns string) error {
	l, err := root.LinkByName(link)
	if err != nil {
		return fmt.Errorf("find link %s: %w", link, err)
	}
	h, err := netns.GetFromName(ns)
	if err != nil {
		return fmt.Errorf("open network namespace %s: %w", ns, err)
	}
	defer h.Close()
	if err := root.LinkSetNsFd(l, int(h)); err != nil {
		return fmt.Errorf("move link %s to %s: %w", link, ns, err)
	}
	return nil
}

// configureNamespace brings up the loopback and the role's links with
// their addresses, and adds the role's route.
func configureNamespace(prefix string, r Role, ns string) error {
	h, err := netns.GetFromName(ns)
	if err != nil {
		return fmt.Errorf("open network namespace %s: %w", ns, err)
	}
	defer h.Close()
	nl, err := netlink.NewHandleAt(h)
	if err != nil {
		return fmt.Errorf("open netlink in %s: %w", ns, err)
	}
	defer nl.Delete()
	lo, err := nl.LinkByName("lo")
	if err != nil {
		return fmt.Errorf("find lo in %s: %w", ns, err)
	}
	if err := nl.LinkSetUp(lo); err != nil {
		return fmt.Errorf("bring up lo in %s: %w", ns, err)
	}
	for _, p := range topologyPairs(prefix) {
		for _, e := range []end{p.a, p.b} {
			if e.role != r {
				continue
			}
			l, err := nl.LinkByName(e.name)
			if err != nil {
				return fmt.Errorf("find link %s in %s: %w", e.name, ns, err)
			}
			addr, err := netlink.ParseAddr(e.addr)
			if err != nil {
				return fmt.Errorf("parse address %s: %w", e.addr, err)
			}
			if err := nl.AddrAdd(l, addr); err != nil {
				return fmt.Errorf("add address %s to %s in %s: %w", e.addr, e.name, ns, err)
			}
			if err := nl.LinkSetUp(l); err != nil {
				return fmt.Errorf("bring up %s in %s: %w", e.name, ns, err)
			}
		}
	}
	if rt, ok := routes[r]; ok {
		_, dst, err := net.ParseCIDR(rt.dst)
		if err != nil {
			return fmt.Errorf("parse route %s: %w", rt.dst, err)
		}
		if err := nl.RouteAdd(&netlink.Route{Dst: dst, Gw: net.ParseIP(rt.via)}); err != nil {
			return fmt.Errorf("add route %s via %s in %s: %w", rt.dst, rt.via, ns, err)
		}
	}
	return nil
}

// deleteHostLinks removes links of the prefix still in the host's
// namespace (left by a session killed before it moved them); links inside
// the namespaces go with the namespaces. It returns the names it removed.
func deleteHostLinks(prefix string) ([]string, error) {
	root, err := netlink.NewHandle()
	if err != nil {
		return nil, fmt.Errorf("open netlink: %w", err)
	}
	defer root.Delete()
	// A dump interrupted by a link change elsewhere on the machine is
	// read again.
	links, err := root.LinkList()
	for try := 0; errors.Is(err, netlink.ErrDumpInterrupted) && try < 10; try++ {
		links, err = root.LinkList()
	}
	if err != nil {
		return nil, fmt.Errorf("list links: %w", err)
	}
	var removed []string
	var errs []error
	for _, l := range links {
		name := l.Attrs().Name
		if !slices.Contains(linkNames(prefix), name) {
			continue
		}
		if err := root.LinkDel(l); err != nil {
			var lnf netlink.LinkNotFoundError
			if !errors.As(err, &lnf) {
				errs = append(errs, fmt.Errorf("delete link %s: %w", name, err))
			}
			continue
		}
		removed = append(removed, "link "+name)
	}
	return removed, errors.Join(errs...)
}

// NamespaceSysctls are set in every namespace of the topology: the mix
// scenarios hold 20000 connections to one address and port, and their
// half-closed exchanges leave sockets in TIME_WAIT, so the client and the
// proxy need the whole ephemeral port range, and ports in TIME_WAIT
// reused for new connections.
var NamespaceSysctls = map[string]string{
	"net/ipv4/ip_local_port_range": "1024\t65535",
	"net/ipv4/tcp_tw_reuse":        "1",
}

// setSysctls writes the network sysctls of a namespace, named by their
// path under /proc/sys.
func setSysctls(ns string, values map[string]string) error {
	return inNamespace(ns, func() error {
		for k, v := range values {
			// /proc/sys/net shows the namespace of the thread that opens it.
			if err := os.WriteFile("/proc/sys/"+k, []byte(v), 0); err != nil {
				return fmt.Errorf("set %s=%s in %s: %w", k, v, ns, err)
			}
		}
		return nil
	})
}

// setForwarding turns IPv4 forwarding on or off in a namespace.
func setForwarding(ns string, on bool) error {
	v := "0"
	if on {
		v = "1"
	}
	return setSysctls(ns, map[string]string{"net/ipv4/ip_forward": v})
}

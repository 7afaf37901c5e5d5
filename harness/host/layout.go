package host

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Role is one of the three parts of the topology, each with a network
// namespace, a cgroup and CPUs of its own.
type Role string

// The roles of the reference results' topology.
const (
	RoleClient Role = "client" // the load tools
	RoleProxy  Role = "proxy"  // the proxy under test, alone on its CPUs
	RoleOrigin Role = "origin" // the servers the proxy reaches
)

// roles lists the roles in the order the topology and the reports use.
var roles = []Role{RoleClient, RoleProxy, RoleOrigin}

// Layout assigns CPUs to the roles. The proxy's CPUs are never shared with
// another role; the client's and the origin's may be shared with each
// other only in the fallback for small machines, which sets Warning.
type Layout struct {
	Client, Proxy, Origin []int
	// Warning says how the layout departs from the reference results' (empty when it
	// does not); the session prints it and records it in the metadata.
	Warning string
}

// cpus returns the CPUs of role r (nil for an unknown role).
func (l Layout) cpus(r Role) []int {
	switch r {
	case RoleClient:
		return l.Client
	case RoleProxy:
		return l.Proxy
	case RoleOrigin:
		return l.Origin
	}
	return nil
}

// with is the layout with role r's CPUs cpus.
func (l Layout) with(r Role, cpus []int) Layout {
	switch r {
	case RoleClient:
		l.Client = cpus
	case RoleProxy:
		l.Proxy = cpus
	case RoleOrigin:
		l.Origin = cpus
	}
	return l
}

// held returns the roles the layout gives CPUs, in the roles' order: all
// three on one machine, a host's own on a host of its own.
func (l Layout) held() []Role {
	var held []Role
	for _, r := range roles {
		if len(l.cpus(r)) > 0 {
			held = append(held, r)
		}
	}
	return held
}

// String returns the layout in the form ParseLayout reads:
// "client=0-3,proxy=4,origin=5-7".
func (l Layout) String() string {
	parts := make([]string, 0, len(roles))
	for _, r := range roles {
		parts = append(parts, string(r)+"="+CPUList(l.cpus(r)))
	}
	return strings.Join(parts, ",")
}

// onlinePath is where the kernel lists the online CPUs.
const onlinePath = "/sys/devices/system/cpu/online"

// OnlineCPUs returns the CPUs the kernel has online, in ascending order.
func OnlineCPUs() ([]int, error) {
	b, err := os.ReadFile(onlinePath)
	if err != nil {
		return nil, fmt.Errorf("read online cpus: %w", err)
	}
	cpus, err := parseCPUList(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", onlinePath, err)
	}
	return cpus, nil
}

// DefaultLayout returns the layout a session uses when none is given.
// With 8 or more online CPUs it is the reference results': client on the first four,
// proxy on the fifth, origin on the next three. Below that the proxy keeps
// a CPU of its own and the others share what is left:
//
//	2 CPUs:   client and origin on the first, proxy on the second
//	3 CPUs:   client on the first, proxy on the second, origin on the third
//	4-7 CPUs: proxy on the second, client on half of the rest, origin on
//	          the other half (client takes the odd one)
//
// Every fallback sets Warning. A single CPU cannot isolate the proxy and
// is an error.
func DefaultLayout(online []int) (Layout, error) {
	cpus := slices.Clone(online)
	slices.Sort(cpus)
	n := len(cpus)
	switch {
	case n >= 8:
		return Layout{Client: cpus[0:4], Proxy: cpus[4:5], Origin: cpus[5:8]}, nil
	case n == 2:
		return Layout{
			Client: cpus[0:1], Proxy: cpus[1:2], Origin: cpus[0:1],
			Warning: fmt.Sprintf("only 2 CPUs: client and origin share CPU %d, the proxy has CPU %d; "+
				"client or origin may set the pace (the CSV's bound column; ‡ in the tables)", cpus[0], cpus[1]),
		}, nil
	case n == 3:
		return Layout{
			Client: cpus[0:1], Proxy: cpus[1:2], Origin: cpus[2:3],
			Warning: "only 3 CPUs: client and origin have one CPU each instead of the reference layout's 4 and 3",
		}, nil
	case n >= 4:
		rest := append([]int{cpus[0]}, cpus[2:]...)
		half := (len(rest) + 1) / 2
		return Layout{
			Client: slices.Clone(rest[:half]), Proxy: cpus[1:2], Origin: slices.Clone(rest[half:]),
			Warning: fmt.Sprintf("only %d CPUs: client and origin have fewer CPUs than the reference layout's 4 and 3", n),
		}, nil
	}
	return Layout{}, fmt.Errorf("%d online CPUs: the proxy needs a CPU of its own and the others at least one more", n)
}

// ParseLayout reads a layout such as "client=0-3,proxy=4,origin=5-7" and
// checks it against the online CPUs: every role is given, every CPU is
// online, and the proxy shares none of its CPUs with the other roles. The
// client and the origin may share CPUs (then Warning says so).
func ParseLayout(spec string, online []int) (Layout, error) {
	var l Layout
	seen := map[Role]bool{}
	// A CPU list itself contains commas: a field without "=" continues
	// the previous role's list.
	fields := strings.Split(spec, ",")
	var cur Role
	lists := map[Role][]string{}
	for _, f := range fields {
		f = strings.TrimSpace(f)
		if name, list, ok := strings.Cut(f, "="); ok {
			r := Role(strings.TrimSpace(name))
			if !slices.Contains(roles, r) {
				return Layout{}, fmt.Errorf("cpu layout %q: unknown role %q (want client, proxy and origin)", spec, name)
			}
			if seen[r] {
				return Layout{}, fmt.Errorf("cpu layout %q: role %s given twice", spec, r)
			}
			seen[r] = true
			cur = r
			f = list
		} else if cur == "" {
			return Layout{}, fmt.Errorf("cpu layout %q: %q is not role=cpus", spec, f)
		}
		lists[cur] = append(lists[cur], f)
	}
	for _, r := range roles {
		if !seen[r] {
			return Layout{}, fmt.Errorf("cpu layout %q: no CPUs for %s (want e.g. client=0-3,proxy=4,origin=5-7)", spec, r)
		}
		cpus, err := parseCPUList(strings.Join(lists[r], ","))
		if err != nil {
			return Layout{}, fmt.Errorf("cpu layout %q: %s: %w", spec, r, err)
		}
		for _, c := range cpus {
			if !slices.Contains(online, c) {
				return Layout{}, fmt.Errorf("cpu layout %q: %s: CPU %d is not online (online: %s)", spec, r, c, CPUList(online))
			}
		}
		l = l.with(r, cpus)
	}
	for _, other := range []Role{RoleClient, RoleOrigin} {
		if c, ok := overlap(l.Proxy, l.cpus(other)); ok {
			return Layout{}, fmt.Errorf("cpu layout %q: CPU %d is both the proxy's and the %s's; the proxy needs CPUs of its own", spec, c, other)
		}
	}
	if c, ok := overlap(l.Client, l.Origin); ok {
		l.Warning = fmt.Sprintf("client and origin share CPU %d; they may set the pace (the CSV's bound column; ‡ in the tables)", c)
	}
	return l, nil
}

// overlap returns a CPU that is in both a and b.
func overlap(a, b []int) (int, bool) {
	for _, c := range a {
		if slices.Contains(b, c) {
			return c, true
		}
	}
	return 0, false
}

// parseCPUList reads the kernel's list format, "0-3,5,7-8", into sorted,
// distinct CPU numbers, none beyond maxCPU.
func parseCPUList(s string) ([]int, error) {
	var cpus []int
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("empty CPU list")
	}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("%q is not a CPU number or range", part)
		}
		b := a
		if isRange {
			b, err = strconv.Atoi(hi)
			if err != nil || b < a {
				return nil, fmt.Errorf("%q is not a CPU range (want low-high)", part)
			}
		}
		if b > maxCPU {
			return nil, fmt.Errorf("%q: CPU %d is beyond the kernel's %d", part, b, maxCPU)
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	slices.Sort(cpus)
	return slices.Compact(cpus), nil
}

// maxCPU is the highest CPU number a list may name: the kernel's
// NR_CPUS at its largest (8192 CPUs), so that a list read from a file
// cannot ask for a slice of any size.
const maxCPU = 8191

// CPUList writes CPUs in the kernel's list format, "0-3,5".
func CPUList(cpus []int) string {
	c := slices.Clone(cpus)
	slices.Sort(c)
	c = slices.Compact(c)
	var parts []string
	for i := 0; i < len(c); {
		j := i
		for j+1 < len(c) && c[j+1] == c[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(c[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", c[i], c[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// CPUMask returns the hexadecimal mask the kernel's rps_cpus takes,
// in comma-separated 32-bit words, most significant first.
func CPUMask(cpus []int) string {
	top := 0
	for _, c := range cpus {
		top = max(top, c)
	}
	words := make([]uint32, top/32+1)
	for _, c := range cpus {
		words[c/32] |= 1 << (c % 32)
	}
	parts := make([]string, len(words))
	for i, w := range words {
		parts[len(words)-1-i] = fmt.Sprintf("%08x", w)
	}
	return strings.Join(parts, ",")
}

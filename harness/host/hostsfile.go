package host

import (
	"bufio"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// A hosts file puts the roles on hosts of their own, each reached over
// OpenSSH (bench run --hosts FILE): a line per role and host,
//
//	ROLE DESTINATION data=ADDRESS [cpus=LIST] [nic=NAME]
//
// and # comments. ROLE is client, proxy or origin; DESTINATION is
// [user@]host[:port], as ssh reaches it; data= the address the role is
// reached at on the data path (not the SSH path); cpus= its CPUs in the
// kernel's list format (default: all of the host's but one, kept for the
// harness); nic= the interface of the data path (default: the one that
// routes to its peers). A role on several lines is several hosts (the
// client's share the load); a destination on several lines holds several
// roles. There is one proxy and one origin.

// HostLine is a line of a hosts file: a role on a host.
type HostLine struct {
	Role Role
	Dest Destination
	Data netip.Addr // the role's address on the data path
	CPUs []int      // nil: all of the host's but one
	NIC  string     // empty: the interface that routes to its peers
	Line int        // its line in the file, from 1
}

// Destination is a host as ssh reaches it: [user@]host[:port].
type Destination struct {
	User, Host string
	Port       int // 0: ssh's own (its config's, or 22)
}

// String is the destination as the file gives it.
func (d Destination) String() string {
	s := d.Host
	if d.User != "" {
		s = d.User + "@" + s
	}
	if d.Port != 0 {
		if strings.Contains(d.Host, ":") {
			s = strings.Replace(s, d.Host, "["+d.Host+"]", 1)
		}
		s += ":" + strconv.Itoa(d.Port)
	}
	return s
}

// Hosts is a hosts file read: its lines in order.
type Hosts struct {
	Name  string // the file's name, as its errors give it
	Lines []HostLine
}

// maxHostsLines bounds what a hosts file may hold: a lab of a few hosts
// a role, not an inventory.
const maxHostsLines = 256

// ParseHosts reads the hosts file name from r. Its errors name the file
// and the line ("hosts.txt:3: ...").
func ParseHosts(name string, r io.Reader) (Hosts, error) {
	h := Hosts{Name: name}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 4096)
	n := 0
	for sc.Scan() {
		n++
		text, _, _ := strings.Cut(sc.Text(), "#")
		if strings.TrimSpace(text) == "" {
			continue
		}
		if len(h.Lines) == maxHostsLines {
			return h, fmt.Errorf("%s:%d: more than %d lines of hosts", name, n, maxHostsLines)
		}
		l, err := parseHostLine(text)
		if err != nil {
			return h, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		l.Line = n
		if prev := slices.IndexFunc(h.Lines, func(p HostLine) bool { return p.Role == l.Role && p.Dest == l.Dest }); prev >= 0 {
			return h, fmt.Errorf("%s:%d: %s on %s again (line %d)", name, n, l.Role, l.Dest, h.Lines[prev].Line)
		}
		if prev := slices.IndexFunc(h.Lines, func(p HostLine) bool { return p.Data == l.Data && p.Dest != l.Dest }); prev >= 0 {
			return h, fmt.Errorf("%s:%d: data=%s is %s's too (line %d): a data address is one host's", name, n, l.Data, h.Lines[prev].Dest, h.Lines[prev].Line)
		}
		h.Lines = append(h.Lines, l)
	}
	if err := sc.Err(); err != nil {
		return h, fmt.Errorf("%s:%d: %w", name, n+1, err)
	}
	for _, role := range roles {
		switch on := h.Of(role); {
		case len(on) == 0:
			return h, fmt.Errorf("%s: no %s host: want a line \"%s DESTINATION data=ADDRESS\"", name, role, role)
		case len(on) > 1 && role != RoleClient:
			return h, fmt.Errorf("%s:%d: a second %s host (the first on line %d): a session has one %s; several client hosts share the load",
				name, on[1].Line, role, on[0].Line, role)
		}
	}
	return h, nil
}

// parseHostLine reads a line of a hosts file, its comment cut.
func parseHostLine(text string) (HostLine, error) {
	fields := strings.Fields(text)
	if len(fields) < 3 {
		return HostLine{}, fmt.Errorf("%q: want ROLE DESTINATION data=ADDRESS [cpus=LIST] [nic=NAME]", strings.TrimSpace(text))
	}
	var l HostLine
	l.Role = Role(fields[0])
	if !slices.Contains(roles, l.Role) {
		return l, fmt.Errorf("role %q: want client, proxy or origin", fields[0])
	}
	var err error
	if l.Dest, err = parseDestination(fields[1]); err != nil {
		return l, err
	}
	seen := map[string]bool{}
	for _, f := range fields[2:] {
		key, value, ok := strings.Cut(f, "=")
		switch {
		case !ok:
			return l, fmt.Errorf("%q is not key=value (data=, cpus=, nic=)", f)
		case seen[key]:
			return l, fmt.Errorf("%s= given twice", key)
		}
		seen[key] = true
		switch key {
		case "data":
			if l.Data, err = netip.ParseAddr(value); err != nil || !l.Data.IsValid() || l.Data.Zone() != "" || l.Data.IsUnspecified() || l.Data.IsMulticast() {
				return l, fmt.Errorf("data=%s: want the role's IP address on the data path, e.g. data=192.0.2.10", value)
			}
		case "cpus":
			if l.CPUs, err = parseCPUList(value); err != nil {
				return l, fmt.Errorf("cpus=%s: %w", value, err)
			}
		case "nic":
			if !validNIC(value) {
				return l, fmt.Errorf("nic=%s: want an interface's name, at most 15 characters of letters, digits, '.', '-' and '_'", value)
			}
			l.NIC = value
		default:
			return l, fmt.Errorf("unknown key %q: want data=, cpus= or nic=", key)
		}
	}
	if !l.Data.IsValid() {
		return l, fmt.Errorf("no data=ADDRESS: the address %s is reached at on the data path", l.Role)
	}
	return l, nil
}

// parseDestination reads [user@]host[:port], an IPv6 host in brackets
// with a port.
func parseDestination(s string) (Destination, error) {
	var d Destination
	bad := func(why string) (Destination, error) {
		return Destination{}, fmt.Errorf("destination %q: %s: want [user@]host[:port]", s, why)
	}
	rest := s
	if user, host, ok := strings.Cut(s, "@"); ok {
		if !validName(user, "._-") {
			return bad("not a user name")
		}
		d.User, rest = user, host
	}
	switch {
	case strings.HasPrefix(rest, "["):
		host, port, ok := strings.Cut(rest[1:], "]")
		if !ok {
			return bad("an unclosed [")
		}
		d.Host, rest = host, port
		if rest != "" && !strings.HasPrefix(rest, ":") {
			return bad("text after ]")
		}
		rest = strings.TrimPrefix(rest, ":")
	case strings.Count(rest, ":") == 1:
		d.Host, rest, _ = strings.Cut(rest, ":")
	default:
		d.Host, rest = rest, ""
	}
	if a, err := netip.ParseAddr(d.Host); err == nil {
		if a.Zone() != "" {
			return bad("a zone")
		}
	} else if !validName(d.Host, ".-_") || strings.HasPrefix(d.Host, "-") {
		return bad("not a host name or address")
	}
	if rest != "" {
		p, err := strconv.Atoi(rest)
		if err != nil || p < 1 || p > 65535 {
			return bad("port " + strconv.Quote(rest))
		}
		d.Port = p
	}
	return d, nil
}

// validName says whether s is a name of letters, digits and extra, at
// most 253 bytes: what a user's or a host's name may hold that no shell
// or ssh option reads otherwise.
func validName(s, extra string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(extra, r)) {
			return false
		}
	}
	return true
}

// validNIC says whether s is an interface's name as Linux takes it, in
// the characters a file or a command line passes on as they are.
func validNIC(s string) bool {
	return len(s) <= maxLinkName && validName(s, ".-_") && s != "." && s != ".."
}

// Of is the lines of role, in the file's order.
func (h Hosts) Of(role Role) []HostLine {
	var out []HostLine
	for _, l := range h.Lines {
		if l.Role == role {
			out = append(out, l)
		}
	}
	return out
}

// Destinations are the hosts of the file, each once, in the order of
// their first line.
func (h Hosts) Destinations() []Destination {
	var out []Destination
	for _, l := range h.Lines {
		if !slices.Contains(out, l.Dest) {
			out = append(out, l.Dest)
		}
	}
	return out
}

// RolesOf are the roles dest holds, in the order of their lines.
func (h Hosts) RolesOf(dest Destination) []HostLine {
	var out []HostLine
	for _, l := range h.Lines {
		if l.Dest == dest {
			out = append(out, l)
		}
	}
	return out
}

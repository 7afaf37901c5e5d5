package harness

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"slices"

	"bench/harness/host"
	"bench/proxies"
	"bench/scenarios"
)

// HostChecks says of each host of a hosts file whether a session can
// use it, changing nothing (bench check --hosts): reached over ssh (sshOf
// gives each host's), the programs its roles need, the CPUs its lines
// name.
func HostChecks(ctx context.Context, h host.Hosts, sshOf func(host.Destination) host.SSH) []host.CheckItem {
	return host.CheckHosts(ctx, h, sshOf, rolePrograms)
}

// HostsLack names the session's columns whose proxy the proxy's host
// has not: a packaged proxy by none of its names, as its checks (items,
// HostChecks's) found; a binary of the user's own (a columns file's
// binary=), asked of the host through sshOf:
// "squid: squid is not on root@proxy1". A host that cannot be asked is
// an error.
func HostsLack(ctx context.Context, items []host.CheckItem, hs host.Hosts, sshOf func(host.Destination) host.SSH, cols []proxies.Column) ([]string, error) {
	on := hs.Of(host.RoleProxy)
	if len(on) == 0 {
		return nil, nil
	}
	dest := on[0].Dest.String()
	ok := func(name string) bool {
		it, found := itemOf(items, name)
		return found && it.OK
	}
	var lack []string
	var own []proxies.Column // of a binary of the user's
	for _, c := range cols {
		if c.Binary != "" && c.Source != "default" {
			own = append(own, c)
			continue
		}
		for _, p := range programs {
			if p.Column == "" || p.Column != c.Kind {
				continue
			}
			// asked of the host, and found by none of its names
			names := append([]string{p.Name}, p.Also...)
			_, asked := itemOf(items, dest+": "+p.Name)
			found := slices.ContainsFunc(names, func(n string) bool { return ok(dest + ": " + n) })
			if asked && !found {
				lack = append(lack, fmt.Sprintf("%s: %s is not on %s", c.Name, p.Name, dest))
			}
		}
	}
	if len(own) == 0 || !ok(dest) { // an unreached host is refused already
		return lack, nil
	}
	var paths []string
	for _, c := range own {
		paths = append(paths, c.Binary)
	}
	f, err := sshOf(on[0].Dest).Facts(ctx, paths)
	if err != nil {
		return lack, fmt.Errorf("the columns' binaries on %s: %w", dest, err)
	}
	for _, c := range own {
		if f.Programs[c.Binary] == "" {
			lack = append(lack, fmt.Sprintf("%s: %s is not on %s", c.Name, c.Binary, dest))
		}
	}
	return lack, nil
}

// rolePrograms are the programs a role's host needs (required) and
// those a session uses where they are (optional): the client the load
// tools, the origin nginx and iperf3, the proxy the packaged proxies
// (a column of each found) and perf.
func rolePrograms(role host.Role) (required, optional []string) {
	switch role {
	case host.RoleClient:
		for _, p := range programs {
			if p.Tool {
				required = append(required, p.Name)
			}
		}
	case host.RoleOrigin:
		required = []string{scenarios.ToolNginx, scenarios.ToolIperf3}
	case host.RoleProxy:
		for _, p := range programs {
			if p.Column != "" {
				// each name it goes by (dante's sockd, stunnel4)
				optional = append(append(optional, p.Name), p.Also...)
			}
		}
		optional = append(optional, host.PerfProgram)
	}
	return required, optional
}

// HostsLabel is the label the tables give a session across hosts when
// the user gives none, as its checks (items, HostChecks's) found it: the
// proxy's host's CPU model, shortened; "" when that host was not reached.
func HostsLabel(items []host.CheckItem, hs host.Hosts) string {
	on := hs.Of(host.RoleProxy)
	if len(on) == 0 {
		return ""
	}
	it, _ := itemOf(items, on[0].Dest.String()+": "+host.MachineItem)
	return it.Status
}

// itemOf is the check item of items named name, and whether there is one.
func itemOf(items []host.CheckItem, name string) (host.CheckItem, bool) {
	i := slices.IndexFunc(items, func(it host.CheckItem) bool { return it.Name == name })
	if i < 0 {
		return host.CheckItem{}, false
	}
	return items[i], true
}

// Finder looks for the packaged proxies of a session where it runs them,
// and stats the binaries of its columns file: on this machine (the zero
// Finder), or on its proxy's host as that host's checks found them
// (ProxyHostFinder).
type Finder struct {
	host  string // the proxy's host; "" for this machine
	items []host.CheckItem
	// named: the columns are named (--proxy), and one whose proxy the
	// host has not is kept where this machine has it, for HostsLack to
	// name it missing there rather than as no column at all.
	named bool
}

// ProxyHostFinder finds a session's proxies on its proxy's host, as its
// checks (items, HostChecks's) found them.
func ProxyHostFinder(items []host.CheckItem, hs host.Hosts) Finder {
	on := hs.Of(host.RoleProxy)
	if len(on) == 0 {
		return Finder{}
	}
	return Finder{host: on[0].Dest.String(), items: items}
}

// lookPath is exec.LookPath where the proxies run.
func (f Finder) lookPath(name string) (string, error) {
	if f.host == "" {
		return exec.LookPath(name)
	}
	if it, ok := itemOf(f.items, f.host+": "+name); ok && it.OK {
		return it.Status, nil
	}
	if f.named {
		return exec.LookPath(name)
	}
	return "", fmt.Errorf("%s: not on %s", name, f.host)
}

// stat is os.Stat on this machine; nil on a host, which HostsLack asks
// for the binaries before the first run.
func (f Finder) stat() func(string) (fs.FileInfo, error) {
	if f.host != "" {
		return nil
	}
	return os.Stat
}

// on is where the proxies were looked for, for the plan: "" or " on
// HOST".
func (f Finder) on() string {
	if f.host == "" {
		return ""
	}
	return " on " + f.host
}

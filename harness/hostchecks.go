package harness

import (
	"context"
	"fmt"
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

// HostsLack names the session's columns whose packaged proxy the
// proxy's host has not by any of its names, as its checks (items,
// HostChecks's) found:
// "squid: squid is not on root@proxy1". A column of the user's own
// binary is not checked there.
func HostsLack(items []host.CheckItem, hs host.Hosts, cols []proxies.Column) []string {
	on := hs.Of(host.RoleProxy)
	if len(on) == 0 {
		return nil
	}
	dest := on[0].Dest.String()
	var lack []string
	for _, c := range cols {
		for _, p := range programs {
			if p.Column == "" || p.Column != c.Kind || c.Source != "default" {
				continue
			}
			// asked of the host, and found by none of its names
			names := append([]string{p.Name}, p.Also...)
			asked := slices.ContainsFunc(items, func(it host.CheckItem) bool { return it.Name == dest+": "+p.Name })
			found := slices.ContainsFunc(items, func(it host.CheckItem) bool {
				return it.OK && slices.ContainsFunc(names, func(n string) bool { return it.Name == dest+": "+n })
			})
			if asked && !found {
				lack = append(lack, fmt.Sprintf("%s: %s is not on %s", c.Name, p.Name, dest))
			}
		}
	}
	return lack
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

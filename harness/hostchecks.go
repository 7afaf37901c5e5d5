package harness

import (
	"context"

	"bench/harness/host"
	"bench/scenarios"
)

// HostChecks says of each host of a hosts file whether a session can
// use it, changing nothing (bench check --hosts): reached over ssh (sshOf
// gives each host's), the programs its roles need, the CPUs its lines
// name.
func HostChecks(ctx context.Context, h host.Hosts, sshOf func(host.Destination) host.SSH) []host.CheckItem {
	return host.CheckHosts(ctx, h, sshOf, rolePrograms)
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
				optional = append(optional, p.Name)
			}
		}
		optional = append(optional, host.PerfProgram)
	}
	return required, optional
}

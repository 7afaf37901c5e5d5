package harness

import (
	"bench/harness/host"
	"bench/scenarios"
)

// Checks is what `bench check` lists: the machine's checks, with the
// descriptor limit weighed against the catalog's loads, then every
// program of programs. It changes nothing.
func Checks(layout *host.Layout) []host.CheckItem {
	items := host.CheckSystem(layout, catalogLoads())
	release := osRelease()
	for _, p := range programs {
		advice := InstallAdvice(release, []string{p.Name})
		if p.Column != "" {
			advice = "no " + p.Column + " column without it; " + advice
		}
		items = append(items, host.CheckBinary(p.found(), p.Version, advice, p.Required))
	}
	return append(items, host.CheckPerf())
}

// catalogLoads is the catalog's loads as the descriptor check weighs them.
func catalogLoads() []host.Load {
	var loads []host.Load
	for _, s := range scenarios.Catalog() {
		loads = append(loads, host.Load{Name: s.Load.Name, Conns: s.Load.Conns})
	}
	return loads
}

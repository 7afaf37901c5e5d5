package harness

import (
	"strings"

	"bench/harness/host"
	"bench/proxies"
	"bench/scenarios"
)

// program is a program a session may run, and the package that installs
// it on Debian and Ubuntu.
type program struct {
	Name    string   // looked up in PATH
	Version []string // the command that prints its version; nil when it has none
	Package string   // the package(s) that install it
	// Required: no session runs without it (the load tools, the origin).
	Required bool
	// Tool: a load tool, whose version the session's metadata records.
	Tool bool
}

// programs are the load tools, the origin and the packaged proxies, in
// the order bench check lists them.
var programs = func() []program {
	ps := []program{
		{Name: scenarios.ToolWrk, Version: []string{scenarios.ToolWrk, "-v"}, Package: "wrk", Required: true, Tool: true},
		{Name: scenarios.ToolIperf3, Version: []string{scenarios.ToolIperf3, "-v"}, Package: "iperf3", Required: true, Tool: true},
		{Name: scenarios.ToolProxychains, Package: "proxychains4", Required: true, Tool: true},
		{Name: "openssl", Version: []string{"openssl", "version"}, Package: "openssl", Required: true, Tool: true},
	}
	for _, p := range proxies.PackagedProxies() {
		a, _ := proxies.Lookup(p.Kind)
		bin := p.Binaries[0]
		// nginx is the origin too: no session runs without it.
		ps = append(ps, program{Name: bin, Version: a.VersionArgv(bin), Package: p.Package, Required: bin == scenarios.ToolNginx})
	}
	return ps
}()

// Packages are the packages that install every program a session may
// run (Debian's and Ubuntu's names), as `make deps` installs them.
func Packages() []string {
	var out []string
	for _, p := range programs {
		out = append(out, strings.Fields(p.Package)...)
	}
	return out
}

// packagesFor names the packages that install the given programs; a
// program the table does not know is named as it is.
func packagesFor(names []string) []string {
	var out []string
	for _, name := range names {
		pkg := name
		for _, p := range programs {
			if p.Name == name {
				pkg = p.Package
			}
		}
		out = append(out, pkg)
	}
	return out
}

// toolVersion is the first line of a load tool's version output; for a
// tool that prints none, the version of its package.
func toolVersion(p program) string {
	argv := p.Version
	if argv == nil {
		argv = []string{"dpkg-query", "-W", "-f=${Version}", p.Package}
	}
	s, _, _ := strings.Cut(strings.TrimSpace(host.CommandOutput(argv)), "\n")
	return s
}

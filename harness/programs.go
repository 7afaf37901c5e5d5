package harness

import (
	"strings"

	"bench/harness/host"
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
var programs = []program{
	{Name: "wrk", Version: []string{"wrk", "-v"}, Package: "wrk", Required: true, Tool: true},
	{Name: "iperf3", Version: []string{"iperf3", "-v"}, Package: "iperf3", Required: true, Tool: true},
	{Name: "proxychains4", Package: "proxychains4", Required: true, Tool: true},
	{Name: "openssl", Version: []string{"openssl", "version"}, Package: "openssl", Required: true, Tool: true},
	{Name: "nginx", Version: []string{"nginx", "-v"}, Package: "nginx-light libnginx-mod-stream", Required: true},
	{Name: "haproxy", Version: []string{"haproxy", "-v"}, Package: "haproxy"},
	{Name: "squid", Version: []string{"squid", "-v"}, Package: "squid"},
	{Name: "tinyproxy", Version: []string{"tinyproxy", "-v"}, Package: "tinyproxy"},
	{Name: "danted", Version: []string{"danted", "-v"}, Package: "dante-server"},
	{Name: "stunnel4", Version: []string{"stunnel4", "-version"}, Package: "stunnel4"},
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

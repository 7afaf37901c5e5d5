package harness

import (
	"fmt"
	"os"
	"os/exec"
	"strings"

	"bench/harness/host"
	"bench/proxies"
	"bench/scenarios"
)

// program is a program a session may run; the package table (packageRows)
// names the packages that install it.
type program struct {
	Name    string   // looked up in PATH, and its row in the package table
	Also    []string // other names it goes by (dante's sockd, stunnel4)
	Version []string // the command that prints its version; nil when it has none
	// Required: no session runs without it (the load tools, the origin).
	Required bool
	// Tool: a load tool, whose version the session's metadata records.
	Tool bool
	// Column is the column a packaged proxy gives, "" for the tools.
	Column string
}

// programs are the load tools, the origin and the packaged proxies, in
// the order bench check lists them.
var programs = func() []program {
	ps := []program{
		{Name: scenarios.ToolWrk, Version: []string{scenarios.ToolWrk, "-v"}, Required: true, Tool: true},
		{Name: scenarios.ToolIperf3, Version: []string{scenarios.ToolIperf3, "-v"}, Required: true, Tool: true},
		{Name: scenarios.ToolProxychains, Required: true, Tool: true},
		{Name: "openssl", Version: []string{"openssl", "version"}, Required: true, Tool: true},
	}
	// perf profiles the proxy where a session asks (--profile=on); a
	// session without it runs, its runs' profiles absent.
	ps = append(ps, program{Name: host.PerfProgram, Version: []string{host.PerfProgram, "--version"}})
	for _, p := range proxies.PackagedProxies() {
		a, _ := proxies.Lookup(p.Kind)
		bin := p.Binaries[0]
		// nginx is the origin too: no session runs without it.
		ps = append(ps, program{Name: bin, Also: p.Binaries[1:], Version: a.VersionArgv(bin), Required: bin == scenarios.ToolNginx, Column: p.Kind})
	}
	return ps
}()

// absentProxies names the packaged proxies that are not installed, each
// with what installs it: "dante (danted: apt-get install dante-server)".
// Their columns are left out of a session; the plan says so.
func absentProxies(lookPath func(string) (string, error)) []string {
	var out []string
	for _, p := range programs {
		if _, ok := p.lookup(lookPath); p.Column != "" && !ok {
			out = append(out, fmt.Sprintf("%s (%s: %s)", p.Column, p.Name, InstallAdvice(osRelease(), []string{p.Name})))
		}
	}
	return out
}

// osRelease is the system's description, /etc/os-release; "" where there
// is none.
func osRelease() string {
	b, _ := os.ReadFile("/etc/os-release")
	return string(b)
}

// found is the name the program goes by in PATH, its first name if none.
func (p program) found() string {
	n, _ := p.lookup(exec.LookPath)
	return n
}

// lookup is the name the program goes by in PATH as lookPath finds it,
// and whether it is there at all (its first name when it is not).
func (p program) lookup(lookPath func(string) (string, error)) (string, bool) {
	for _, n := range append([]string{p.Name}, p.Also...) {
		if _, err := lookPath(n); err == nil {
			return n, true
		}
	}
	return p.Name, false
}

// toolVersion is the first line of a load tool's version output, as
// out gives it run in the client's role (perf's in the proxy's, which it
// profiles); for a tool that prints none, the version of its package.
func toolVersion(p program, out func(host.Role, []string) string) string {
	role := host.RoleClient
	if p.Name == host.PerfProgram {
		role = host.RoleProxy
	}
	argv := p.Version
	if argv == nil {
		// the system of the host that runs it
		argv = packageVersionArgv(OSFamily(out(role, []string{"cat", "/etc/os-release"})), p.Name)
	}
	s, _, _ := strings.Cut(strings.TrimSpace(out(role, argv)), "\n")
	return s
}

// packageVersionArgv is the command that prints the version of the
// package that installs program on a system of family f; nil where
// neither the family nor the program is known.
func packageVersionArgv(f Family, program string) []string {
	pkgs := programPackages(f, program)
	if len(pkgs) == 0 {
		return nil
	}
	switch f {
	case Debian:
		return []string{"dpkg-query", "-W", "-f=${Version}", pkgs[0].Name}
	case RHEL:
		return []string{"rpm", "-q", "--qf", "%{VERSION}-%{RELEASE}", pkgs[0].Name}
	}
	return nil
}

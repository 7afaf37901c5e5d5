package harness

import (
	"fmt"
	"slices"
	"strings"

	"bench/harness/host"
	"bench/proxies"
	"bench/scenarios"
)

// Family is a family of systems that install packages alike: its package
// names and its package manager.
type Family string

// The families `make deps` knows.
const (
	Debian Family = "debian" // Debian, Ubuntu: apt-get
	RHEL   Family = "rhel"   // RHEL, AlmaLinux, Rocky, CentOS Stream, Fedora: dnf
)

// families are the table's columns after the program's, in its order.
var families = []Family{Debian, RHEL}

// The package table: the packages that install the programs of a
// session, per family. Its rows are toolPackages, then the packaged
// proxies' as their adapter files declare them (proxies.PackagedProxies).
// scripts/deps, which make deps runs before anything is built and with
// no Go at hand, reads the same table from harness/packages.txt, which
// packageTableText writes: TestPackageTableFile fails while the file
// differs from it, and rewrites it with -update.

// toolPackages are the table's rows of what a session runs beside the
// proxies, and of what the host needs: nginx, the origin's server, is
// the nginx kind's row.
var toolPackages = []struct {
	Program  string // "-" for a package that installs no program of a session
	Packages proxies.Packages
}{
	{scenarios.ToolWrk, proxies.Packages{Debian: []string{"wrk"}, RHEL: []string{"wrk@epel"}}},
	{scenarios.ToolIperf3, proxies.Packages{Debian: []string{"iperf3"}, RHEL: []string{"iperf3"}}},
	{scenarios.ToolProxychains, proxies.Packages{Debian: []string{"proxychains4"}, RHEL: []string{"proxychains-ng@epel"}}},
	{"openssl", proxies.Packages{Debian: []string{"openssl"}, RHEL: []string{"openssl"}}},
	{host.PerfProgram, proxies.Packages{Debian: []string{"linux-perf"}, RHEL: []string{"perf"}}},
	{"-", proxies.Packages{Debian: []string{"iproute2"}, RHEL: []string{"iproute"}}},
	{"-", proxies.Packages{Debian: []string{"ca-certificates"}, RHEL: []string{"ca-certificates"}}},
}

// epelMark ends the name of a package that comes from EPEL on RHEL.
const epelMark = "@epel"

// pkg is a package of the table.
type pkg struct {
	Name string
	EPEL bool // from EPEL where the family is RHEL's (not on Fedora)
}

// String is the package as the table's file writes it.
func (p pkg) String() string {
	if p.EPEL {
		return p.Name + epelMark
	}
	return p.Name
}

// packageRow is a row of the table: a program, "-" for a package the host
// needs that installs none, and its packages per family.
type packageRow struct {
	Program  string
	Packages map[Family][]pkg
}

// newPackageRow is program's row with the packages declared.
func newPackageRow(program string, ps proxies.Packages) packageRow {
	r := packageRow{Program: program, Packages: map[Family][]pkg{}}
	for fam, names := range map[Family][]string{Debian: ps.Debian, RHEL: ps.RHEL} {
		for _, name := range names {
			base, epel := strings.CutSuffix(name, epelMark)
			r.Packages[fam] = append(r.Packages[fam], pkg{Name: base, EPEL: epel})
		}
	}
	return r
}

// packageRows are the table's rows: the tools', then the proxies'.
var packageRows = func() []packageRow {
	var rows []packageRow
	for _, t := range toolPackages {
		rows = append(rows, newPackageRow(t.Program, t.Packages))
	}
	for _, p := range proxies.PackagedProxies() {
		rows = append(rows, newPackageRow(p.Binaries[0], p.Packages))
	}
	return rows
}()

// packageTableHead is the head of harness/packages.txt.
const packageTableHead = `# The packages that install the programs a session runs, per family of
# systems: the one table ` + "`make deps`" + ` (scripts/deps) reads. Generated from
# harness/packages.go (the tools) and the proxies' adapter files
# (proxies/*.go, Declaration.Packages); edit those, then rewrite it with
# go test ./harness -run TestPackageTableFile -update.
#
# program: the name bench looks up in PATH ("-" for a package the host
# needs that installs no program of a session). A family's cell is its
# packages, comma-separated; "@epel" marks a package of EPEL, which
# scripts/deps enables on RHEL and its rebuilds (AlmaLinux, Rocky).
#
`

// packageTableText is harness/packages.txt: packageTableHead, then the
// rows in columns.
func packageTableText() string {
	cells := [][]string{{"# program"}}
	for _, f := range families {
		cells[0] = append(cells[0], string(f))
	}
	for _, r := range packageRows {
		row := []string{r.Program}
		for _, f := range families {
			var names []string
			for _, p := range r.Packages[f] {
				names = append(names, p.String())
			}
			row = append(row, strings.Join(names, ","))
		}
		cells = append(cells, row)
	}
	// The widths of the columns but the last: at least the file's first
	// ones, and room.
	widths := []int{16}
	for range families[1:] {
		widths = append(widths, 34)
	}
	for _, row := range cells {
		for j := range widths {
			widths[j] = max(widths[j], len(row[j])+2)
		}
	}
	var b strings.Builder
	b.WriteString(packageTableHead)
	for _, row := range cells {
		for j, w := range widths {
			fmt.Fprintf(&b, "%-*s", w, row[j])
		}
		b.WriteString(row[len(row)-1] + "\n")
	}
	return b.String()
}

// Packages are the packages of family that install every program a
// session may run and what the host needs beside them, as `make deps`
// installs them.
func Packages(f Family) []string {
	var out []string
	for _, r := range packageRows {
		for _, p := range r.Packages[f] {
			out = append(out, p.Name)
		}
	}
	return out
}

// programPackages are the packages of family f that install program;
// nil for a program the table does not know.
func programPackages(f Family, program string) []pkg {
	i := slices.IndexFunc(packageRows, func(r packageRow) bool { return r.Program == program })
	if i < 0 {
		return nil
	}
	return packageRows[i].Packages[f]
}

// OSFamily says which family the system os-release describes is of, from
// its ID and ID_LIKE, as scripts/deps decides; "" for one of neither.
func OSFamily(osRelease string) Family {
	var words []string
	for _, line := range strings.Split(osRelease, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if ok && (k == "ID" || k == "ID_LIKE") {
			words = append(words, strings.Fields(strings.Trim(v, `"'`))...)
		}
	}
	for _, w := range words {
		switch w {
		case "debian", "ubuntu":
			return Debian
		case "rhel", "centos", "fedora":
			return RHEL
		}
	}
	return ""
}

// osID is the ID of the system os-release describes.
func osID(osRelease string) string {
	for _, line := range strings.Split(osRelease, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "ID="); ok {
			return strings.Trim(v, `"'`)
		}
	}
	return ""
}

// InstallAdvice is the command that installs programs on the system
// os-release describes: "apt-get install wrk", "dnf install tinyproxy
// (from EPEL: dnf install epel-release first)"; "sudo make deps" on a
// system of no family the table knows. A program the table does not know
// is named as it is.
func InstallAdvice(osRelease string, programs []string) string {
	fam := OSFamily(osRelease)
	if fam == "" {
		return "sudo make deps"
	}
	var names []string
	epel := false
	for _, p := range programs {
		pkgs := programPackages(fam, p)
		if pkgs == nil {
			pkgs = []pkg{{Name: p}}
		}
		for _, k := range pkgs {
			names = append(names, k.Name)
			epel = epel || k.EPEL
		}
	}
	if fam == Debian {
		return "apt-get install " + strings.Join(names, " ")
	}
	s := "dnf install " + strings.Join(names, " ")
	if epel && osID(osRelease) != "fedora" {
		s += " (from EPEL: dnf install epel-release first)"
	}
	return s
}

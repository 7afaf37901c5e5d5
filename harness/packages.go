package harness

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"
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

// packageTable is the one table of the packages that install the programs
// of a session, per family; scripts/deps reads the same file.
//
//go:embed packages.txt
var packageTable string

// epelMark ends the name of a package that comes from EPEL on RHEL.
const epelMark = "@epel"

// pkg is a package of the table.
type pkg struct {
	Name string
	EPEL bool // from EPEL where the family is RHEL's (not on Fedora)
}

// packageRow is a row of the table: a program, "-" for a package the host
// needs that installs none, and its packages per family.
type packageRow struct {
	Program  string
	Packages map[Family][]pkg
}

// packageRows parses the table; a malformed table panics, which the
// tests find.
var packageRows = func() []packageRow {
	var rows []packageRow
	for i, line := range strings.Split(packageTable, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if len(f) != 1+len(families) {
			panic(fmt.Sprintf("harness/packages.txt:%d: want a program and %d families' packages", i+1, len(families)))
		}
		r := packageRow{Program: f[0], Packages: map[Family][]pkg{}}
		for j, fam := range families {
			for _, name := range strings.Split(f[1+j], ",") {
				base, epel := strings.CutSuffix(name, epelMark)
				r.Packages[fam] = append(r.Packages[fam], pkg{Name: base, EPEL: epel})
			}
		}
		rows = append(rows, r)
	}
	return rows
}()

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

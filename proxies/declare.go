package proxies

import (
	"maps"
	"slices"

	"bench/results"
)

// A kind is declared in one place, its adapter file: an init function
// there calls declare with the adapter and all that the rest of bench
// learns of the kind from it. The kinds ParseColumns knows, the default
// columns (DefaultColumns), the programs bench check looks for and the
// packages that install them (harness's package table, and
// harness/packages.txt, generated from it for make deps) and the
// report's colours (ColourSlots) all read the declarations; no other Go
// code names a kind (TestKindsNamedOnce).

// Declaration is what a kind's adapter file says of the kind.
type Declaration struct {
	Adapter Adapter
	// Place orders the kinds, lower first: in the list of known kinds
	// that errors give, and the packaged ones in bench check and in the
	// package list. No two kinds share one.
	Place int
	// Binaries are the names the kind's packaged program goes by in
	// PATH, the first the one the package list knows it by; nil for a
	// kind no distribution packages (a column names its binary).
	Binaries []string
	// Packages install the packaged program, per family of systems.
	Packages Packages
	// Columns are the columns the kind gives by default: each where one
	// of Binaries is found, with its full path, or always for a kind
	// that has none to find (direct's baseline). DefaultColumns puts
	// them in their groups' order (baseline, copy, splice), each group
	// in the kinds' Place order.
	Columns []Column
	// Colours are the slots in the report's palette of the columns named
	// so: the same colour on every page. No two columns share one.
	Colours map[string]int
}

// Packages are the packages that install a program on each family of
// systems, the names its package managers know. A name ending in "@epel"
// comes from EPEL on RHEL and its rebuilds (on Fedora, from Fedora).
type Packages struct {
	Debian []string // apt-get: Debian, Ubuntu
	RHEL   []string // dnf: RHEL, AlmaLinux, Rocky, CentOS Stream, Fedora
}

// declared are the kinds' declarations in their Place order. Each adapter
// file adds its own in an init function, which runs after every
// package-level variable is set: nothing may read declared before.
var declared []Declaration

// declare adds a kind's declaration, keeping declared in Place order.
func declare(d Declaration) {
	i, _ := slices.BinarySearchFunc(declared, d.Place, func(e Declaration, p int) int { return e.Place - p })
	declared = slices.Insert(declared, i, d)
}

// groupOrder is the order of the default columns' groups.
var groupOrder = []results.Group{results.Baseline, results.Copy, results.Splice}

// defaultColumn is a default column and the names its kind's program
// goes by.
type defaultColumn struct {
	Column
	Binaries []string
}

// defaultColumns are the kinds' default columns in the tables' order.
func defaultColumns() []defaultColumn {
	var out []defaultColumn
	for _, g := range groupOrder {
		for _, d := range declared {
			for _, c := range d.Columns {
				if c.Group == g {
					out = append(out, defaultColumn{c, d.Binaries})
				}
			}
		}
	}
	return out
}

// ColourSlots maps the names of the columns whose colour is fixed to
// their slots in the report's palette.
func ColourSlots() map[string]int {
	m := map[string]int{}
	for _, d := range declared {
		maps.Copy(m, d.Colours)
	}
	return m
}

package results

import (
	"fmt"
	"strings"
)

// Cell is a cell of the tables: a column (proxy) under a scenario, a mode
// and a load. Its runs are its repetitions; a machine's tables hold its
// cells, so the machine is not part of it.
type Cell struct {
	Proxy string
	Mode  Mode
	Load  string
}

// Cell returns the cell of the run.
func (r *Row) Cell() Cell { return Cell{Proxy: r.Proxy, Mode: r.Mode, Load: r.Load} }

// Scenario is the name of the cell's scenario (ScenarioName).
func (c Cell) Scenario() string { return ScenarioName(c.Mode, c.Load) }

// Unit is the unit of the cell's figure (UnitOf).
func (c Cell) Unit() Unit { return UnitOf(c.Mode, c.Load) }

// ScenarioName is the one name of the scenario of a load in a mode, as
// the catalog, the plan, the progress lines and the HTTPS and mix tables
// give it: "<mode>-<load>" ("http-ka-1k"), but for the mix loads, named
// as the reference tables name them: "mix-http" for load mix,
// "mix-http-3k" for load mix-3k.
func ScenarioName(mode Mode, load string) string {
	if IsMix(load) {
		return string(mode) + strings.TrimPrefix(load, "mix")
	}
	return string(mode) + "-" + load
}

// Unit is the unit of a run's figure, the one the tables rank its proxy
// by (higher is better), compare compares, --reps auto settles and the
// progress line prints.
type Unit string

// The units of the figures.
const (
	Gbits Unit = "Gbit/s"  // streams, 1 MB answers, stunnel's tunnels
	KReqs Unit = "k req/s" // other HTTP loads and the mixes: thousands of exchanges a second
	Conns Unit = "conn/s"  // handshakes: connections a second, as stunnel's page gives them
)

// UnitOf is the unit of the figure of a run of mode under load: Gbit/s
// for bulk loads and the tls-tunnel's streams, connections a second for
// handshakes, thousands of requests a second for the others.
func UnitOf(mode Mode, load string) Unit {
	switch {
	case mode == TLSTunnel || Bulk(load):
		return Gbits
	case mode == TLSHandshake:
		return Conns
	}
	return KReqs
}

// Of is run r's figure in the unit.
func (u Unit) Of(r *Row) float64 {
	switch u {
	case Gbits:
		return r.Gbps()
	case Conns:
		return r.PerSecond()
	}
	return r.PerSecond() / 1e3
}

// Format prints a figure in the unit for a line of text: "9.41 Gbit/s",
// "31.2k req/s", "1234 conn/s".
func (u Unit) Format(v float64) string {
	switch u {
	case Gbits:
		return fmt.Sprintf("%.2f %s", v, u)
	case Conns:
		return fmt.Sprintf("%.0f %s", v, u)
	}
	return fmt.Sprintf("%.1f%s", v, u)
}

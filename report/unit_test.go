package report

import (
	"bench/internal/text"
	"slices"
	"strings"
	"testing"

	"bench/results"
	"bench/scenarios"
)

// catalogRow is one ok run of a catalog scenario, with figures enough for
// every table.
func catalogRow(sc scenarios.Scenario) results.Row {
	r := results.Row{Machine: "m", Session: "s", Proxy: "p", Kind: "nginx", Group: results.Copy,
		Mode: sc.Mode, Load: sc.Load.Name, Rep: 1, Seconds: 10, Requests: 123456, Bytes: 9e9,
		CPUProxy: 5, PeakMemBytes: 5e6, Bound: results.BoundProxy, Status: results.OK}
	if sc.Load.Name == results.LoadSweep {
		// a search of one window: its confirming one, passing
		r.Note, r.OfferedRate, r.HasOffered = results.Step{Confirm: true, Pass: true}.String(), 12500, true
	}
	return r
}

// unitScenarios are the catalog's scenarios, and a sweep's of each mix
// mode the catalog has no sweep of.
func unitScenarios() []scenarios.Scenario {
	out := scenarios.Catalog()
	for _, mode := range []results.Mode{results.MixHTTP, results.MixConnect, results.MixSocks, results.MixRelay} {
		name := results.ScenarioName(mode, results.LoadSweep)
		if !slices.ContainsFunc(out, func(sc scenarios.Scenario) bool { return sc.Name == name }) {
			out = append(out, scenarios.Scenario{Name: name, Mode: mode, Load: scenarios.Load{Name: results.LoadSweep}})
		}
	}
	return out
}

// Every catalog scenario has one name, its cell one unit, and the tables
// and compare agree on both: compare's figure is the table's, in the unit
// the table's row or cell names.
func TestCatalogUnitsAgree(t *testing.T) {
	for _, sc := range unitScenarios() {
		row := catalogRow(sc)
		if got := row.Cell().Scenario(); got != sc.Name {
			t.Errorf("%s: its cell's scenario is %q", sc.Name, got)
		}
		unit := row.Cell().Unit()
		cmp, err := Compare([]results.Row{row}, []results.Row{row}, CompareOptions{})
		if err != nil || len(cmp.Cells) != 1 {
			t.Fatalf("%s: compare: %v, %d cells", sc.Name, err, len(cmp.Cells))
		}
		ch := cmp.Cells[0]
		figure := unit.Of(&row) // a sweep's: the rate its search found
		if sc.Load.Name == results.LoadSweep {
			figure = results.RateFigure(row.OfferedRate)
		}
		if ch.Unit != string(unit) || *ch.New.Median != row.Figure() || row.Figure() != figure {
			t.Errorf("%s: compare gives %g %s; the run's figure is %g %s", sc.Name, *ch.New.Median, ch.Unit, row.Figure(), unit)
		}
		tables, err := Tables([]results.Row{row}, Options{})
		if err != nil || len(tables) == 0 || len(tables[0].Rows) != 1 {
			t.Fatalf("%s: tables: %v", sc.Name, err)
		}
		tab := tables[0]
		label, cell := tab.Rows[0].Label, tab.Rows[0].Cells[0]
		fig := text.Fixed(*ch.New.Median, 1)
		switch fam := familyOf(sc.Mode, sc.Load.Name); {
		case plain(fam):
			if want := ch.Scenario + ", " + ch.Unit; label != want || cell.figure != fig {
				t.Errorf("%s: the table's row %q, cell %q; compare's %q, %s", sc.Name, label, cell.Text, want, fig)
			}
		case fam == famHTTPS || fam == famMix:
			// Gbit/s, and the exchanges a second but for a stream:
			// compare's figure is one of them
			var ok bool
			switch {
			case results.Stream(sc.Load.Name):
				ok = unit == results.Gbits && cell.figure == fig
			case unit == results.Gbits:
				ok = strings.HasPrefix(cell.figure, text.Fixed(*ch.New.Median, 2)+" (")
			default:
				ok = unit == results.KReqs && strings.HasSuffix(cell.figure, " ("+fig+"k/s)")
			}
			if label != ch.Scenario || label != sc.Name || !ok {
				t.Errorf("%s: the table's row %q, cell %q; compare's %q, %g %s", sc.Name, label, cell.figure, ch.Scenario, *ch.New.Median, unit)
			}
		case fam == famSweep:
			if want := ch.Scenario + ", " + ch.Unit; label != want || cell.figure != threeFigures(*ch.New.Median) || unit != results.KReqs {
				t.Errorf("%s: the table's row %q, cell %q; compare's %q, %g %s", sc.Name, label, cell.Text, want, *ch.New.Median, ch.Unit)
			}
		case fam == famTunnel:
			if want := text.Fixed(*ch.New.Median, 2) + " " + ch.Unit; !hasFigure(tab.Rows[0].Cells, want) || unit != results.Gbits {
				t.Errorf("%s: the table's cells %v; want one of %q", sc.Name, tab.Rows[0].Cells, want)
			}
		default:
			if tab.Columns[0] != "Connections/s" || cell.figure != text.Thousands(*ch.New.Median) || unit != results.Conns {
				t.Errorf("%s: the table's %s %q; compare's %g %s", sc.Name, tab.Columns[0], cell.Text, *ch.New.Median, ch.Unit)
			}
		}
		if !strings.HasPrefix(ch.Load, sc.Load.Name) {
			t.Errorf("%s: compare's load %q", sc.Name, ch.Load)
		}
	}
}

// hasFigure reports whether one of the cells' figure is want.
func hasFigure(cells []Cell, want string) bool {
	for _, c := range cells {
		if c.figure == want {
			return true
		}
	}
	return false
}

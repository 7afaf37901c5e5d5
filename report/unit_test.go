package report

import (
	"strings"
	"testing"

	"bench/internal/text"
	"bench/report/internal/reporttest"
	"bench/results"
)

// Every catalog scenario has one name, its cell one unit, and the tables
// print its run's figure, which compare compares (compare's
// TestCatalogUnits), in the unit the table's row or cell names.
func TestCatalogUnitsAgree(t *testing.T) {
	for _, sc := range reporttest.UnitScenarios() {
		row := reporttest.CatalogRow(sc)
		if got := row.Cell().Scenario(); got != sc.Name {
			t.Errorf("%s: its cell's scenario is %q", sc.Name, got)
		}
		unit := row.Cell().Unit()
		figure := unit.Of(&row) // a sweep's: the rate its search found
		if sc.Load.Name == results.LoadSweep {
			figure = results.RateFigure(row.OfferedRate)
		}
		if row.Figure() != figure {
			t.Errorf("%s: the run's figure is %g; its unit's %g %s", sc.Name, row.Figure(), figure, unit)
		}
		// compare gives the run's figure in its unit (compare's
		// TestCatalogUnits): the table's must be the same
		median, scenario, unitName := row.Figure(), RowLabel(sc.Mode, row.Load), string(unit)
		tables, err := Tables([]results.Row{row}, Options{})
		if err != nil || len(tables) == 0 || len(tables[0].Rows) != 1 {
			t.Fatalf("%s: tables: %v", sc.Name, err)
		}
		tab := tables[0]
		label, cell := tab.Rows[0].Label, tab.Rows[0].Cells[0]
		fig := text.Fixed(median, 1)
		switch fam := FamilyOf(sc.Mode, sc.Load.Name); {
		case plain(fam):
			if want := scenario + ", " + unitName; label != want || cell.Figure != fig {
				t.Errorf("%s: the table's row %q, cell %q; compare's %q, %s", sc.Name, label, cell.Text, want, fig)
			}
		case fam == famHTTPS || fam == FamMix:
			// Gbit/s, and the exchanges a second but for a stream:
			// compare's figure is one of them
			var ok bool
			switch {
			case results.Stream(sc.Load.Name):
				ok = unit == results.Gbits && cell.Figure == fig
			case unit == results.Gbits:
				ok = strings.HasPrefix(cell.Figure, text.Fixed(median, 2)+" (")
			default:
				ok = unit == results.KReqs && strings.HasSuffix(cell.Figure, " ("+fig+"k/s)")
			}
			if label != scenario || label != sc.Name || !ok {
				t.Errorf("%s: the table's row %q, cell %q; compare's %q, %g %s", sc.Name, label, cell.Figure, scenario, median, unit)
			}
		case fam == FamSweep:
			if want := scenario + ", " + unitName; label != want || cell.Figure != ThreeFigures(median) || unit != results.KReqs {
				t.Errorf("%s: the table's row %q, cell %q; compare's %q, %g %s", sc.Name, label, cell.Text, want, median, unitName)
			}
		case fam == FamTunnel:
			if want := text.Fixed(median, 2) + " " + unitName; !hasFigure(tab.Rows[0].Cells, want) || unit != results.Gbits {
				t.Errorf("%s: the table's cells %v; want one of %q", sc.Name, tab.Rows[0].Cells, want)
			}
		default:
			if tab.Columns[0] != "Connections/s" || cell.Figure != text.Thousands(median) || unit != results.Conns {
				t.Errorf("%s: the table's %s %q; compare's %g %s", sc.Name, tab.Columns[0], cell.Text, median, unitName)
			}
		}
	}
}

// hasFigure reports whether one of the cells' figure is want.
func hasFigure(cells []Cell, want string) bool {
	for _, c := range cells {
		if c.Figure == want {
			return true
		}
	}
	return false
}

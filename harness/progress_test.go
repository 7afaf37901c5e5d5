package harness

import (
	"strings"
	"testing"

	"bench/report"
	"bench/report/results"
	"bench/scenarios"
)

// A run's line gives its figure in the unit its table gives it.
func TestRunSummaryUnits(t *testing.T) {
	for _, c := range []struct {
		row  results.Row
		want string
	}{
		{results.Row{Mode: results.HTTP, Load: "ka-1k", Seconds: 10, Requests: 339000}, "33.9k req/s"},
		{results.Row{Mode: results.Relay, Load: "stream16", Seconds: 10, Bytes: 8e9}, "6.40 Gbit/s"},
		{results.Row{Mode: results.TLSHandshake, Load: "full", Seconds: 10, Requests: 2620}, "262 conn/s"},
	} {
		c.row.Status = results.OK
		if got := runSummary(c.row); !strings.HasPrefix(got, c.want+"  ") {
			t.Errorf("%s %s: %q; want it to begin with %q", c.row.Mode, c.row.Load, got, c.want)
		}
	}
}

// Every catalog scenario's line gives the figure compare gives its cell,
// in the same unit.
func TestRunSummaryUnitsAgreeWithReport(t *testing.T) {
	for _, sc := range scenarios.Catalog() {
		row := results.Row{Machine: "m", Session: "s", Proxy: "p", Group: results.Copy, Mode: sc.Mode, Load: sc.Load.Name,
			Rep: 1, Seconds: 10, Requests: 123456, Bytes: 9e9, Status: results.OK}
		if sc.Load.Name == results.LoadSweep {
			// a search's confirming window that passed, at the rate it
			// offered: that rate is the cell's figure
			row.OfferedRate, row.HasOffered, row.Note = 4000, true, results.Step{Confirm: true, Pass: true}.String()
			row.Requests = int64(row.OfferedRate * row.Seconds)
		}
		cmp, err := report.Compare([]results.Row{row}, []results.Row{row}, report.CompareOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ch := cmp.Cells[0]
		want := results.Unit(ch.Unit).Format(*ch.New.Median)
		if got := runSummary(row); !strings.HasPrefix(got, want+"  ") || !strings.Contains(want, ch.Unit) {
			t.Errorf("%s: %q; want it to begin with %q", sc.Name, got, want)
		}
	}
}

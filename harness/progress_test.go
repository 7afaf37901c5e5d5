package harness

import (
	"strings"
	"testing"

	"bench/report/results"
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

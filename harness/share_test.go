package harness

import (
	"strings"
	"testing"

	"bench/scenarios"
)

// A client host whose share lagged the others' fell behind where its
// CPUs were at their limit (the run fails), and was served less where
// they were not (the row says so).
func TestLagged(t *testing.T) {
	lags := []scenarios.Lag{{Host: 1, Own: 2, Whole: 11}}
	if note, err := lagged(lags, []float64{0.4, 0.97}); err == nil || note != "" || !strings.Contains(err.Error(), "client host 2 fell behind its share, its CPUs 97% busy") {
		t.Errorf("a lagging host at 97%%: %q, %v; want the run failed, naming it", note, err)
	}
	note, err := lagged(lags, []float64{0.4, 0.5})
	if err != nil || note != "client host 2 had 2.0 exchanges a connection, the load's 11.0, its CPUs 50% busy: the hosts were served unequally" {
		t.Errorf("a lagging host at 50%%: %q, %v; want a note that the hosts were served unequally", note, err)
	}
	if note, err := lagged(nil, nil); note != "" || err != nil {
		t.Errorf("no lag: %q, %v; want nothing", note, err)
	}
}

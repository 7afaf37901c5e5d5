package harness

import (
	"strings"
	"testing"

	"bench/harness/host"
)

// TestCatalogLoads: bench check weighs the descriptor limit against the
// catalog's largest loads.
func TestCatalogLoads(t *testing.T) {
	for _, it := range host.CheckSystem(nil, catalogLoads()) {
		if it.Name != "descriptor limit" {
			continue
		}
		if want := "20000 connections (mix, mix-3k)"; !strings.Contains(it.Detail, want) {
			t.Errorf("descriptor limit: %q; want it to name %q", it.Detail, want)
		}
		return
	}
	t.Errorf("no descriptor limit item")
}

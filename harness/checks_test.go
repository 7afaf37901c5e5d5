package harness

import (
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"bench/harness/host"
	"bench/harness/mix"
)

// TestCatalogLoads: bench check weighs the descriptor limit against the
// catalog's largest loads.
func TestCatalogLoads(t *testing.T) {
	for _, it := range host.CheckSystem(nil, catalogLoads()) {
		if it.Name != "descriptor limit" {
			continue
		}
		if want := "20000 connections (mix, mix-3k, sweep)"; !strings.Contains(it.Detail, want) {
			t.Errorf("descriptor limit: %q; want it to name %q", it.Detail, want)
		}
		return
	}
	t.Errorf("no descriptor limit item")
}

// bench mix splits a load over processes so that each fits the
// descriptor limit as the checks and the plan count it: one reserve.
func TestMixSplitFitsTheCheck(t *testing.T) {
	limit, err := host.NofileLimit()
	if err != nil {
		t.Fatal(err)
	}
	fit := host.ClientConns(limit) // a process's connections
	conns := []int{1, fit, fit + 1, 20000}
	// more processes than CPUs, each share just over what fits
	for k := runtime.NumCPU() + 1; k <= runtime.NumCPU()+2; k++ {
		conns = append(conns, k*fit, k*(fit+20))
	}
	for _, conns := range conns {
		if conns < 1 {
			continue
		}
		n := mix.DefaultProcs(mix.Config{Conns: conns, Rate: 3000}, fit)
		share := (conns + n - 1) / n
		if need := host.ClientDescriptors(share); uint64(need) > limit {
			t.Errorf("%d connections over %d processes: %d a process need %d descriptors; the limit is %d", conns, n, share, need, limit)
		}
	}
}

// The plan names each packaged proxy that is not installed, with the
// column it would give and what installs it; a proxy found by another of
// its names (stunnel4) is installed.
func TestAbsentProxies(t *testing.T) {
	lookPath := func(name string) (string, error) {
		if name == "danted" || name == "sockd" || name == "stunnel" {
			return "", exec.ErrNotFound
		}
		return "/usr/sbin/" + name, nil
	}
	got := absentProxies(lookPath)
	want := "dante (danted: " + InstallAdvice(osRelease(), []string{"danted"}) + ")"
	if len(got) != 1 || got[0] != want {
		t.Errorf("absentProxies = %q; want [%q]", got, want)
	}
}

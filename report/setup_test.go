package report

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/golden"
	"bench/report/internal/reporttest"
	"bench/results"
)

// setupFiles are two machines' files of one session, with their metadata.
var setupFiles = []string{
	filepath.Join("testdata", "setup", "arm-m4-2026-10-13-evening.csv"),
	filepath.Join("testdata", "setup", "intel-skylake-2026-10-13-evening.csv"),
}

// TestSetupGolden: the Setup table of two machines' metadata, in every
// format, and with one machine's metadata missing.
func TestSetupGolden(t *testing.T) {
	rows, files := reporttest.ReadSession(t, setupFiles)
	withoutIntel := []results.SessionFile{files[0], {Path: files[1].Path}}
	for _, c := range []struct {
		name   string
		format string
		files  []results.SessionFile
	}{
		{"setup.md", FormatMarkdown, files},
		{"setup.tsv", FormatTSV, files},
		{"setup.json", FormatJSON, files},
		{"setup-missing.md", FormatMarkdown, withoutIntel},
		{"setup-none.md", FormatMarkdown, []results.SessionFile{{Path: files[0].Path}, {Path: files[1].Path}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Render(&b, rows, Options{Format: c.format, Files: c.files}); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "golden", c.name), b.Bytes())
		})
	}
}

// TestSetupColumns: a column that runs an earlier column's binary has no
// row of its own (haproxy splice-auto); one a machine lacks is –; "no
// proxy" has none.
func TestSetupColumns(t *testing.T) {
	rows, _ := results.ReadFiles(setupFiles)
	files, err := results.ReadMetas(setupFiles)
	if err != nil {
		t.Fatal(err)
	}
	setups := Setups(rows, files, Options{})
	if len(setups) != 1 {
		t.Fatalf("%d Setup tables; want 1", len(setups))
	}
	labels := map[string][]string{}
	for _, r := range setups[0].Rows {
		labels[r.Label] = r.Cells
	}
	if got := strings.Join(labels["dante"], " | "); got != "1.4.3 | "+noValue {
		t.Errorf("dante: %q", got)
	}
	for _, none := range []string{"haproxy splice-auto", "no proxy"} {
		if _, ok := labels[none]; ok {
			t.Errorf("a row for %s", none)
		}
	}
	if s := Setups(rows, files, Options{Layout: LayoutCombined}); s != nil {
		t.Errorf("the combined layout has Setup tables: %+v", s)
	}
	if s := Setups(rows, nil, Options{}); s != nil {
		t.Errorf("Setup tables without files: %+v", s)
	}
}

// A host's interface in Setup: its queues counted by their steering.
func TestNICText(t *testing.T) {
	n := results.NICInfo{Name: "enp1s0", Driver: "mlx5_core", SpeedMbps: 100000, MTU: 9000,
		Queues: []string{"rx-0 rps none", "rx-1 rps none", "tx-0 xps 0", "tx-1 xps 1"}, IRQs: []string{"45 enp1s0-0 0", "46 enp1s0-1 1"}}
	want := "enp1s0: mlx5_core, 100000 Mb/s, MTU 9000, 2 rx queues RPS none, 1 tx queue XPS 0, 1 tx queue XPS 1, 2 IRQs"
	if got := nicText(n); got != want {
		t.Errorf("nicText = %q; want %q", got, want)
	}
	if got := nicText(results.NICInfo{Name: "data0", MTU: 1500}); got != "data0: MTU 1500" {
		t.Errorf("nicText of what is unknown = %q", got)
	}
}

// A host in Setup: its roles, its interface, what machine it is (where
// the metadata recorded it), its layout and clock.
func TestHostsField(t *testing.T) {
	h := results.HostInfo{Roles: []string{"proxy"}, Destination: "bench@p", Data: "192.0.2.20", Hostname: "p1", Kernel: "Linux 6.12.1 x86_64",
		Online: "0-7", Layout: "proxy=1", ClockOffsetMS: 0.31, ClockWithinMS: 0.05, NIC: results.NICInfo{Name: "enp1s0", MTU: 1500},
		Machine: &results.MachineInfo{CPUModel: "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz", Host: "Dell Inc. PowerEdge R650", CPUs: 8, MemoryBytes: 32 << 30}}
	want := "proxy on bench@p (data 192.0.2.20 on enp1s0: MTU 1500; p1, Dell Inc. PowerEdge R650, 8 CPUs (Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz), 32 GB, " +
		"Linux 6.12.1 x86_64, CPUs 0-7; proxy=1; clock +0.31 ms ± 0.05)"
	if got := hostsField(&results.Meta{Hosts: []results.HostInfo{h}}); got != want {
		t.Errorf("hostsField =\n%q; want\n%q", got, want)
	}
	h.Machine = nil // recorded before the hosts' machines were
	want = "proxy on bench@p (data 192.0.2.20 on enp1s0: MTU 1500; p1, Linux 6.12.1 x86_64, CPUs 0-7; proxy=1; clock +0.31 ms ± 0.05)"
	if got := hostsField(&results.Meta{Hosts: []results.HostInfo{h}}); got != want {
		t.Errorf("hostsField without the machine =\n%q; want\n%q", got, want)
	}
}

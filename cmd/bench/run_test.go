package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"bench/harness"
	"bench/proxies"
	"bench/report"
	"bench/scenarios"
)

// leftovers lists what carries prefix on this machine: namespaces, links,
// cgroups and processes in them.
func leftovers(t *testing.T, prefix string) []string {
	t.Helper()
	var found []string
	if ents, err := os.ReadDir("/run/netns"); err == nil {
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), prefix) {
				found = append(found, "netns "+e.Name())
			}
		}
	}
	if ents, err := os.ReadDir("/sys/class/net"); err == nil {
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), prefix) {
				found = append(found, "link "+e.Name())
			}
		}
	}
	filepath.WalkDir("/sys/fs/cgroup", func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if strings.HasPrefix(d.Name(), prefix) {
			found = append(found, "cgroup "+p)
			return filepath.SkipDir
		}
		return nil
	})
	procs, _ := filepath.Glob("/proc/[0-9]*/cgroup")
	for _, p := range procs {
		b, _ := os.ReadFile(p)
		if strings.Contains(string(b), "/"+prefix) {
			found = append(found, "process "+filepath.Base(filepath.Dir(p)))
		}
	}
	return found
}

func randomPrefix(t *testing.T) string {
	b := make([]byte, 3)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "bt-" + hex.EncodeToString(b) + "-"
}

// TestRunSession runs a short real session across the four modes with the
// packaged proxies, checks that every column that can serve a scenario's
// mode wrote an ok row, that the report renders them, and that nothing is
// left behind.
func TestRunSession(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: network namespaces and cgroups")
	}
	for _, tool := range []string{"wrk", "iperf3", "proxychains4", "nginx"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s: sudo make deps", tool)
		}
	}
	prefix := randomPrefix(t)
	out := t.TempDir()
	t.Cleanup(func() {
		harness.Clean(prefix)
		if l := leftovers(t, prefix); len(l) > 0 {
			t.Errorf("left behind: %v", l)
		}
	})
	const scenarioList = "http-ka-1k,http-ka-1m,connect-ka-1k,connect-stream1-down,socks-close-1k,socks-stream16,relay-ka-1k,relay-stream1"
	var stdout, stderr bytes.Buffer
	err := dispatch(&stdout, &stderr, []string{"run",
		"--scenario", scenarioList, "--reps", "1", "--duration", "1s", "--warmup", "300ms",
		"--out", out, "--session", "test", "--machine", "test machine", "--prefix", prefix,
	})
	t.Logf("stderr:\n%s", stderr.String())
	if err != nil {
		t.Fatalf("bench run: %v", err)
	}
	if l := leftovers(t, prefix); len(l) > 0 {
		t.Errorf("left behind after the session: %v", l)
	}

	csvPath, metaPath := harness.SessionPaths(out, "test machine", "test")
	rows, err := report.ReadFiles([]string{csvPath})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]report.Row{}
	for _, r := range rows {
		got[r.Mode+"-"+r.Load+"/"+r.Proxy] = r
	}
	scs, err := scenarios.Select(scenarioList)
	if err != nil {
		t.Fatal(err)
	}
	cols, err := loadColumns("", "")
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, s := range scs {
		for _, c := range cols {
			a, _ := proxies.Lookup(c.Kind)
			if !slices.Contains(proxies.Modes(a, c), s.Mode) {
				continue
			}
			want++
			r, ok := got[s.Name+"/"+c.Name]
			switch {
			case !ok:
				t.Errorf("%s / %s: no row", s.Name, c.Name)
			case r.Status != "ok":
				t.Errorf("%s / %s: status %s: %s", s.Name, c.Name, r.Status, r.Note)
			case r.Requests == 0 && s.Load.Tool == scenarios.ToolWrk:
				t.Errorf("%s / %s: no requests", s.Name, c.Name)
			case r.Bytes == 0:
				t.Errorf("%s / %s: no bytes", s.Name, c.Name)
			case r.CPUProxy <= 0 && c.Kind != "direct":
				t.Errorf("%s / %s: proxy CPU %g", s.Name, c.Name, r.CPUProxy)
			case r.PeakMemBytes <= 0 && c.Kind != "direct":
				t.Errorf("%s / %s: peak memory %d", s.Name, c.Name, r.PeakMemBytes)
			case r.Bound == "":
				t.Errorf("%s / %s: no bound", s.Name, c.Name)
			}
		}
	}
	if len(rows) != want {
		t.Errorf("%d rows; want %d", len(rows), want)
	}
	if _, err := harness.ReadMeta(metaPath); err != nil {
		t.Errorf("metadata: %v", err)
	}
	for _, h := range []string{"HTTP proxy", "CONNECT tunnel", "SOCKSv5 tunnel", "TCP relay"} {
		if !strings.Contains(stdout.String(), h) {
			t.Errorf("report lacks %q:\n%s", h, stdout.String())
		}
	}
}

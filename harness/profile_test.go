package harness

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"bench/harness/host"
	"bench/internal/testenv"
)

// hotLoop is a stand-in proxy whose CPU goes to a function it names.
const hotLoop = `package main

var sink uint64

//go:noinline
func benchHotLoop() {
	for i := uint64(0); ; i++ {
		sink += i * i
	}
}

func main() { benchHotLoop() }
`

// buildHotLoop builds hotLoop and returns its path.
func buildHotLoop(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(hotLoop), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "hotloop")
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, "main.go")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GO111MODULE=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build hotloop: %v\n%s", err, out)
	}
	return bin
}

// TestProfileProxyCPUs profiles a stand-in proxy that spins in a function
// it names, as a run does: perf on the proxy's CPUs, enabled over a
// window, its samples kept for the proxy's processes and written as the
// run's files. The function must hold at least 80% of the proxy's
// samples, and go tool pprof -top must read the profile and name it.
func TestProfileProxyCPUs(t *testing.T) {
	testenv.NeedRoot(t, "network namespaces, cgroups and perf on every process of a CPU")
	testenv.NeedProgram(t, host.PerfProgram)
	bin := buildHotLoop(t)
	h, err := host.New(host.Config{Prefix: testenv.Prefix(t)})
	if err != nil {
		t.Fatalf("host.New: %v", err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	proxy, err := h.Start(host.RoleProxy, host.ProcSpec{Argv: []string{bin}})
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Stop(time.Second)
	p := &profiler{}
	if p.perf, err = h.StartPerf(host.PerfSpec{Role: host.RoleProxy, Freq: profileFreq, CallGraph: profileCallGraph, Dir: filepath.Join(h.RunDir(), "perf")}); err != nil {
		t.Fatalf("StartPerf: %v", err)
	}
	defer p.close()
	p.begin(time.Now())
	time.Sleep(2 * time.Second)
	p.end(h)
	if p.absent != "" {
		t.Fatalf("profile absent: %s", p.absent)
	}
	s := &Session{OutputDir: t.TempDir()}
	note := s.keepProfile(context.Background(), p, "0001-hotloop-relay-stream16-1")
	if note == nil || note.Absent != "" || note.Samples == 0 || note.CallGraph != host.CallGraphFP {
		t.Fatalf("keepProfile = %+v; want the proxy's samples with frame pointers", note)
	}
	base := filepath.Join(s.OutputDir, "0001-hotloop-relay-stream16-1")
	folded, err := os.ReadFile(base + ".cpu.folded")
	if err != nil {
		t.Fatal(err)
	}
	var in, all int
	for line := range strings.Lines(string(folded)) {
		stack, count, _ := strings.Cut(strings.TrimSpace(line), " ")
		var n int
		for _, c := range count {
			n = n*10 + int(c-'0')
		}
		all += n
		if strings.HasSuffix(stack, ";main.benchHotLoop") {
			in += n
		}
	}
	t.Logf("main.benchHotLoop: %d of the proxy's %d samples; %d of other processes left out", in, all, note.Others)
	if all != note.Samples || float64(in) < 0.8*float64(all) {
		t.Errorf("main.benchHotLoop is the leaf of %d of the proxy's %d samples (the note counts %d); want 80%% or more:\n%s", in, all, note.Samples, folded)
	}
	out, err := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "tool", "pprof", "-top", "-sample_index=samples", base+".cpu.pb.gz").CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof -top: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("main.benchHotLoop")) {
		t.Errorf("go tool pprof -top names no main.benchHotLoop:\n%s", out)
	}
}

package harness

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"bench/harness/host"
	"bench/internal/hotproxy"
	"bench/internal/testenv"
	"bench/results"

	"bench/internal/child"
)

// TestProfileProxyCPUs profiles a stand-in proxy that spins in a function
// it names, as a run does: perf on the proxy's CPUs, enabled over a
// window, its samples kept for the proxy's processes and written as the
// run's files. The function must be on the stack of at least 80% of
// the proxy's samples, and go tool pprof -top must read the profile and name it.
func TestProfileProxyCPUs(t *testing.T) {
	testenv.NeedRoot(t, "network namespaces, cgroups and perf on every process of a CPU")
	testenv.NeedProgram(t, host.PerfProgram)
	bin := hotproxy.Build(t)
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
	s := &runner{OutputDir: t.TempDir()}
	note := s.keepProfile(context.Background(), p, "0001-hotloop-relay-stream16-1")
	if note == nil || note.Absent != "" || note.Samples == 0 || note.CallGraph != results.CallGraphFP {
		t.Fatalf("keepProfile = %+v; want the proxy's samples with frame pointers", note)
	}
	base := filepath.Join(s.OutputDir, "0001-hotloop-relay-stream16-1")
	folded, err := os.ReadFile(base + ".cpu.folded")
	if err != nil {
		t.Fatal(err)
	}
	var in, all int
	for line := range strings.Lines(string(folded)) {
		sep := strings.LastIndexByte(line, ' ')
		stack := line[:max(sep, 0)]
		n, err := strconv.Atoi(strings.TrimSpace(line[sep+1:]))
		if err != nil {
			t.Fatalf("%s: %q: %v", base+".cpu.folded", line, err)
		}
		all += n
		// On the stack: an interrupt that lands in it is its sample too.
		if strings.Contains(stack+";", ";"+hotproxy.HotFunc+";") {
			in += n
		}
	}
	t.Logf("%s: %d of the proxy's %d samples; %d of other processes left out", hotproxy.HotFunc, in, all, note.Others)
	if all != note.Samples || float64(in) < 0.8*float64(all) {
		t.Errorf("%s is on the stack of %d of the proxy's %d samples (the note counts %d); want 80%% or more:\n%s", hotproxy.HotFunc, in, all, note.Samples, folded)
	}
	out, err := child.CombinedOutput(exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "tool", "pprof", "-top", "-sample_index=samples", base+".cpu.pb.gz"))
	if err != nil {
		t.Fatalf("go tool pprof -top: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte(hotproxy.HotFunc)) {
		t.Errorf("go tool pprof -top names no %s:\n%s", hotproxy.HotFunc, out)
	}
}

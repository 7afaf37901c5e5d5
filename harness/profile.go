package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"bench/harness/host"
	"bench/profile"
	"bench/results"
)

// profileFreq is perf's rate, samples a second: 99, off the kernel's
// tick rates (100, 250, 1000 Hz) so that the samples do not beat with
// timers, as PerfKitBenchmarker's --perf_record and Istio's scripts take.
const profileFreq = 99

// profileCallGraph is how perf unwinds the stacks where the session says
// not (--call-graph): frame pointers, the cheaper; Debian's proxies,
// built without them, show their own functions as a frame under the
// kernel's and libc's, which DWARF unwinding names at a cost.
const profileCallGraph = results.CallGraphFP

// callGraph is how the session's perf unwinds the stacks.
func (s *runner) callGraph() string {
	if s.cfg.CallGraph != "" {
		return s.cfg.CallGraph
	}
	return profileCallGraph
}

// profiler is a run's profile in the making: perf recording the proxy's
// CPUs, enabled over the window, or why there is none.
type profiler struct {
	perf    *host.Perf
	enabled sync.WaitGroup
	mu      sync.Mutex
	absent  string // why the run has no profile
	pids    []int  // the proxy's processes at the window's end
}

// startProfile starts perf on the proxy's CPUs, its events disabled, where
// the session profiles and the run has a proxy; nil otherwise. A perf
// missing, refused or failed leaves the run without a profile, and says
// why.
func (s *runner) startProfile(st *started, dir string) *profiler {
	if !s.cfg.Profile || st.proxy == nil {
		return nil
	}
	p := &profiler{}
	perf, err := s.host.StartPerf(host.PerfSpec{Role: host.RoleProxy, Freq: profileFreq, CallGraph: s.callGraph(), Dir: dir})
	if err != nil {
		p.absent = err.Error()
		return p
	}
	p.perf = perf
	return p
}

// fail records why the profile is absent, the first reason.
func (p *profiler) fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.absent == "" {
		p.absent = err.Error()
	}
}

// begin enables the sampling at the window's start, at.
func (p *profiler) begin(at time.Time) {
	if p == nil || p.perf == nil {
		return
	}
	p.enabled.Add(1)
	go func() {
		defer p.enabled.Done()
		time.Sleep(time.Until(at))
		if err := p.perf.Enable(); err != nil {
			p.fail(err)
		}
	}()
}

// end stops the sampling at the window's end and notes the proxy's
// processes, whose samples the profile keeps.
func (p *profiler) end(h *host.Host) {
	if p == nil || p.perf == nil {
		return
	}
	p.enabled.Wait()
	if p.pids = h.PIDs(host.RoleProxy); len(p.pids) == 0 {
		p.fail(errors.New("the proxy's processes could not be listed at the window's end, so none of the samples can be told to be its"))
	}
	if err := p.perf.Stop(); err != nil {
		p.fail(err)
	}
}

// close stops perf if it still runs.
func (p *profiler) close() {
	if p != nil {
		p.perf.Close()
	}
}

// keepProfile resolves the recording's symbols and writes the proxy's
// samples beside the runs' output as <name>.cpu.pb.gz and
// <name>.cpu.folded; it returns what the run's data says of the profile.
func (s *runner) keepProfile(ctx context.Context, p *profiler, name string) *results.ProfileNote {
	if p == nil {
		return nil
	}
	note := &results.ProfileNote{CallGraph: s.callGraph()}
	if p.absent != "" {
		note.Absent = p.absent
		return note
	}
	out, err := p.perf.Script(ctx, profile.ScriptFields)
	if err != nil {
		note.Absent = err.Error()
		return note
	}
	all, err := profile.ParseScript(bytes.NewReader(out))
	if err != nil {
		note.Absent = err.Error()
		return note
	}
	mine := profile.OfProcesses(all, p.pids)
	note.Samples, note.Others = len(mine), len(all)-len(mine)
	if err := writeProfile(filepath.Join(s.OutputDir, name), mine); err != nil {
		note.Absent = err.Error()
	}
	return note
}

// writeProfile writes samples as base+ProfileSuffix (pprof) and
// base+FoldedSuffix, from which the session's page draws the flame graph.
func writeProfile(base string, samples []profile.Sample) error {
	var folded bytes.Buffer
	if err := profile.Folded(&folded, samples); err != nil {
		return err
	}
	if err := results.WriteFile(base+results.FoldedSuffix, folded.Bytes()); err != nil {
		return fmt.Errorf("write profile: %w", err)
	}
	var proto bytes.Buffer
	if err := profile.Proto(samples).Write(&proto); err != nil {
		return fmt.Errorf("write profile %q: %w", base+results.ProfileSuffix, err)
	}
	if err := results.WriteFile(base+results.ProfileSuffix, proto.Bytes()); err != nil {
		return fmt.Errorf("write profile: %w", err)
	}
	return nil
}

package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The processes and samplings of a session spread over hosts of their
// own (spread.go): each asked of the agent of the role's host.

// remoteProc is a process an agent started for a Proc.
type remoteProc struct {
	p    *placed
	id   int
	dirs []string // its folders, brought back once it ends
	tail string   // its log's end, as the agent last said it
}

// startRemote starts spec in role r on its host p: the files of its
// folder and of the session's TLS sent first, this executable as the
// host's copy of it, its standard output passed on as it comes. It
// fails with onErr, where finding the host failed.
func (h *Host) startRemote(p *placed, r Role, spec ProcSpec, onErr error) (*Proc, error) {
	if onErr != nil {
		return nil, fmt.Errorf("start %s: %w", spec.Argv[0], onErr)
	}
	ctx := context.Background()
	if spec.Stdin != nil {
		return nil, fmt.Errorf("start %s on %s: a process reading its input runs on this machine only", spec.Argv[0], p.dest)
	}
	argv := slices.Clone(spec.Argv)
	if self, err := os.Executable(); err == nil && argv[0] == self {
		argv[0] = p.remote.Dir + "/" + agentBinary
	}
	dir := spec.Dir
	if dir == "" {
		dir = h.runDir
	}
	logPath := spec.Log
	if logPath == "" {
		logPath = h.logPath(filepath.Base(spec.Argv[0]))
	}
	if err := p.send(ctx, dir, filepath.Join(h.runDir, "tls"), filepath.Dir(logPath)); err != nil {
		return nil, fmt.Errorf("start %s on %s: %w", spec.Argv[0], p.dest, err)
	}
	var id int
	err := p.remote.Call(ctx, "Start", AgentStart{Role: r, Argv: argv, Dir: dir, Log: logPath, Env: spec.Env, User: spec.User}, &id)
	if err != nil {
		return nil, err
	}
	rp := &remoteProc{p: p, id: id, dirs: []string{dir, logPath}}
	proc := &Proc{h: h, role: r, log: logPath, done: make(chan struct{}), remote: rp}
	h.follows.Add(1)
	go proc.follow(spec)
	return proc, nil
}

// follow waits for a remote process's end, passing its standard output
// on to spec.Stdout as it comes, then brings back its files.
func (p *Proc) follow(spec ProcSpec) {
	defer p.h.follows.Done()
	rp := p.remote
	ctx := context.Background()
	passed := 0
	for {
		var x AgentExit
		err := rp.p.remote.Call(ctx, "Wait", AgentWait{ID: rp.id, Wait: time.Second, Seen: passed}, &x)
		if err != nil {
			p.err = err
			break
		}
		if len(x.Stdout) > passed {
			if spec.Stdout != nil {
				spec.Stdout.Write(x.Stdout[passed:])
			}
			passed = len(x.Stdout) // the next Wait answers once there is more
		}
		p.mu.Lock()
		rp.tail = x.LogTail
		p.mu.Unlock()
		if x.Exited {
			p.ended = rp.p.fromHost(x.Ended)
			if x.Err != "" {
				p.err = errors.New(x.Err)
			}
			break
		}
	}
	if err := rp.p.bring(ctx, p.h.root, rp.dirs...); err != nil && p.err == nil && !errors.Is(err, ErrHostLost) {
		p.err = err
	}
	close(p.done)
}

// stopRemote stops a remote process: its agent sends SIGINT first where
// interrupt, SIGTERM, then SIGKILL after grace.
func (p *Proc) stopRemote(grace time.Duration, interrupt bool) error {
	method := "Stop"
	if interrupt {
		method = "Interrupt"
	}
	var x AgentExit
	err := p.remote.p.remote.Call(context.Background(), method, AgentWait{ID: p.remote.id, Wait: grace}, &x)
	if errors.Is(err, ErrHostLost) {
		err = nil // its agent tore it down
	}
	select {
	case <-p.done:
	case <-time.After(grace + 10*time.Second):
		err = errors.Join(err, fmt.Errorf("stop %s on %s: it did not end", p.log, p.remote.p.dest))
	}
	return err
}

// remoteTail is the end of a remote process's log: the file brought back
// once it ended, else what its agent last said.
func (p *Proc) remoteTail(n int) string {
	if lines := TailLines(p.log, n); len(lines) > 0 {
		return strings.Join(lines, "\n")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	lines := strings.Split(p.remote.tail, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// remoteSampling is a sampler on a host of its own.
type remoteSampling struct {
	p  *placed
	id int
}

// startSpread starts a sampler with plan on each host of its own.
func (h *Host) startSpread(plan Plan) (*Sampler, error) {
	s := &Sampler{h: h, plan: plan, began: time.Now()}
	for _, p := range h.placedHosts() {
		var id int
		if err := p.remote.Call(context.Background(), "SampleStart", AgentSample{Plan: plan}, &id); err != nil {
			s.Stop()
			return nil, err
		}
		s.parts = append(s.parts, remoteSampling{p: p, id: id})
	}
	return s, nil
}

// beginSpread begins each host's deferred window at at, by its clock.
func (s *Sampler) beginSpread(at time.Time) {
	for _, part := range s.parts {
		part.p.remote.Call(context.Background(), "SampleBegin", AgentSample{ID: part.id, At: part.p.toHost(at)}, nil)
	}
}

// stopSpread ends each host's sampler, over [end-window, end] by its
// clock with a window, and merges what they observed of their roles,
// their times on this machine's clock.
func (s *Sampler) stopSpread(end time.Time, window time.Duration) (Window, error) {
	merged := Window{Ticks: map[Role][]uint64{}, CPUs: map[Role]int{}, RoleTimes: map[Role][]time.Time{}, Planned: s.planned}
	var errs []error
	for _, part := range s.parts {
		var w Window
		err := part.p.remote.Call(context.Background(), "SampleStop", AgentSample{ID: part.id, At: part.p.toHost(end), Window: window}, &w)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		merged.merge(part.p, w, len(s.h.clients) > 1)
	}
	if window > 0 {
		merged.From, merged.To = end.Add(-window), end
	}
	return merged, errors.Join(errs...)
}

// merge adds the observations of the roles host p holds, from its
// window w, to m, their times on this machine's clock; several says
// that several client hosts share the load (Window.Clients).
func (m *Window) merge(p *placed, w Window, several bool) {
	shift := func(ts []time.Time) []time.Time {
		out := make([]time.Time, len(ts))
		for i, t := range ts {
			out[i] = p.fromHost(t)
		}
		return out
	}
	m.Hosts = append(m.Hosts, HostSpan{Dest: p.dest, From: p.fromHost(w.From), To: p.fromHost(w.To)})
	if m.From.IsZero() || p.fromHost(w.From).Before(m.From) {
		m.From = p.fromHost(w.From)
	}
	if p.fromHost(w.To).After(m.To) {
		m.To = p.fromHost(w.To)
	}
	for _, r := range p.roles {
		if r == RoleClient && several {
			m.Clients = append(m.Clients, Series{Times: shift(w.Times), Ticks: w.Ticks[r], CPUs: w.CPUs[r]})
			if len(m.Clients) > 1 {
				continue // the first's are the client's
			}
		}
		m.Ticks[r], m.CPUs[r], m.RoleTimes[r] = w.Ticks[r], w.CPUs[r], shift(w.Times)
	}
	for _, t := range w.Threads {
		if slices.Contains(p.roles, t.Role) {
			m.Threads = append(m.Threads, Thread{Role: t.Role, T: shift(t.T), NS: t.NS})
		}
	}
	m.Polls = append(m.Polls, shift(w.Polls)...)
	slices.SortFunc(m.Polls, func(a, b time.Time) int { return a.Compare(b) })
	if slices.Contains(p.roles, RoleProxy) {
		m.Pipes, m.PipesCounted = w.Pipes, w.PipesCounted
		m.Quota, m.ThrottledPeriods, m.Throttled = w.Quota, w.ThrottledPeriods, w.Throttled
	}
	m.Cost += w.Cost
}

// callProxy calls method of the proxy's host's agent.
func (h *Host) callProxy(method string, reply any) error {
	p := h.remotes[RoleProxy]
	return p.remote.Call(context.Background(), method, struct{}{}, reply)
}

// wait asks the host to dial addrs from role from until they accept
// (WaitReady), or to wait until its listeners at addrs have taken what
// they queued (WaitAccepted).
func (p *placed) wait(ctx context.Context, method string, from Role, addrs []string, deadline time.Duration) error {
	return p.remote.Call(ctx, method, AgentReady{From: from, Addrs: addrs, Deadline: deadline}, nil)
}

// mount mounts a tmpfs on dir on the host (the origin's).
func (p *placed) mount(dir, size string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return p.remote.Call(context.Background(), "Mount", AgentMount{Dir: dir, Size: size}, nil)
}

// outputLimit is how long a command whose output is asked for may run.
const outputLimit = 5 * time.Second

// Output is what argv prints, its standard output and error, run in
// role r: on its host where the role is on one of its own (a program's
// version, there), else here as CommandOutput; "" where it cannot run.
func (h *Host) Output(r Role, argv []string) string {
	if h.remotes[r] == nil || len(argv) == 0 {
		return CommandOutput(argv)
	}
	dir := filepath.Join(h.runDir, "output")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return ""
	}
	defer h.RemoveAll(dir)
	log := filepath.Join(dir, filepath.Base(argv[0])+".log")
	ctx, cancel := context.WithTimeout(context.Background(), outputLimit)
	defer cancel()
	h.Run(ctx, r, ProcSpec{Argv: argv, Dir: dir, Log: log})
	b, _ := os.ReadFile(log)
	return string(b)
}

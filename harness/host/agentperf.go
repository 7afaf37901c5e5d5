package host

import (
	"context"
	"errors"
	"fmt"
)

// A profile of a role on a host of its own: perf records there, on the
// role's CPUs, from outside the role's cgroups, and reads its recording
// there, where the proxy's binaries and their symbols are (perf.go).

// roleHost is no role: a process of a host of its own that runs where
// its agent runs, in no role's cgroups (perf sampling the proxy's CPUs
// from outside them, on a host that holds no client).
const roleHost Role = "host"

// perfRole is where perf runs on this host: the client's CPUs where it
// holds the client, else on a host of its own where its agent runs.
func (h *Host) perfRole() Role {
	if h.own && !h.Holds(RoleClient) {
		return roleHost
	}
	return RoleClient
}

// PerfStart starts perf record as spec says (Host.StartPerf), its events
// disabled; one at a time.
func (a *Agent) PerfStart(spec PerfSpec, _ *struct{}) error {
	h, err := a.opened()
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.perf != nil {
		return errors.New("perf records already")
	}
	a.perf, err = h.StartPerf(spec)
	return err
}

// agentPerf is the agent's perf record.
func (a *Agent) agentPerf() (*Perf, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.perf == nil {
		return nil, errors.New("no perf records")
	}
	return a.perf, nil
}

// PerfEnable enables the sampling: the window's start.
func (a *Agent) PerfEnable(_ struct{}, _ *struct{}) error {
	p, err := a.agentPerf()
	if err != nil {
		return err
	}
	return p.Enable()
}

// PerfStop ends the sampling and perf, which writes its file.
func (a *Agent) PerfStop(_ struct{}, _ *struct{}) error {
	p, err := a.agentPerf()
	if err != nil {
		return err
	}
	return p.Stop()
}

// PerfScript answers perf script of the recording with fields.
func (a *Agent) PerfScript(fields string, out *[]byte) error {
	p, err := a.agentPerf()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), callLimit)
	defer cancel()
	*out, err = p.Script(ctx, fields)
	return err
}

// PerfClose stops perf if it still runs; the next PerfStart may come.
func (a *Agent) PerfClose(_ struct{}, _ *struct{}) error {
	a.mu.Lock()
	p := a.perf
	a.perf = nil
	a.mu.Unlock()
	return p.Close()
}

// PIDs answers the processes of role r on the host.
func (a *Agent) PIDs(r Role, pids *[]int) error {
	h, err := a.opened()
	if err != nil {
		return err
	}
	*pids = h.PIDs(r)
	return nil
}

// remotePerf is perf on the host of the role it samples.
type remotePerf struct{ p *placed }

// startRemotePerf starts perf on p, the host of spec.Role.
func startRemotePerf(p *placed, spec PerfSpec) (*Perf, error) {
	if err := p.remote.Call(context.Background(), "PerfStart", spec, nil); err != nil {
		return nil, &PerfError{fmt.Sprintf("perf on %s: %v", p.dest, err)}
	}
	return &Perf{remote: &remotePerf{p: p}}, nil
}

// call calls method of the perf on the host; a failure is a PerfError
// naming it.
func (r *remotePerf) call(method string, arg, reply any) error {
	if err := r.p.remote.Call(context.Background(), method, arg, reply); err != nil {
		return &PerfError{fmt.Sprintf("perf on %s: %v", r.p.dest, err)}
	}
	return nil
}

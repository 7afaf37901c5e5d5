package host

import (
	"context"
	"fmt"
	"time"
)

// The calls of a session's runs on a host of its own: what Host does on
// one machine (a tmpfs mounted, listeners waited for, the proxy's pipes
// and peak memory, the sampler over a window), asked of the agent that
// holds the role.

// Mount mounts a tmpfs on m.Dir, beneath the run directory.
func (a *Agent) Mount(m AgentMount, _ *struct{}) error {
	root, h, err := a.rooted()
	if err != nil {
		return err
	}
	rel, err := relPath(h.RunDir(), m.Dir, false)
	if err != nil {
		return err
	}
	if err := root.MkdirAll(rel, 0o755); err != nil {
		return err
	}
	if err := plainDir(root, h, m.Dir); err != nil {
		return err
	}
	return h.MountTmpfs(m.Dir, m.Size)
}

// AgentMount is a tmpfs to mount: its folder and size ("64m").
type AgentMount struct {
	Dir, Size string
}

// WaitAccepted waits until the role's listeners at r.Addrs have no
// connection queued (Host.WaitAccepted).
func (a *Agent) WaitAccepted(r AgentReady, _ *struct{}) error {
	h, err := a.opened()
	if err != nil {
		return err
	}
	return h.WaitAccepted(context.Background(), r.From, r.Addrs, r.Deadline)
}

// ProxyReady notes the proxy's own pipes (Host.ProxyReady).
func (a *Agent) ProxyReady(_ struct{}, _ *struct{}) error {
	h, err := a.opened()
	if err != nil {
		return err
	}
	h.ProxyReady()
	return nil
}

// ResetPeak starts the proxy's peak memory afresh.
func (a *Agent) ResetPeak(_ struct{}, _ *struct{}) error {
	h, err := a.opened()
	if err != nil {
		return err
	}
	return h.ResetPeakMemory()
}

// Peak answers the proxy's peak memory since the reset, in bytes.
func (a *Agent) Peak(_ struct{}, peak *int64) error {
	h, err := a.opened()
	if err != nil {
		return err
	}
	*peak, err = h.PeakMemory()
	return err
}

// AgentSample starts or ends a sampling: its number, its plan, the
// deferred start (Begin), the window's end and length (StopWindow).
type AgentSample struct {
	ID     int
	Plan   Plan
	At     time.Time
	Window time.Duration
}

// SampleStart starts a sampler with s.Plan and answers its number.
func (a *Agent) SampleStart(s AgentSample, id *int) error {
	h, err := a.opened()
	if err != nil {
		return err
	}
	sm, err := h.StartSampling(s.Plan)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.samplers == nil {
		a.samplers = map[int]*Sampler{}
	}
	a.next++
	a.samplers[a.next] = sm
	*id = a.next
	return nil
}

// SampleBegin begins a deferred plan's window at s.At (Sampler.Begin).
func (a *Agent) SampleBegin(s AgentSample, _ *struct{}) error {
	sm, err := a.sampler(s.ID, false)
	if err != nil {
		return err
	}
	sm.Begin(s.At)
	return nil
}

// SampleStop ends sampling s.ID: with s.Window, the window of that
// length ending at s.At (Sampler.StopWindow), else what it saw
// (Sampler.Stop).
func (a *Agent) SampleStop(s AgentSample, w *Window) error {
	sm, err := a.sampler(s.ID, true)
	if err != nil {
		return err
	}
	if s.Window <= 0 {
		*w, err = sm.Stop()
		return err
	}
	*w, err = sm.StopWindow(s.At, s.Window)
	return err
}

// sampler is sampling id, forgotten when done.
func (a *Agent) sampler(id int, done bool) (*Sampler, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	sm, ok := a.samplers[id]
	if !ok {
		return nil, fmt.Errorf("no sampling %d", id)
	}
	if done {
		delete(a.samplers, id)
	}
	return sm, nil
}

// Interrupt sends process w.ID's group SIGINT and waits up to w.Wait for
// it to exit (Proc.Interrupt).
func (a *Agent) Interrupt(w AgentWait, x *AgentExit) error {
	ap, err := a.proc(w.ID)
	if err != nil {
		return err
	}
	ap.p.Interrupt(w.Wait)
	a.exit(w.ID, ap, x, false)
	return nil
}

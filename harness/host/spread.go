package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// A session spread over hosts of their own (Config.Hosts): this machine
// holds no role; each role is on the host of its line, held through that
// host's agent (Deploy), which places it there as a Host of its own
// does. The Host then answers as on one machine, asking the role's
// agent: a process started in a role is started on its host, its files
// (beneath the run directory, which has the same path on every host)
// sent there first and brought back once it ends; the sampler samples
// each host over the same window, placed on each by its clock's offset.

// newSpread is New where the roles are on hosts of their own: this
// machine keeps the lock and the run directory (their files are made
// here first), and holds no role, so it pins nothing and makes no
// cgroup or namespace.
func (h *Host) newSpread(cfg Config) (_ *Host, err error) {
	if h.stale, err = clean(cfg.Prefix); err != nil {
		return nil, fmt.Errorf("remove what an earlier session left: %w", err)
	}
	if err := h.makeRunDir(cfg.RunDir); err != nil {
		return nil, err
	}
	if h.root, err = os.OpenRoot(h.runDir); err != nil {
		return nil, err
	}
	if err := h.saveState(); err != nil {
		return nil, err
	}
	if err := h.spread(context.Background(), cfg); err != nil {
		return nil, err
	}
	return h, nil
}

// placed is a host of its own holding roles: its agent, and its clock's
// offset from this one's as last measured, known within uncertainty.
type placed struct {
	dest   Destination
	remote *Remote
	roles  []Role
	layout Layout // its roles' CPUs
	facts  AgentFacts
	nic    NICFacts // its interface on the data path
	data   string   // its address on the data path

	mu          sync.Mutex
	offset      time.Duration
	uncertainty time.Duration
	// sent is what was sent there, or brought from there, as it is
	// here since (spreadfiles.go)
	sentMu sync.Mutex
	sent   map[string]fileStamp
}

// fileStamp is what tells a file's version: its size and time.
type fileStamp struct {
	size int64
	mod  time.Time
}

// clockPings is how many pings measure a host's clock: the one of the
// shortest round trip is taken.
const clockPings = 5

// spread deploys an agent to each host of cfg.Hosts (all at once), asks
// it for its facts and clock and places its roles, each on its line's
// CPUs or all the host's but its first; h.remotes holds them by role.
func (h *Host) spread(ctx context.Context, cfg Config) error {
	h.addrs = addrsOf(cfg.Hosts)
	dests := cfg.Hosts.Destinations()
	ps := make([]*placed, len(dests))
	errs := make([]error, len(dests))
	var wg sync.WaitGroup
	for i, d := range dests {
		wg.Go(func() { ps[i], errs[i] = h.place(ctx, cfg, d) })
	}
	wg.Wait()
	h.remotes = map[Role]*placed{}
	for _, p := range ps {
		if p == nil {
			continue
		}
		h.placed = append(h.placed, p)
		for _, r := range p.roles {
			if r == RoleClient {
				h.clients = append(h.clients, p)
			}
			if h.remotes[r] == nil {
				h.remotes[r] = p // a role's first host
				h.layout = h.layout.with(r, p.layout.cpus(r))
			}
		}
	}
	return errors.Join(errs...)
}

// place deploys to dest and places the roles its lines give it.
func (h *Host) place(ctx context.Context, cfg Config, dest Destination) (*placed, error) {
	r, err := Deploy(ctx, cfg.SSHOf(dest), cfg.Prefix)
	if err != nil {
		return nil, err
	}
	p := &placed{dest: dest, remote: r, sent: map[string]fileStamp{}, data: cfg.Hosts.RolesOf(dest)[0].Data.String()}
	if err := r.Call(ctx, "Facts", struct{}{}, &p.facts); err != nil {
		return p, err
	}
	layout := &p.layout
	for _, l := range cfg.Hosts.RolesOf(dest) {
		cpus := l.CPUs
		if cpus == nil {
			cpus = slices.Clone(p.facts.Online)
			if len(cpus) > 1 {
				cpus = cpus[1:] // the first for the agent
			}
		}
		*layout = layout.with(l.Role, cpus)
		p.roles = append(p.roles, l.Role)
	}
	for _, r := range p.roles {
		if r != RoleProxy && len(layout.Proxy) > 0 && overlaps(layout.cpus(r), layout.Proxy) {
			return p, fmt.Errorf("%s: the proxy shares CPUs with the %s (%s): give each its own with cpus=", dest, r, CPUList(layout.Proxy))
		}
	}
	line := cfg.Hosts.RolesOf(dest)[0]
	if err := r.Call(ctx, "NIC", AgentNIC{Name: line.NIC, Data: line.Data.String()}, &p.nic); err != nil {
		return p, err
	}
	var runDir string
	if err := r.Call(ctx, "Open", AgentOpen{Prefix: cfg.Prefix, Layout: *layout, Quota: cfg.ProxyCPUQuota, RunDir: h.runDir}, &runDir); err != nil {
		return p, err
	}
	return p, p.clock(ctx)
}

func overlaps(a, b []int) bool {
	return slices.ContainsFunc(a, func(c int) bool { return slices.Contains(b, c) })
}

// clock measures the host's clock's offset anew.
func (p *placed) clock(ctx context.Context) error {
	offset, rtt, err := p.remote.Clock(ctx, clockPings)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.offset, p.uncertainty = offset, rtt/2
	p.mu.Unlock()
	return nil
}

// toHost is a time of this machine's clock on the host's.
func (p *placed) toHost(t time.Time) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return t.Add(p.offset)
}

// fromHost is a time of the host's clock on this machine's.
func (p *placed) fromHost(t time.Time) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return t.Add(-p.offset)
}

// PlacedHost is a host of its own as a session holds it: how it is
// reached, its roles and their CPUs, its data address, what its agent
// said of it, and its clock's offset, known within Uncertainty.
type PlacedHost struct {
	Dest        Destination
	Roles       []Role
	Layout      Layout
	Data        string
	Facts       AgentFacts
	NIC         NICFacts
	Offset      time.Duration
	Uncertainty time.Duration
}

// Placed are the hosts of their own holding the roles, in the roles'
// order; none where this machine holds them.
func (h *Host) Placed() []PlacedHost {
	var out []PlacedHost
	for _, p := range h.placedHosts() {
		p.mu.Lock()
		ph := PlacedHost{Dest: p.dest, Roles: p.roles, Layout: p.layout, Data: p.data, Facts: p.facts, NIC: p.nic, Offset: p.offset, Uncertainty: p.uncertainty}
		p.mu.Unlock()
		out = append(out, ph)
	}
	return out
}

// Held is the layout of the roles a host holds: "proxy=1".
func (l Layout) Held() string {
	var parts []string
	for _, r := range l.held() {
		parts = append(parts, string(r)+"="+CPUList(l.cpus(r)))
	}
	return strings.Join(parts, ",")
}

// Addrs are the roles' addresses on the data path: the proxy's facing
// the client and facing the origin, which one address may be.
type Addrs struct {
	Client, ProxyClient, ProxyOrigin, Origin string
}

// Addrs are the roles' addresses: the namespaces' on one machine, the
// hosts' data= where the roles are on hosts of their own.
func (h *Host) Addrs() Addrs {
	if h.addrs != (Addrs{}) {
		return h.addrs
	}
	return Addrs{Client: ClientAddr, ProxyClient: ProxyClientAddr, ProxyOrigin: ProxyOriginAddr, Origin: OriginAddr}
}

// addrsOf are the addresses of a hosts file's roles.
func addrsOf(hs Hosts) Addrs {
	data := func(r Role) string {
		if ls := hs.Of(r); len(ls) > 0 {
			return ls[0].Data.String()
		}
		return ""
	}
	return Addrs{Client: data(RoleClient), ProxyClient: data(RoleProxy), ProxyOrigin: data(RoleProxy), Origin: data(RoleOrigin)}
}

// Clocks measures each host's clock again (before a run: clocks drift)
// and says the largest uncertainty of two hosts' windows placed by them.
func (h *Host) Clocks(ctx context.Context) (time.Duration, error) {
	var worst []time.Duration
	for _, p := range h.placedHosts() {
		if err := p.clock(ctx); err != nil {
			return 0, err
		}
		p.mu.Lock()
		worst = append(worst, p.uncertainty)
		p.mu.Unlock()
	}
	slices.Sort(worst)
	var sum time.Duration
	for _, u := range worst[max(0, len(worst)-2):] {
		sum += u
	}
	return sum, nil
}

// placedHosts are the hosts of their own, each once, in the roles' order
// (the client hosts in the file's).
func (h *Host) placedHosts() []*placed {
	var ps []*placed
	for _, r := range roles {
		for _, p := range h.placed {
			if slices.Contains(p.roles, r) && !slices.Contains(ps, p) {
				ps = append(ps, p)
			}
		}
	}
	return ps
}

// Clients is how many client hosts share the load: those of the hosts
// file's client lines, one on one machine.
func (h *Host) Clients() int { return max(1, len(h.clients)) }

// remoteOn is role r's host, the on-th of the client hosts (from 0);
// nil where this machine holds r.
func (h *Host) remoteOn(r Role, on int) (*placed, error) {
	switch {
	case on == 0:
		return h.remotes[r], nil
	case r == RoleClient && on < len(h.clients):
		return h.clients[on], nil
	}
	return nil, fmt.Errorf("no %s host %d: the session has %d", r, on+1, h.Clients())
}

// Spread says whether the roles are on hosts of their own.
func (h *Host) Spread() bool { return len(h.placed) > 0 }

// ToLocal is a time a role's tool gave, by its host's clock, on this
// machine's.
func (h *Host) ToLocal(r Role, t time.Time) time.Time { return h.ToLocalOn(r, 0, t) }

// ToLocalOn is ToLocal of a tool on the on-th of the client hosts.
func (h *Host) ToLocalOn(r Role, on int, t time.Time) time.Time {
	if p, _ := h.remoteOn(r, on); p != nil {
		return p.fromHost(t)
	}
	return t
}

// ToHostOn is a time of this machine's clock on the clock of role r's
// on-th host.
func (h *Host) ToHostOn(r Role, on int, t time.Time) time.Time {
	if p, _ := h.remoteOn(r, on); p != nil {
		return p.toHost(t)
	}
	return t
}

// ClientDest is the on-th client host (from 0), as the hosts file names
// it; "" on one machine.
func (h *Host) ClientDest(on int) string {
	if p, _ := h.remoteOn(RoleClient, on); p != nil {
		return p.dest.String()
	}
	return ""
}

// Send sends the files beneath dir, as they are here, to role r's on-th
// host, before a process there reads them; nothing on one machine.
func (h *Host) Send(r Role, on int, dir string) error {
	p, err := h.remoteOn(r, on)
	if p == nil {
		return err
	}
	return p.send(context.Background(), dir)
}

// closeRemotes ends every host's agent, all at once: each tears down
// what it made. The processes followed end with them, their files
// brought back or not, before it returns.
func (h *Host) closeRemotes() error {
	errs := make([]error, len(h.placed))
	var wg sync.WaitGroup
	for i, p := range h.placed {
		wg.Go(func() { errs[i] = p.remote.Close() })
	}
	wg.Wait()
	h.follows.Wait()
	return errors.Join(errs...)
}

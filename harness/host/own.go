package host

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
)

// A host of its own (Config.Own) holds only the roles its layout gives
// CPUs, in its own network: what an agent places on a host of a hosts
// file (agent.go). Its roles' processes join their cgroups and no
// namespace; what is done "in a role's network" is done where it is.

// checkOwn checks the layout of a host of its own: some role held, each
// held role's CPUs online, the proxy's quota within its CPUs.
func (c *Config) checkOwn(online []int) error {
	held := c.Layout.held()
	if len(held) == 0 {
		return errors.New("a host of its own holds no role: give a role CPUs")
	}
	for _, r := range held {
		for _, cpu := range c.Layout.cpus(r) {
			if !slices.Contains(online, cpu) {
				return fmt.Errorf("the %s's CPU %d is not online here (online: %s)", r, cpu, CPUList(online))
			}
		}
	}
	if c.ProxyCPUQuota < 0 || c.ProxyCPUQuota > float64(len(c.Layout.Proxy)) {
		return fmt.Errorf("proxy cpu quota %g: want 0 (none) up to the proxy's %d CPUs", c.ProxyCPUQuota, len(c.Layout.Proxy))
	}
	return nil
}

// Own says whether the host is one of its own (Config.Own).
func (h *Host) Own() bool { return h.own }

// Holds says whether the host holds role r.
func (h *Host) Holds(r Role) bool { return len(h.layout.cpus(r)) > 0 }

// netnsFile is the file of role r's network namespace, which its
// processes join; "" on a host of its own, whose roles are in its own.
func (h *Host) netnsFile(r Role) string {
	if h.own {
		return ""
	}
	return filepath.Join(netnsDir, h.Namespace(r))
}

// in runs fn in role r's network: on a thread switched into its
// namespace, or on a host of its own where it is.
func (h *Host) in(r Role, fn func() error) error {
	if h.own {
		return fn()
	}
	return inNamespace(h.Namespace(r), fn)
}

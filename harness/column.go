package harness

import (
	"fmt"
	"os"
	"path/filepath"

	"bench/harness/host"
	"bench/proxies"
	"bench/results"
	"bench/scenarios"
)

// siteFor is the environment of run r's instance in dir, with the TLS
// its shape holds it to: a tls-tunnel load restricts TLS to its cipher
// suite, and the handshakes run with stunnel's page's certificate,
// signatures, group and suite, as the installed OpenSSL can.
func (s *runner) siteFor(r RunSpec, dir string) proxies.Site {
	site := s.proxySite(r.Column, dir)
	switch r.shape().tls {
	case suiteTLS:
		site.TLS = scenarios.TLSParams{Key: scenarios.KeyECDSAP256, Suites: r.Scenario.Load.Suite}
	case handshakeTLS:
		site.TLS = s.handshakeTLS
		site.CertFile = filepath.Join(s.tlsDir(), "rsa.pem")
		site.KeyFile = filepath.Join(s.tlsDir(), "rsa.key")
	}
	return site
}

// proxySite is the environment of one instance of column c in dir: its
// connections sized to the descriptor limit it runs under (raised to the
// hard limit at start).
func (s *runner) proxySite(c proxies.Column, dir string) proxies.Site {
	hard, err := host.NofileLimit()
	if err != nil || hard == 0 {
		hard = 1024
	}
	limit := proxyLimit(hard)
	return proxies.Site{
		Dir:         dir,
		ClientSide:  s.host.Addrs().ProxyClient,
		OriginSide:  s.host.Addrs().ProxyOrigin,
		Origin:      s.host.Addrs().Origin,
		MaxConns:    host.ProxyConns(limit, c.Group == results.Splice),
		Descriptors: int(limit),
		CertFile:    filepath.Join(s.tlsDir(), "server.pem"),
		KeyFile:     filepath.Join(s.tlsDir(), "server.key"),
		CAFile:      filepath.Join(s.tlsDir(), "ca.pem"),
	}
}

// proxyLimit is the descriptor limit a proxy's configuration is sized
// for under a hard limit: that limit, but no more than the catalog's
// largest load needs through a splicing proxy. Proxies allocate their
// tables for what they are told they may hold: under systemd's hard limit
// for services, 524288, nginx's worker_connections alone took 230 MB, and
// its peak memory would have measured the limit, not the load.
func proxyLimit(hard uint64) uint64 {
	most := 0
	for _, l := range catalogLoads() {
		most = max(most, l.Conns)
	}
	return min(hard, uint64(host.ProxyDescriptors(most, true)))
}

// end is one instance of a run's column: the proxy, or a tls-tunnel's
// two ends.
type end struct {
	role host.Role
	mode results.Mode // what the instance is rendered for
	site proxies.Site
	inst proxies.Instance
}

// instances renders the column of run r into dir: the proxy in the
// scenario's mode, or for a tls-tunnel its server end (the proxy ending
// TLS, in the proxy's namespace, in front of the origin's iperf3) and its
// client end (the same kind beginning TLS, in the client's namespace, on
// its loopback for iperf3's client, connecting to the server end).
func (s *runner) instances(r RunSpec, dir string) ([]end, error) {
	c := r.Column
	if !r.shape().tunnel {
		site := s.siteFor(r, filepath.Join(dir, "proxy"))
		inst, err := s.prepare(c, r.Scenario.Mode, site)
		return []end{{host.RoleProxy, r.Scenario.Mode, site, inst}}, err
	}
	server := s.siteFor(r, filepath.Join(dir, "proxy"))
	si, err := s.prepare(c, results.TLSTerm, server)
	if err != nil {
		return nil, err
	}
	client := s.siteFor(r, filepath.Join(dir, "peer"))
	client.ClientSide, client.OriginSide, client.Origin = scenarios.TunnelEntry, s.host.Addrs().Client, s.host.Addrs().ProxyClient
	ci, err := s.prepare(c, results.TLSInit, client)
	if err != nil {
		return nil, err
	}
	return []end{{host.RoleProxy, results.TLSTerm, server, si}, {host.RoleClient, results.TLSInit, client, ci}}, nil
}

// prepare renders a column's configuration for a mode into site.Dir.
func (s *runner) prepare(c proxies.Column, m results.Mode, site proxies.Site) (proxies.Instance, error) {
	dir := site.Dir
	a, ok := proxies.Lookup(c.Kind)
	if !ok {
		return proxies.Instance{}, fmt.Errorf("column %q: unknown kind %q", c.Name, c.Kind)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return proxies.Instance{}, fmt.Errorf("column %q: %w", c.Name, err)
	}
	inst, err := a.Instance(c, m, site)
	if err != nil {
		return proxies.Instance{}, fmt.Errorf("column %q, mode %s: %w", c.Name, m, err)
	}
	for _, f := range inst.Files {
		p := filepath.Join(dir, f.Path)
		if err := writeFile(p, f.Data); err != nil {
			return inst, fmt.Errorf("column %q: %w", c.Name, err)
		}
		if f.Owner != "" {
			if err := chownTo(f.Owner, dir, p); err != nil {
				return inst, fmt.Errorf("column %q: %w", c.Name, err)
			}
		}
	}
	return inst, nil
}

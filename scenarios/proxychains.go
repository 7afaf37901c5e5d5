package scenarios

import (
	"bench/results"
	"bytes"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"text/template"
	"time"
)

// proxychainsConfFile is the name of proxychains-ng's config in the run
// directory.
const proxychainsConfFile = "proxychains.conf"

// Chain is the proxy proxychains-ng tunnels through.
type Chain struct {
	Type string // "http" (CONNECT) or "socks5"
	Host string // an IP address: proxychains-ng resolves no names here
	Port int
}

var proxychainsConf = template.Must(template.New(proxychainsConfFile).Parse(`# proxychains-ng config written by bench: every connection of the load
# tool goes through one proxy.
strict_chain
quiet_mode
# Names are not resolved through the proxy: the load tools use addresses.
# Milliseconds; generous, so that a slow proxy shows as slow, not failed.
tcp_connect_time_out 10000
tcp_read_time_out 30000

[ProxyList]
{{.Type}} {{.Host}} {{.Port}}
`))

// proxychainsConfig renders proxychains-ng's config for c.
func proxychainsConfig(c Chain) ([]byte, error) {
	if c.Type != "http" && c.Type != "socks5" {
		return nil, fmt.Errorf("proxychains chain type %q: want http or socks5", c.Type)
	}
	if net.ParseIP(c.Host) == nil {
		return nil, fmt.Errorf("proxychains proxy %q: want an IP address", c.Host)
	}
	if c.Port < 1 || c.Port > 65535 {
		return nil, fmt.Errorf("proxychains proxy port %d: want 1-65535", c.Port)
	}
	var b bytes.Buffer
	err := proxychainsConf.Execute(&b, c)
	return b.Bytes(), err
}

// chainFor returns the proxy to tunnel through for a scenario of mode m
// against t: CONNECT to the HTTP proxy, or SOCKSv5.
func chainFor(m results.Mode, t Target) (Chain, error) {
	typ := ""
	switch BaseMode(m) {
	case results.Connect:
		typ = "http"
	case results.Socks:
		typ = "socks5"
	default:
		return Chain{}, fmt.Errorf("mode %q needs no tunnel", m)
	}
	h, p, err := net.SplitHostPort(t.Proxy)
	if err != nil || t.Proxy == "" {
		return Chain{}, fmt.Errorf("proxy address %q: want host:port", t.Proxy)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		return Chain{}, fmt.Errorf("proxy address %q: port %q is not a number", t.Proxy, p)
	}
	return Chain{Type: typ, Host: h, Port: n}, nil
}

// proxychains wraps inv so that its program runs under proxychains-ng
// with the config for c, written to dir beside inv's own files.
func proxychains(inv Invocation, c Chain, dir string) (Invocation, error) {
	conf, err := proxychainsConfig(c)
	if err != nil {
		return Invocation{}, err
	}
	files := map[string][]byte{proxychainsConfFile: conf}
	for k, v := range inv.Files {
		if k == proxychainsConfFile {
			return Invocation{}, fmt.Errorf("run file %q is proxychains's own", k)
		}
		files[k] = v
	}
	inv.Argv = append([]string{ToolProxychains, "-q", "-f", filepath.Join(dir, proxychainsConfFile)}, inv.Argv...)
	inv.Files = files
	return inv, nil
}

// DriverFor returns the driver of s's load tool, nil for a tool without
// one.
func DriverFor(s Scenario) Driver {
	switch s.Load.Tool {
	case ToolWrk:
		return Wrk{}
	case ToolIperf3:
		return Iperf3{}
	case ToolBench:
		return Mix{}
	case ToolOpenSSL:
		return STime{}
	}
	return nil
}

// Build is the invocation of one run of s against t lasting window, with
// its files in dir, and the driver that parses its output. In modes
// connect and socks through a proxy the tool runs under proxychains-ng.
func Build(s Scenario, t Target, window time.Duration, dir string) (Invocation, Driver, error) {
	d := DriverFor(s)
	if d == nil {
		return Invocation{}, nil, fmt.Errorf("scenario %s: no driver for tool %q", s.Name, s.Load.Tool)
	}
	if window <= 0 {
		return Invocation{}, nil, fmt.Errorf("scenario %s: window %v: want a positive duration", s.Name, window)
	}
	inv, err := d.Invocation(s, t, window, dir)
	if err != nil {
		return Invocation{}, nil, err
	}
	if tunnelled(s, t) {
		c, err := chainFor(s.Mode, t)
		if err != nil {
			return Invocation{}, nil, fmt.Errorf("scenario %s: %w", s.Name, err)
		}
		if inv, err = proxychains(inv, c, dir); err != nil {
			return Invocation{}, nil, fmt.Errorf("scenario %s: %w", s.Name, err)
		}
	}
	return inv, d, nil
}

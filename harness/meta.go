package harness

import (
	"fmt"
	"time"

	"bench/harness/host"
	"bench/proxies"
	"bench/results"
)

// describeMachine is this machine's description with the tables' label.
func describeMachine(label string) results.MachineInfo {
	return machineInfo(label, host.DescribeMachine())
}

// machineInfo is the metadata's record of a machine, m, labelled label
// ("" for a host of a session's, whose label is the session's).
func machineInfo(label string, m host.Machine) results.MachineInfo {
	return results.MachineInfo{Label: label, CPUModel: m.CPUModel, Host: m.Host, CPUs: m.CPUs, MemoryBytes: m.MemoryBytes,
		Kernel: m.Kernel, Distribution: m.Distribution, Arch: m.Arch}
}

// defaultMachineLabel is the label the tables print when --machine is not
// given: the CPU model, shortened.
func defaultMachineLabel() string {
	m := host.DescribeMachine()
	return host.ModelLabel(m.CPUModel, m.Arch)
}

// ColumnVersion is the version string of a column's binary.
func ColumnVersion(c proxies.Column) string {
	return columnVersion(c, func(_ host.Role, argv []string) string { return host.CommandOutput(argv) })
}

// columnVersion is the version string of a column's binary, its
// command's output as out gives it (on the proxy's host).
func columnVersion(c proxies.Column, out func(host.Role, []string) string) string {
	a, ok := proxies.Lookup(c.Kind)
	if !ok {
		return ""
	}
	argv := a.VersionArgv(proxies.Binary(a, c))
	if len(argv) == 0 {
		return ""
	}
	return a.ParseVersion([]byte(out(host.RoleProxy, argv)))
}

// newMeta describes a starting session and writes it to path; a resumed
// session keeps its first start and records the resumption. out gives
// a command's output run in a role, on its host: the tools' versions
// are the client's, the columns' the proxy's.
func newMeta(cfg SessionConfig, l host.Layout, hosts []host.PlacedHost, notes []string, path string, out func(host.Role, []string) string) (*results.Meta, error) {
	now := time.Now().UTC()
	if cfg.Resume {
		if m, err := results.ReadMeta(path); err == nil {
			// The session's own description stands; only the
			// resumption is added.
			m.Resumed = append(m.Resumed, now)
			m.Ended = nil
			if b := Build(); m.Bench == nil || *m.Bench != b {
				m.Notes = append(m.Notes, fmt.Sprintf("resumed on %s by bench %s", now.Format(time.RFC3339), b))
			}
			return m, m.Write(path)
		}
	}
	m := &results.Meta{Started: now}
	m.Session = cfg.Session
	m.Machine = describeMachine(cfg.Machine)
	m.Settings = cfg.Settings
	m.Layout, m.LayoutNote = l.String(), l.Warning
	if len(hosts) > 0 {
		m.LayoutNote = "" // the hosts file's layout, not this machine's
	}
	for _, ph := range hosts {
		machine := machineInfo("", ph.Facts.Machine)
		info := results.HostInfo{Destination: ph.Dest.String(), Data: ph.Data, Hostname: ph.Facts.Hostname, Kernel: ph.Facts.Kernel, Machine: &machine,
			Online: host.CPUList(ph.Facts.Online), Layout: ph.Layout.Held(),
			ClockOffsetMS: float64(ph.Offset) / 1e6, ClockWithinMS: float64(ph.Uncertainty) / 1e6,
			NIC: results.NICInfo{Name: ph.NIC.Name, Driver: ph.NIC.Driver, SpeedMbps: ph.NIC.SpeedMbps, MTU: ph.NIC.MTU, Queues: ph.NIC.Queues, IRQs: ph.NIC.IRQs}}
		for _, r := range ph.Roles {
			info.Roles = append(info.Roles, string(r))
			if r == host.RoleProxy {
				// the tables' machine is the proxy's, whatever
				// machine bench ran the session from
				m.Machine = machineInfo(cfg.Machine, ph.Facts.Machine)
			}
		}
		m.Hosts = append(m.Hosts, info)
	}
	m.Notes = notes
	m.CommandLine = cfg.CommandLine
	b := Build()
	m.Bench = &b
	m.MixAccounting = results.MixDue
	m.Tools = map[string]string{}
	for _, p := range programs {
		if p.Tool || (cfg.Profile && p.Name == host.PerfProgram) {
			m.Tools[p.Name] = toolVersion(p, out)
		}
	}
	m.Columns = nil
	for _, c := range cfg.Columns {
		m.Columns = append(m.Columns, results.ColumnMeta{
			Name: c.Name, Kind: c.Kind, Group: string(c.Group), Binary: c.Binary,
			Flags: c.Flags, Options: c.Options, Version: columnVersion(c, out),
		})
	}
	return m, m.Write(path)
}

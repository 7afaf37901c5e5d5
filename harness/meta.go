package harness

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"

	"bench/harness/host"
	"bench/proxies"
)

// Meta is the metadata file beside a session's CSV: the machine, the
// session's settings, the CPU layout, every tool's and proxy's version,
// the command line and the times. It is written when the session starts
// and when it ends.
type Meta struct {
	Session string      `json:"session"`
	Machine MachineInfo `json:"machine"`
	Settings
	Layout     string `json:"cpu_layout"`
	LayoutNote string `json:"cpu_layout_warning,omitempty"`
	// Notes say what the session changed of what it was asked: the
	// connections it scaled down to fit the descriptor limit.
	Notes       []string          `json:"notes,omitempty"`
	Tools       map[string]string `json:"tools"`
	Columns     []ColumnMeta      `json:"columns"`
	CommandLine []string          `json:"command_line"`
	Started     time.Time         `json:"started"`
	Resumed     []time.Time       `json:"resumed,omitempty"`
	Ended       *time.Time        `json:"ended,omitempty"`
}

// MachineInfo describes the machine a session ran on.
type MachineInfo struct {
	Label        string `json:"label"`
	CPUModel     string `json:"cpu_model"`
	CPUs         int    `json:"cpus"`
	MemoryBytes  uint64 `json:"memory_bytes"`
	Kernel       string `json:"kernel"`
	Distribution string `json:"distribution"`
	Arch         string `json:"arch"`
}

// ColumnMeta records a column as it was run.
type ColumnMeta struct {
	Name    string   `json:"name"`
	Kind    string   `json:"kind"`
	Group   string   `json:"group"`
	Binary  string   `json:"binary,omitempty"`
	Flags   []string `json:"flags,omitempty"`
	Options []string `json:"options,omitempty"`
	Version string   `json:"version"`
}

// describeMachine reads the machine's facts from /proc, uname and os-release.
func describeMachine(label string) MachineInfo {
	m := MachineInfo{Label: label, CPUs: runtime.NumCPU(), Arch: runtime.GOARCH}
	if fs, err := procfs.NewDefaultFS(); err == nil {
		if ci, err := fs.CPUInfo(); err == nil && len(ci) > 0 {
			m.CPUModel = ci[0].ModelName
		}
		if mi, err := fs.Meminfo(); err == nil && mi.MemTotal != nil {
			m.MemoryBytes = *mi.MemTotal * 1024
		}
	}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		m.Kernel = "Linux " + unix.ByteSliceToString(u.Release[:])
	}
	if b, err := os.ReadFile("/etc/os-release"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "PRETTY_NAME="); ok {
				m.Distribution = strings.Trim(v, `"`)
			}
		}
	}
	return m
}

// defaultMachineLabel is the label the tables print when --machine is not
// given: the CPU model, shortened.
func defaultMachineLabel() string {
	m := describeMachine("")
	s := m.CPUModel
	for _, junk := range []string{"(R)", "(TM)", "(tm)", " CPU", " Processor", "  "} {
		s = strings.ReplaceAll(s, junk, " ")
	}
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, " @ "); i > 0 {
		s = s[:i]
	}
	if s == "" {
		s = runtime.GOARCH
	}
	return s
}

// ColumnVersion is the version string of a column's binary.
func ColumnVersion(c proxies.Column) string {
	a, ok := proxies.Lookup(c.Kind)
	if !ok {
		return ""
	}
	argv := a.VersionArgv(proxies.Binary(a, c))
	if len(argv) == 0 {
		return ""
	}
	return a.ParseVersion([]byte(host.CommandOutput(argv)))
}

// newMeta describes a starting session and writes it to path; a resumed
// session keeps its first start and records the resumption.
func newMeta(cfg SessionConfig, l host.Layout, notes []string, path string) (*Meta, error) {
	now := time.Now().UTC()
	if cfg.Resume {
		if m, err := ReadMeta(path); err == nil {
			// The session's own description stands; only the
			// resumption is added.
			m.Resumed = append(m.Resumed, now)
			m.Ended = nil
			return m, m.write(path)
		}
	}
	m := &Meta{Started: now}
	m.Session = cfg.Session
	m.Machine = describeMachine(cfg.Machine)
	m.Settings = cfg.Settings
	m.Layout, m.LayoutNote = l.String(), l.Warning
	m.Notes = notes
	m.CommandLine = cfg.CommandLine
	m.Tools = map[string]string{}
	for _, p := range programs {
		if p.Tool {
			m.Tools[p.Name] = toolVersion(p)
		}
	}
	m.Columns = nil
	for _, c := range cfg.Columns {
		m.Columns = append(m.Columns, ColumnMeta{
			Name: c.Name, Kind: c.Kind, Group: string(c.Group), Binary: c.Binary,
			Flags: c.Flags, Options: c.Options, Version: ColumnVersion(c),
		})
	}
	return m, m.write(path)
}

// Finish records the end of the session.
func (m *Meta) Finish(path string) error {
	now := time.Now().UTC()
	m.Ended = &now
	return m.write(path)
}

func (m *Meta) write(path string) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ReadMeta reads a session's metadata file.
func ReadMeta(path string) (*Meta, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := &Meta{}
	if err := json.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

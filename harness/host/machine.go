package host

import (
	"os"
	"runtime"
	"slices"
	"strings"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// Machine is what a machine is, as the metadata records it of the one a
// session runs on and of each of its hosts: its CPU model, the maker
// and product its firmware names ("" where it names none), its CPUs,
// memory, kernel, distribution and architecture.
type Machine struct {
	CPUModel     string
	Host         string
	CPUs         int
	MemoryBytes  uint64
	Kernel       string
	Distribution string
	Arch         string
}

// DescribeMachine reads this machine's facts from /proc, the firmware's
// DMI, uname and os-release.
func DescribeMachine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), Arch: runtime.GOARCH}
	if fs, err := procfs.NewDefaultFS(); err == nil {
		if ci, err := fs.CPUInfo(); err == nil && len(ci) > 0 {
			m.CPUModel = ci[0].ModelName
		}
		if mi, err := fs.Meminfo(); err == nil && mi.MemTotal != nil {
			m.MemoryBytes = *mi.MemTotal * 1024
		}
	}
	m.Host = firmwareHost()
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

// firmwareHost is the system's maker and product as the firmware (DMI)
// names them, "" where it names none.
func firmwareHost() string {
	var parts []string
	for _, f := range []string{"sys_vendor", "product_name"} {
		b, err := os.ReadFile("/sys/class/dmi/id/" + f)
		if s := strings.TrimSpace(string(b)); err == nil && s != "" && !slices.Contains(parts, s) {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, " ")
}

// ModelLabel is the label the tables print of a machine when the user
// gives none: its CPU model, shortened ("Intel Xeon Gold 6338" of
// "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz"), or its architecture
// where the model is not known.
func ModelLabel(cpuModel, arch string) string {
	s := cpuModel
	for _, junk := range []string{"(R)", "(TM)", "(tm)", " CPU", " Processor", "  "} {
		s = strings.ReplaceAll(s, junk, " ")
	}
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, " @ "); i > 0 {
		s = s[:i]
	}
	if s == "" {
		s = arch
	}
	return s
}

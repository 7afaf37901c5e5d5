package host

import (
	"bufio"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// NICFacts are what a host's interface on the data path is, as a session
// records it: what a proxy costs on a NIC (its driver, speed and MTU,
// where its queues' packets are steered and its interrupts go) is part
// of what a session across hosts measures.
type NICFacts struct {
	Name      string
	Driver    string // ethtool's driver name ("veth", "mlx5_core"); "" unknown
	SpeedMbps int    // the link's speed; 0 unknown
	MTU       int
	// Queues are each queue's steering, "rx-0 rps 0-3" (RPS), "tx-0 xps
	// 4" (XPS), "none" where it has none.
	Queues []string
	// IRQs are the interface's interrupts and the CPUs each may go to:
	// "45 eth0-TxRx-0 0-3".
	IRQs []string
}

// dataNIC names the interface of the data path: the one given, else the
// one holding the host's data address.
func dataNIC(name, data string) (string, error) {
	if name != "" {
		return name, nil
	}
	ip := net.ParseIP(data)
	addrs, err := netlink.AddrList(nil, netlink.FAMILY_ALL)
	if err != nil {
		return "", fmt.Errorf("list the host's addresses: %w", err)
	}
	for _, a := range addrs {
		if a.IP.Equal(ip) {
			l, err := netlink.LinkByIndex(a.LinkIndex)
			if err != nil {
				return "", err
			}
			return l.Attrs().Name, nil
		}
	}
	return "", fmt.Errorf("no interface of the host has its data address %s: name it with nic=", data)
}

// readNIC reads what interface name is: its MTU (netlink), driver
// (ethtool), speed, queues' steering (sysfs) and interrupts.
func readNIC(name string) (NICFacts, error) {
	l, err := netlink.LinkByName(name)
	if err != nil {
		return NICFacts{}, fmt.Errorf("interface %s: %w", name, err)
	}
	f := NICFacts{Name: name, MTU: l.Attrs().MTU}
	if fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0); err == nil {
		if info, err := unix.IoctlGetEthtoolDrvinfo(fd, name); err == nil {
			f.Driver = unix.ByteSliceToString(info.Driver[:])
		}
		unix.Close(fd)
	}
	sys := filepath.Join("/sys/class/net", name)
	if b, err := os.ReadFile(filepath.Join(sys, "speed")); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n > 0 {
			f.SpeedMbps = n
		}
	}
	for _, q := range []struct{ dir, file, what string }{{"rx-*", "rps_cpus", "rps"}, {"tx-*", "xps_cpus", "xps"}} {
		files, _ := filepath.Glob(filepath.Join(sys, "queues", q.dir, q.file))
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				continue
			}
			f.Queues = append(f.Queues, filepath.Base(filepath.Dir(file))+" "+q.what+" "+maskCPUs(string(b)))
		}
	}
	f.IRQs = nicIRQs(name)
	return f, nil
}

// maskCPUs reads a CPU mask as sysfs writes it ("00000000,0000000f") as
// a list of CPUs, "none" for none.
func maskCPUs(mask string) string {
	hex := strings.ReplaceAll(strings.TrimSpace(mask), ",", "")
	n, ok := new(big.Int).SetString(hex, 16)
	if !ok || n.Sign() == 0 {
		return "none"
	}
	var cpus []int
	for i := 0; i < n.BitLen(); i++ {
		if n.Bit(i) == 1 {
			cpus = append(cpus, i)
		}
	}
	return CPUList(cpus)
}

// nicIRQs are the interrupts /proc/interrupts names after interface
// name, each with the CPUs it may go to.
func nicIRQs(name string) []string {
	f, err := os.Open("/proc/interrupts")
	if err != nil {
		return nil
	}
	defer f.Close()
	var irqs []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 || !strings.HasSuffix(fields[0], ":") {
			continue
		}
		irq, owner := strings.TrimSuffix(fields[0], ":"), fields[len(fields)-1]
		if _, err := strconv.Atoi(irq); err != nil || owner != name && !strings.HasPrefix(owner, name+"-") {
			continue
		}
		cpus, _ := os.ReadFile(filepath.Join("/proc/irq", irq, "smp_affinity_list"))
		irqs = append(irqs, irq+" "+owner+" "+strings.TrimSpace(string(cpus)))
	}
	return irqs
}

// AgentNIC asks for the data path's interface: named (nic=), or the one
// holding the host's data address.
type AgentNIC struct {
	Name, Data string
}

// NIC answers what the host's interface on the data path is.
func (a *Agent) NIC(n AgentNIC, f *NICFacts) error {
	name, err := dataNIC(n.Name, n.Data)
	if err != nil {
		return err
	}
	*f, err = readNIC(name)
	return err
}

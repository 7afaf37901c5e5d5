package profile

import "strings"

// MachinePrefixes name the functions that are the machine's work, not
// the proxy's: a guest kernel's calls into its hypervisor (paravirtual
// operations: PVM's, Xen's, Hyper-V's, KVM's, VMware's), where a sample
// lands when the hypervisor takes the CPU back, as it does when the guest
// re-enables interrupts (pvm_irq_enable) or writes a register that traps
// (pvm_write_msr, an IPI sent by x2apic_send_IPI), and the thunks that
// save a paravirtual call's registers around them
// (__raw_callee_save_pvm_irq_enable). A stack's first frame is its
// command, never the machine's.
var MachinePrefixes = []string{"pvm_", "xen_", "hv_", "kvm_", "vmware_", "pv_", "__pv_", "__raw_callee_save_"}

// Machine reports whether the function name is the machine's work
// (MachinePrefixes).
func Machine(name string) bool {
	for _, p := range MachinePrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// WithoutMachine is stacks with the machine's functions at their leaves
// left out, so that their samples count to the function that called them:
// the proxy's own work, as it would show on a machine without them. A
// stack of the command and the machine's functions alone keeps the first
// of them.
func WithoutMachine(stacks []Stack) []Stack {
	out := make([]Stack, len(stacks))
	for i, s := range stacks {
		n := len(s.Frames)
		for n > 2 && Machine(s.Frames[n-1]) {
			n--
		}
		out[i] = Stack{Frames: s.Frames[:n], Count: s.Count}
	}
	return out
}

// MachineShare is the samples of stacks whose leaf is the machine's, and
// those functions by their samples, most first.
func MachineShare(stacks []Stack) (samples int64, funcs []Func) {
	by := map[string]int64{}
	for _, s := range stacks {
		if n := len(s.Frames); n > 0 && Machine(s.Frames[n-1]) {
			by[s.Frames[n-1]] += s.Count
			samples += s.Count
		}
	}
	for name, v := range by {
		funcs = append(funcs, Func{Name: name, Self: v, Total: v})
	}
	sortFuncs(funcs)
	return samples, funcs
}

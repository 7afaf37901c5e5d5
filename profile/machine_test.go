package profile

import (
	"slices"
	"testing"
)

// TestWithoutMachine: the machine's functions at a stack's leaf count to
// their caller, the stack's command and a stack of the machine alone
// stay, and MachineShare counts what they held, most first.
func TestWithoutMachine(t *testing.T) {
	stacks := []Stack{
		{[]string{"nginx", "__GI___writev", "x2apic_send_IPI", "pvm_write_msr"}, 144},
		{[]string{"nginx", "tcp_sendmsg", "__raw_callee_save_pvm_irq_enable", "pvm_irq_enable"}, 300},
		{[]string{"nginx", "pvm_irq_enable"}, 5},
		{[]string{"nginx", "[nginx]", "memcpy"}, 50},
	}
	got := WithoutMachine(stacks)
	want := [][]string{{"nginx", "__GI___writev", "x2apic_send_IPI"}, {"nginx", "tcp_sendmsg"}, {"nginx", "pvm_irq_enable"}, {"nginx", "[nginx]", "memcpy"}}
	for i := range want {
		if !slices.Equal(got[i].Frames, want[i]) || got[i].Count != stacks[i].Count {
			t.Errorf("stack %d without the machine: %v %d; want %v %d", i, got[i].Frames, got[i].Count, want[i], stacks[i].Count)
		}
	}
	if len(stacks[0].Frames) != 4 {
		t.Error("WithoutMachine changed the stacks it was given")
	}
	samples, funcs := MachineShare(stacks)
	if samples != 449 || len(funcs) != 2 || funcs[0].Name != "pvm_irq_enable" || funcs[0].Self != 305 || funcs[1].Name != "pvm_write_msr" || stacks[1].Frames[2] != "__raw_callee_save_pvm_irq_enable" {
		t.Errorf("MachineShare = %d, %+v; want 449: pvm_irq_enable 305, pvm_write_msr 144", samples, funcs)
	}
	if Machine("tcp_sendmsg") || !Machine("xen_hypercall_sched_op") {
		t.Error("Machine misreads tcp_sendmsg or xen_hypercall_sched_op")
	}
}

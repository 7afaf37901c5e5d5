package host

import (
	"os/exec"
	"testing"
)

// The facts a check asks of a host, asked of this one by the script a
// remote shell runs: its CPU model as /proc/cpuinfo names it (as the
// metadata reads it), its online CPUs, where a program is; and the
// label the tables give it.
func TestFactsScript(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	odd := "/no such/dir's `x` $(y)/prog" // a path as a columns file may give it
	out, err := exec.Command("sh", "-c", factsScript([]string{"sh", "no-such-program-here", sh, odd})).Output()
	if err != nil {
		t.Fatal(err)
	}
	f, err := parseFacts(out)
	if err != nil {
		t.Fatal(err)
	}
	m := DescribeMachine()
	online, err := OnlineCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if f.CPUModel != m.CPUModel || len(f.Online) != len(online) || f.Programs["sh"] == "" || f.Programs["no-such-program-here"] != "" {
		t.Errorf("facts %+v; want CPU model %q, online %v, sh found and the other not", f, m.CPUModel, online)
	}
	if f.Programs[sh] != sh || f.Programs[odd] != "" || len(f.Programs) != 4 {
		t.Errorf("the paths asked: %q; want %s there and %q not", f.Programs, sh, odd)
	}
	if want := ModelLabel(m.CPUModel, ""); m.CPUModel != "" && f.Label() != want {
		t.Errorf("the label %q; want the CPU model's, shortened, %q", f.Label(), want)
	}
}

func TestModelLabel(t *testing.T) {
	for _, c := range []struct{ model, arch, want string }{
		{"Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz", "x86_64", "Intel Xeon Gold 6338"},
		{"AMD EPYC 7B13 64-Core Processor", "x86_64", "AMD EPYC 7B13 64-Core"},
		{"", "aarch64", "aarch64"},
	} {
		if got := ModelLabel(c.model, c.arch); got != c.want {
			t.Errorf("ModelLabel(%q, %q) = %q; want %q", c.model, c.arch, got, c.want)
		}
	}
	f := RemoteFacts{Kernel: "Linux 6.1.0-28-arm64 aarch64"}
	if got := f.Label(); got != "aarch64" {
		t.Errorf("the label of a host whose CPU has no model name = %q; want its architecture", got)
	}
}

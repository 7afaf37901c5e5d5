package harness

import (
	"strings"
	"testing"

	"bench/harness/host"
)

// A session across hosts is labelled by its proxy's host, as the check
// of the hosts found it; not at all when that host was not reached.
func TestHostsLabel(t *testing.T) {
	hs, err := host.ParseHosts("hosts", strings.NewReader("client bench@c data=192.0.2.1\nproxy bench@p data=192.0.2.2\norigin bench@c data=192.0.2.1\n"))
	if err != nil {
		t.Fatal(err)
	}
	items := []host.CheckItem{
		{Name: "bench@c", OK: true}, {Name: "bench@c: " + host.MachineItem, Status: "AMD EPYC 7B13", OK: true},
		{Name: "bench@p", OK: true}, {Name: "bench@p: " + host.MachineItem, Status: "Intel Xeon Gold 6338", OK: true},
	}
	if got := HostsLabel(items, hs); got != "Intel Xeon Gold 6338" {
		t.Errorf("HostsLabel = %q; want the proxy's host's", got)
	}
	if got := HostsLabel(items[:2], hs); got != "" {
		t.Errorf("HostsLabel with the proxy's host unreached = %q; want none", got)
	}
}

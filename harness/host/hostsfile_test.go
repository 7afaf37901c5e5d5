package host

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
)

// TestParseHosts: the layouts a hosts file supports read as their lines
// say (three hosts; two client hosts; two hosts, client and origin on
// one), with comments, defaults and every key.
func TestParseHosts(t *testing.T) {
	three := `# three hosts
client bench@10.9.0.1 data=192.0.2.1 cpus=0-3
proxy  bench@10.9.0.2:2222 data=192.0.2.2 cpus=4 nic=enp1s0f0  # the proxy alone
origin 10.9.0.3 data=192.0.2.3
`
	h, err := ParseHosts("three", strings.NewReader(three))
	if err != nil {
		t.Fatal(err)
	}
	want := []HostLine{
		{Role: RoleClient, Dest: Destination{User: "bench", Host: "10.9.0.1"}, Data: netip.MustParseAddr("192.0.2.1"), CPUs: []int{0, 1, 2, 3}, Line: 2},
		{Role: RoleProxy, Dest: Destination{User: "bench", Host: "10.9.0.2", Port: 2222}, Data: netip.MustParseAddr("192.0.2.2"), CPUs: []int{4}, NIC: "enp1s0f0", Line: 3},
		{Role: RoleOrigin, Dest: Destination{Host: "10.9.0.3"}, Data: netip.MustParseAddr("192.0.2.3"), Line: 4},
	}
	if len(h.Lines) != len(want) {
		t.Fatalf("%d lines; want %d: %+v", len(h.Lines), len(want), h.Lines)
	}
	for i, w := range want {
		if g := h.Lines[i]; g.Role != w.Role || g.Dest != w.Dest || g.Data != w.Data || !slices.Equal(g.CPUs, w.CPUs) || g.NIC != w.NIC || g.Line != w.Line {
			t.Errorf("line %d: %+v; want %+v", i+1, g, w)
		}
	}
	if got := h.Lines[1].Dest.String(); got != "bench@10.9.0.2:2222" {
		t.Errorf("the proxy's destination reads %q; want it as the file gives it", got)
	}
	twoClients := "client a@load1 data=10.1.0.1\nclient a@load2 data=10.1.0.2\nproxy a@px data=10.1.0.3\norigin a@org data=10.1.0.4\n"
	h, err = ParseHosts("two-clients", strings.NewReader(twoClients))
	if err != nil || len(h.Of(RoleClient)) != 2 || len(h.Destinations()) != 4 {
		t.Errorf("two client hosts: %+v, %v; want both clients, 4 hosts", h.Lines, err)
	}
	twoHosts := "client a@one data=10.1.0.1\norigin a@one data=10.1.0.1\nproxy a@[2001:db8::2]:22 data=2001:db8::2\n"
	h, err = ParseHosts("two-hosts", strings.NewReader(twoHosts))
	if err != nil || len(h.Destinations()) != 2 || len(h.RolesOf(Destination{User: "a", Host: "one"})) != 2 {
		t.Errorf("client and origin on one host: %+v, %v; want 2 hosts, one holding two roles", h.Lines, err)
	}
	if got := h.Of(RoleProxy)[0].Dest.String(); got != "a@[2001:db8::2]:22" {
		t.Errorf("an IPv6 destination with a port reads %q", got)
	}
}

// TestParseHostsRefuses: what a hosts file may not say is refused with
// its line and why.
func TestParseHostsRefuses(t *testing.T) {
	const rest = "proxy p data=10.0.0.2\norigin o data=10.0.0.3\n"
	for _, c := range []struct{ name, file, want string }{
		{"no client", rest, "f: no client host"},
		{"two proxies", "client c data=10.0.0.1\n" + rest + "proxy p2 data=10.0.0.4\n", "f:4: a second proxy host (the first on line 2)"},
		{"unknown role", "server c data=10.0.0.1\n" + rest, `f:1: role "server"`},
		{"no data", "client c cpus=0\n" + rest, "f:1: no data=ADDRESS"},
		{"a name for data", "client c data=load1\n" + rest, "f:1: data=load1: want the role's IP address"},
		{"unknown key", "client c data=10.0.0.1 port=22\n" + rest, `f:1: unknown key "port"`},
		{"key twice", "client c data=10.0.0.1 data=10.0.0.5\n" + rest, "f:1: data= given twice"},
		{"bad cpus", "client c data=10.0.0.1 cpus=3-1\n" + rest, "f:1: cpus=3-1"},
		{"a huge cpu list", "client c data=10.0.0.1 cpus=0-99999999\n" + rest, "beyond the kernel's"},
		{"bad nic", "client c data=10.0.0.1 nic=eth0;reboot\n" + rest, "f:1: nic=eth0;reboot"},
		{"an option for a host", "client -oProxyCommand=x data=10.0.0.1\n" + rest, "not a host name"},
		{"a shell in the user", "client $(id)@c data=10.0.0.1\n" + rest, "not a user name"},
		{"bad port", "client c:0 data=10.0.0.1\n" + rest, `port "0"`},
		{"same role and host twice", "client c data=10.0.0.1\nclient c data=10.0.0.1\n" + rest, "f:2: client on c again (line 1)"},
		{"a data address twice", "client c data=10.0.0.2\n" + rest, "f:2: data=10.0.0.2 is c's too (line 1)"},
		{"too few fields", "client c\n" + rest, `f:1: "client c": want ROLE DESTINATION`},
	} {
		_, err := ParseHosts("f", strings.NewReader(c.file))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error with %q", c.name, err, c.want)
		}
	}
}

// FuzzParseHosts: no file panics the reader, and a file it reads has a
// client, one proxy and one origin, each line with its address.
func FuzzParseHosts(f *testing.F) {
	f.Add("client a@h:22 data=10.0.0.1 cpus=0-1 nic=eth0\nproxy p data=10.0.0.2\norigin o data=10.0.0.3\n")
	f.Add("client [::1]:2 data=::1\n# x\n")
	f.Fuzz(func(t *testing.T, s string) {
		h, err := ParseHosts("f", strings.NewReader(s))
		if err != nil {
			return
		}
		if len(h.Of(RoleClient)) == 0 || len(h.Of(RoleProxy)) != 1 || len(h.Of(RoleOrigin)) != 1 {
			t.Fatalf("%q read as %+v", s, h.Lines)
		}
		for _, l := range h.Lines {
			if !l.Data.IsValid() || l.Dest.Host == "" || strings.HasPrefix(l.Dest.Host, "-") {
				t.Fatalf("%q: line %+v", s, l)
			}
		}
	})
}

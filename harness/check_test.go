package harness

import (
	"os"
	"testing"
)

// item returns the item named name.
func item(t *testing.T, items []CheckItem, name string) CheckItem {
	t.Helper()
	for _, it := range items {
		if it.Name == name {
			return it
		}
	}
	t.Fatalf("no %q among %+v", name, items)
	return CheckItem{}
}

func TestCheckSystem(t *testing.T) {
	items := CheckSystem(nil)
	if root := item(t, items, "root"); root.OK != (os.Geteuid() == 0) || !root.Required {
		t.Errorf("root item %+v; euid %d", root, os.Geteuid())
	}
	if os.Geteuid() == 0 {
		// CI runs as root on a machine that can run a session.
		for _, name := range []string{"network namespaces", "cgroups", "CPUs", "CPU layout"} {
			if it := item(t, items, name); !it.OK {
				t.Errorf("%s: %+v; want ok", name, it)
			}
		}
	}
	online, err := OnlineCPUs()
	if err != nil {
		t.Fatal(err)
	}
	bad := Layout{Client: []int{0}, Proxy: []int{online[len(online)-1] + 1}, Origin: []int{0}}
	if it := item(t, CheckSystem(&bad), "CPU layout"); it.OK || !it.Required {
		t.Errorf("CheckSystem with an offline proxy CPU: %+v; want a required failure", it)
	}
	if it := CheckBinary("no-such-tool-here", nil, "apt-get install nothing", true); it.OK || it.Detail != "apt-get install nothing" {
		t.Errorf("CheckBinary(missing) = %+v; want a failure saying how to install it", it)
	}
	if it := CheckBinary("sh", []string{"-c", "echo tool 1.2.3"}, "", false); !it.OK || it.Status != "tool 1.2.3" {
		t.Errorf("CheckBinary(sh) = %+v; want status %q", it, "tool 1.2.3")
	}
}

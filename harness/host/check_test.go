package host

import (
	"os"
	"strings"
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
	items := CheckSystem(nil, nil)
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
	if it := item(t, CheckSystem(&bad, nil), "CPU layout"); it.OK || !it.Required {
		t.Errorf("CheckSystem with an offline proxy CPU: %+v; want a required failure", it)
	}
	if it := CheckBinary("no-such-tool-here", nil, "apt-get install nothing", true); it.OK || it.Detail != "apt-get install nothing" {
		t.Errorf("CheckBinary(missing) = %+v; want a failure saying how to install it", it)
	}
	if it := CheckBinary("sh", []string{"sh", "-c", "echo tool 1.2.3"}, "dash", false); !it.OK || it.Status != "tool 1.2.3" {
		t.Errorf("CheckBinary(sh) = %+v; want status %q", it, "tool 1.2.3")
	}
}

func TestDescriptorItem(t *testing.T) {
	// The catalog's loads, the largest twice.
	loads := []Load{{"ka-1k", 64}, {"ka-1m", 16}, {"ka-50k-2000", 2000}, {"ka-2k-50k-2000", 2000}, {"close-1k", 64}, {"ka-50k-2000", 2000}}
	tests := []struct {
		limit   uint64
		ok      bool
		want    []string // in Detail
		notWant []string
	}{
		// This machine's limit: the 2000-connection loads fit everywhere.
		{20000, true, []string{"2000 connections (ka-50k-2000, ka-2k-50k-2000) fits", "9950 connections through a copying proxy", "7960 through a splicing one"}, nil},
		// Enough for a copying proxy, not a splicing one.
		{4500, false, []string{"a splicing proxy needs 5100", "ulimit -Hn"}, []string{"a copying proxy needs", "the client needs"}},
		// Short everywhere.
		{1024, false, []string{"a copying proxy needs 4100", "a splicing proxy needs 5100", "the client needs 2100"}, nil},
	}
	for _, tt := range tests {
		it := descriptorItem(tt.limit, loads)
		if it.OK != tt.ok {
			t.Errorf("descriptorItem(%d).OK = %v; want %v (%s)", tt.limit, it.OK, tt.ok, it.Detail)
		}
		for _, w := range tt.want {
			if !strings.Contains(it.Detail, w) {
				t.Errorf("descriptorItem(%d).Detail = %q; want it to contain %q", tt.limit, it.Detail, w)
			}
		}
		for _, w := range tt.notWant {
			if strings.Contains(it.Detail, w) {
				t.Errorf("descriptorItem(%d).Detail = %q; want no %q", tt.limit, it.Detail, w)
			}
		}
	}
}

func TestProxyConns(t *testing.T) {
	// The limit less the reserve, at two descriptors a connection, or 2.5
	// for a splicing proxy's pipes; and what they allow fits the need.
	for _, c := range []struct {
		limit  uint64
		splice bool
		want   int
	}{{20000, false, 9950}, {20000, true, 7960}, {1024, false, 462}, {50, false, 0}} {
		got := ProxyConns(c.limit, c.splice)
		if got != c.want {
			t.Errorf("ProxyConns(%d, %v) = %d; want %d", c.limit, c.splice, got, c.want)
		}
		if got > 0 && ProxyDescriptors(got, c.splice) > int64(c.limit) {
			t.Errorf("ProxyConns(%d, %v) = %d needs %d descriptors", c.limit, c.splice, got, ProxyDescriptors(got, c.splice))
		}
	}
}

package host

import (
	"os"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"

	"bench/internal/testenv"
)

// threadCPUs returns the allowed CPUs of every thread of this process.
func threadCPUs(t *testing.T) map[string]string {
	tids, err := readDirNames("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	cpus := map[string]string{}
	for _, tid := range tids {
		b, err := os.ReadFile("/proc/self/task/" + tid + "/status")
		if err != nil {
			continue // ended meanwhile
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				cpus[tid] = strings.TrimSpace(v)
			}
		}
	}
	return cpus
}

func TestHarnessPinnedOffTheProxy(t *testing.T) {
	testenv.NeedRoot(t, "makes network namespaces and cgroups")
	before := threadCPUs(t)
	h, err := New(Config{Prefix: testPrefix(t), Layout: testLayout(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	// Threads made after New: goroutines locked to threads, blocked,
	// make the runtime start more.
	// Each says when it holds its thread, so that all four threads are
	// there when they are looked at (a fixed sleep of 10 ms let a slow
	// machine look before, and check fewer).
	release := make(chan struct{})
	var locked sync.WaitGroup
	for range 4 {
		locked.Add(1)
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			locked.Done()
			<-release
		}()
	}
	locked.Wait()
	want := CPUList(h.Layout().Client)
	for tid, cpus := range threadCPUs(t) {
		if cpus != want {
			t.Errorf("thread %s may run on CPUs %s while a host is open; want the client's %s", tid, cpus, want)
		}
	}
	close(release)
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	after := threadCPUs(t)
	orig := ""
	for _, c := range before {
		orig = c
	}
	for tid, cpus := range after {
		if cpus != orig {
			t.Errorf("thread %s may run on CPUs %s after Close; want %s as before", tid, cpus, orig)
		}
	}
}

func TestHarnessCPUs(t *testing.T) {
	l := Layout{Client: []int{0, 1}, Proxy: []int{2}, Origin: []int{3}}
	if got := harnessCPUs(l, []int{0, 1, 2, 3}, false); !reflect.DeepEqual(got, []int{0, 1}) {
		t.Errorf("harnessCPUs(%s) = %v; want the client's [0 1]", l, got)
	}
	l.Client = nil
	if got := harnessCPUs(l, []int{0, 1, 2, 3}, false); !reflect.DeepEqual(got, []int{0, 1, 3}) {
		t.Errorf("harnessCPUs with no client CPUs = %v; want all but the proxy's, [0 1 3]", got)
	}
	// A host of its own: the CPUs its roles leave free; else the
	// client's and the origin's; else, the proxy holding all, all.
	for _, c := range []struct {
		l    Layout
		want []int
	}{
		{Layout{Proxy: []int{1, 2}}, []int{0, 3}},
		{Layout{Client: []int{0, 1}, Origin: []int{1, 2, 3}}, []int{0, 1, 2, 3}},
		{Layout{Client: []int{0}, Proxy: []int{1, 2}, Origin: []int{3}}, []int{0, 3}},
		{Layout{Proxy: []int{0, 1, 2, 3}}, []int{0, 1, 2, 3}},
	} {
		if got := harnessCPUs(c.l, []int{0, 1, 2, 3}, true); !reflect.DeepEqual(got, c.want) {
			t.Errorf("harnessCPUs(%s) on a host of its own = %v; want %v", c.l, got, c.want)
		}
	}
}

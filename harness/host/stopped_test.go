package host

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"bench/internal/child"
	"bench/internal/testenv"
)

// A run of this package's tests stopped halfway, as a time limit stops
// it, leaves nothing it started: neither the spinners of the sampler's
// tests, at nice -20, nor the helpers, which the harness starts each in
// a process group of its own. The tests run in a session of their own,
// which every process they start stays in; stopped once with SIGTERM to
// the test binary and once with SIGKILL to its process group, the
// session must empty.
func TestStoppedTestsLeaveNothing(t *testing.T) {
	testenv.NeedRoot(t, "the tests it stops make network namespaces and cgroups")
	for _, c := range []struct {
		name, run string
		stop      func(pid int) error
	}{
		{"SIGTERM", "^TestSamplerChargesTheProxy$", func(pid int) error { return syscall.Kill(pid, syscall.SIGTERM) }},
		{"SIGKILL to the group", "^TestSamplerZombieThread$", func(pid int) error { return syscall.Kill(-pid, syscall.SIGKILL) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run="+c.run, "-test.count=1", "-test.v")
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			if err := child.Start(cmd); err != nil {
				t.Fatal(err)
			}
			sid := cmd.Process.Pid
			waited := false
			t.Cleanup(func() {
				if !waited {
					cmd.Process.Kill()
					cmd.Wait()
				}
				for _, pid := range inSession(sid) {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			})
			// Halfway: a spinner spins.
			prefix := ""
			for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				if prefix == "" {
					prefix = heldPrefix(sid)
				}
				if spinning(sid) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no spinner in the tests' session after 60 s; their output:\n%s", out.String())
				}
			}
			if prefix != "" {
				t.Cleanup(func() { Clean(prefix); os.Remove(lockPath(prefix)) })
			}
			t.Logf("stopped with %s running", cmdlines(inSession(sid)))
			if err := c.stop(sid); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()
			waited = true
			var left []int
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				if left = inSession(sid); len(left) == 0 {
					return
				}
				if time.Now().After(deadline) {
					break
				}
			}
			t.Errorf("left running 10 s after the stop: %s", cmdlines(left))
		})
	}
}

// inSession returns the processes of session sid but zombies, which run
// nothing: an orphan's waits for PID 1 to reap it.
func inSession(sid int) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// After the name: state, parent, group, session.
		i := bytes.LastIndexByte(b, ')')
		if f := strings.Fields(string(b[i+1:])); len(f) > 3 && f[0] != "Z" && f[3] == strconv.Itoa(sid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// spinning says whether a spinner (spinArgv) spins in session sid: its
// shell has used CPU time, so it is past its echo, which would fail once
// the test binary reading it is gone, in its loop.
func spinning(sid int) bool {
	for _, pid := range inSession(sid) {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if !strings.HasPrefix(string(b), "sh\x00") || !strings.Contains(string(b), "while :; do :; done") {
			continue
		}
		st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		// After the name, utime and stime are the 12th and 13th.
		f := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+1:]))
		if len(f) > 12 && (f[11] != "0" || f[12] != "0") {
			return true
		}
	}
	return false
}

// heldPrefix returns the prefix of the harness's lock that process pid
// holds open, or "".
func heldPrefix(pid int) string {
	fds, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/fd/*")
	for _, fd := range fds {
		l, err := os.Readlink(fd)
		if err != nil || filepath.Dir(l) != runBase {
			continue
		}
		if p, ok := strings.CutSuffix(filepath.Base(l), "lock"); ok && strings.HasPrefix(p, testenv.PrefixStart) {
			return p
		}
	}
	return ""
}

// cmdlines lists processes by PID and command line.
func cmdlines(pids []int) string {
	var s []string
	for _, pid := range pids {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		s = append(s, fmt.Sprintf("%d %q", pid, strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")))
	}
	return strings.Join(s, "; ")
}

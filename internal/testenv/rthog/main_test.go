package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"bench/internal/testenv"

	"bench/internal/child"
)

// TestMain runs rthog itself when the test binary is started as it, with
// the arguments of asMain.
func TestMain(m *testing.M) {
	if args := os.Getenv("RTHOG_AS_MAIN"); args != "" {
		os.Args = append([]string{"rthog"}, strings.Split(args, "\n")...)
		main()
	}
	os.Exit(m.Run())
}

// asMain is the environment that starts the test binary as rthog args.
func asMain(args ...string) []string {
	return append(os.Environ(), "RTHOG_AS_MAIN="+strings.Join(args, "\n"))
}

func TestParseHold(t *testing.T) {
	for _, c := range []struct {
		in   string
		want hold
		bad  bool
	}{
		// the lane's own holds
		{in: "0:175ms/700ms", want: hold{0, 175 * time.Millisecond, 700 * time.Millisecond}},
		{in: "1:275ms/1.1s", want: hold{1, 275 * time.Millisecond, 1100 * time.Millisecond}},
		// no period
		{in: "0:175ms", bad: true},
		// no CPU
		{in: "175ms/700ms", bad: true},
		// a busy time as long as its period would hold the CPU for good
		{in: "0:1s/1s", bad: true},
		// a negative CPU
		{in: "-1:10ms/20ms", bad: true},
		// a busy time that is no duration
		{in: "0:lots/1s", bad: true},
	} {
		got, err := parseHold(c.in)
		if c.bad {
			if err == nil {
				t.Errorf("parseHold(%q) = %v; want an error", c.in, got)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("parseHold(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

func TestVerdict(t *testing.T) {
	h := hold{0, 175 * time.Millisecond, 700 * time.Millisecond}
	for _, c := range []struct {
		ran, planned time.Duration
		want         bool
	}{
		// ran all it was to hold
		{10 * time.Second, 10 * time.Second, true},
		// a little less, as a tick's rounding gives
		{9500 * time.Millisecond, 10 * time.Second, true},
		// throttled to a third: the handicap was not applied
		{3 * time.Second, 10 * time.Second, false},
		// nothing planned (the command ended before the first period)
		{0, 0, true},
	} {
		if got, line := h.verdict(c.ran, c.planned); got != c.want {
			t.Errorf("verdict(%v, %v) = %v (%s); want %v", c.ran, c.planned, got, line, c.want)
		}
	}
}

// TestUnappliedHandicapFails runs rthog as a user that may not make a
// thread real-time: it must exit 1 before the command runs, never run the
// command unloaded.
func TestUnappliedHandicapFails(t *testing.T) {
	testenv.NeedRoot(t, "starts rthog as nobody")
	dir, err := os.MkdirTemp("", "rthog-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "rthog")
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(dir, "ran")
	cmd := exec.Command(bin)
	cmd.Env = asMain("-hold", "0:10ms/100ms", "-for", "10s", "--", "touch", marker)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := child.CombinedOutput(cmd)
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Fatalf("rthog as nobody: exit %d (%v); want 1\n%s", code, err, out)
	}
	if !strings.Contains(string(out), "cannot be applied") {
		t.Errorf("rthog as nobody said %q; want why the handicap cannot be applied", out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("rthog as nobody ran its command unloaded")
	}
}

// TestHandicapRunsCommand holds a CPU while a command runs: rthog exits
// with the command's status and reports its hold. Its loop runs above the
// handicapped lane's (priority 50), so that it holds its CPU as planned
// when the suite itself runs handicapped.
func TestHandicapRunsCommand(t *testing.T) {
	testenv.NeedRoot(t, "makes a thread real-time")
	for _, c := range []struct {
		argv string
		want int
	}{
		{"true", 0},
		{"false", 1},
	} {
		cmd := exec.Command(os.Args[0])
		cmd.Env = asMain("-hold", "0:1ms/20ms", "-priority", "50", "-for", "1m", "--", "sh", "-c", "sleep 0.2; "+c.argv)
		out, _ := child.CombinedOutput(cmd)
		if code := cmd.ProcessState.ExitCode(); code != c.want {
			t.Errorf("rthog -- %s: exit %d; want %d\n%s", c.argv, code, c.want, out)
		}
		if !strings.Contains(string(out), "CPU 0 held 1ms of every 20ms") {
			t.Errorf("rthog -- %s said %q; want its hold reported", c.argv, out)
		}
	}
}

package host

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func TestPerfRule(t *testing.T) {
	tests := []struct {
		paranoid string
		readErr  error
		root     bool
		refused  string // a part of the error; "" for allowed
	}{
		{"2\n", nil, true, ""},                       // root samples whatever the level
		{"-1\n", nil, false, ""},                     // anyone at -1
		{"2\n", nil, false, "perf refused"},          // Debian's default, not root
		{"0\n", nil, false, "perf refused"},          // 0 still keeps others' processes out
		{"", os.ErrNotExist, true, "no perf events"}, // a kernel built without them
		{"high\n", nil, true, `reads "high"`},        // a file that does not read
	}
	for _, tt := range tests {
		err := perfRule([]byte(tt.paranoid), tt.readErr, tt.root)
		if (err == nil) != (tt.refused == "") || (err != nil && !strings.Contains(err.Error(), tt.refused)) {
			t.Errorf("perfRule(%q, %v, root %v) = %v; want %q", tt.paranoid, tt.readErr, tt.root, err, tt.refused)
		}
	}
}

// TestStartPerfMissing: without perf in PATH a run's profile is absent,
// with what installs it.
func TestStartPerfMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := (&Host{}).StartPerf(PerfSpec{Role: RoleProxy, Freq: 99, CallGraph: "fp", Dir: t.TempDir()})
	var pe *PerfError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "apt-get install linux-perf") {
		t.Errorf("StartPerf without perf = %v; want a PerfError saying what installs it", err)
	}
}

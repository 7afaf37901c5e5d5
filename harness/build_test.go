package harness

import (
	"runtime"
	"runtime/debug"
	"testing"

	"bench/results"
)

// TestBuildOf: the commit a binary records wins; where it records none,
// the one the Makefile linked in; else none.
func TestBuildOf(t *testing.T) {
	vcs := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "3933942aaaabbbbccccdddd"},
		{Key: "vcs.time", Value: "2026-12-01T10:00:00Z"},
		{Key: "vcs.modified", Value: "true"},
	}}
	bare := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}
	goVersion := runtime.Version()
	for _, c := range []struct {
		name             string
		info             *debug.BuildInfo
		commit, modified string
		want             results.BuildInfo
	}{
		// go build in a checkout: its VCS settings
		{"vcs", vcs, "", "", results.BuildInfo{Version: "(devel)", Revision: "3933942aaaabbbbccccdddd", Time: "2026-12-01T10:00:00Z", Modified: true, Go: goVersion}},
		// the VCS settings win over the linked commit
		{"vcs and linked", vcs, "ffff", "", results.BuildInfo{Version: "(devel)", Revision: "3933942aaaabbbbccccdddd", Time: "2026-12-01T10:00:00Z", Modified: true, Go: goVersion}},
		// -buildvcs=false through the Makefile: the linked commit
		{"linked", bare, "1a2b3c4d", "true", results.BuildInfo{Version: "(devel)", Revision: "1a2b3c4d", Modified: true, Go: goVersion}},
		// linked, clean
		{"linked clean", bare, "1a2b3c4d", "", results.BuildInfo{Version: "(devel)", Revision: "1a2b3c4d", Go: goVersion}},
		// neither: no commit
		{"neither", bare, "", "", results.BuildInfo{Version: "(devel)", Go: goVersion}},
		// a binary with no build information at all
		{"no info", nil, "", "", results.BuildInfo{Go: goVersion}},
	} {
		if got := buildOf(c.info, c.commit, c.modified); got != c.want {
			t.Errorf("buildOf(%s) = %+v; want %+v", c.name, got, c.want)
		}
	}
}

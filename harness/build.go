package harness

import (
	"runtime"
	"runtime/debug"

	"bench/report/results"
)

// Build is the build of this bench, as its binary records it: the
// module's version, and the commit of the checkout it was built from
// (go build records it in a git checkout; -buildvcs=false, or a build
// outside one, records none). The metadata keeps it.
func Build() results.BuildInfo {
	b := results.BuildInfo{Go: runtime.Version()}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.Version = info.Main.Version
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

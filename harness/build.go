package harness

import (
	"runtime"
	"runtime/debug"

	"bench/results"
)

// linkedCommit and linkedModified are the commit of the checkout bench
// was built from and whether it had changes not committed ("true"), as
// the Makefile sets them at link time (-ldflags -X), for a build whose
// binary records no VCS settings (-buildvcs=false, a copy of the tree
// without its .git). Empty in a build that set neither.
var linkedCommit, linkedModified string

// Build is the build of this bench, as its binary records it: the
// module's version, and the commit of the checkout it was built from
// (go build records it in a git checkout; where it recorded none, the
// commit the Makefile linked in; else none, which BuildInfo.String says).
// The metadata keeps it.
func Build() results.BuildInfo {
	info, _ := debug.ReadBuildInfo()
	return buildOf(info, linkedCommit, linkedModified)
}

// buildOf is the build that info records, with the commit linked in
// where info has no VCS settings; info nil where the binary records
// nothing.
func buildOf(info *debug.BuildInfo, commit, modified string) results.BuildInfo {
	b := results.BuildInfo{Go: runtime.Version()}
	if info != nil {
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
	}
	if b.Revision == "" && commit != "" {
		b.Revision, b.Modified = commit, modified == "true"
	}
	return b
}

package proxies

import "bench/results"

// Direct is the "no proxy" baseline: the client talks to the origin and
// the kernel forwards between the namespaces. It runs no process.
type Direct struct{}

func init() {
	declare(Declaration{
		Adapter: Direct{},
		Place:   0,
		// The baseline, in every session: no program to find.
		Columns: []Column{{Name: "no proxy", Kind: "direct", Group: results.Baseline}},
	})
}

var _ Adapter = Direct{}

// Kind is "direct".
func (Direct) Kind() string { return "direct" }

// Modes are those in which the client can reach the origin by itself.
func (Direct) Modes() []results.Mode {
	return []results.Mode{results.HTTP, results.Relay, results.TLSTerm, results.TLSInit}
}

// DefaultBinary is empty: there is nothing to run.
func (Direct) DefaultBinary() string { return "" }

// VersionArgv is nil: the kernel's version is in the session's metadata.
func (Direct) VersionArgv(string) []string { return nil }

// ParseVersion returns "kernel".
func (Direct) ParseVersion([]byte) string { return "kernel" }

// Instance asks for forwarding in the proxy namespace and nothing else.
func (d Direct) Instance(c Column, m results.Mode, site Site) (Instance, error) {
	if _, err := checkInstance(d, c, m); err != nil {
		return Instance{}, err
	}
	return Instance{Forward: true}, nil
}

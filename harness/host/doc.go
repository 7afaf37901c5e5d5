// Package host is the operating-system layer of a session: the network
// namespaces and veth links with their addresses, routes, RPS masks and
// sysctls; the role cgroups on v1 and v2 (cpusets, the proxy's quota and
// peak memory); processes started through a re-exec of the running binary
// that places them in a role's namespace and cgroups before the command
// runs (see proc.go: the package's init does the placement, so every
// binary that starts processes must link this package); readiness and
// stopping; the /proc sampler of the roles' CPU time; the CPU layout and
// the harness's own affinity; the per-prefix lock; Clean for what a
// killed session left; and the checks `bench check` makes of the machine.
//
// It imports no package of this project: what it is told about a
// session's loads or programs comes in as plain values.
package host

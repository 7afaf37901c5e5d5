// Package harness is the only place that touches the operating system:
// network namespaces, veth links, routes, RPS, cgroups, processes, /proc
// sampling, the session loop, CSV writing and cleanup.
package harness

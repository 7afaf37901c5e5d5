// Package harness runs a session: its plan, the loop over the runs, the
// origin, the programs it needs and their versions, the metadata, the
// progress lines, the CSV and resuming. It works the machine through
// package harness/host (namespaces, cgroups, processes, sampling,
// cleanup), which knows nothing of proxies or scenarios.
package harness

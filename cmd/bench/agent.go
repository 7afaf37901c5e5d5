package main

import (
	"fmt"
	"io"
	"os"

	"bench/harness/host"
)

// cmdAgent is bench on a host of its own, started by a session over ssh
// in the private folder DIR it copied bench to: it serves the session's
// calls on its standard input and output until they end, then tears down
// what it made and removes DIR (host.ServeAgent).
func cmdAgent(stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet(host.AgentCommand, stderr, "DIR")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{fmt.Errorf("%s: want the agent's folder, DIR", host.AgentCommand)}
	}
	return host.ServeAgent(os.Stdin, stdout, fs.Arg(0))
}

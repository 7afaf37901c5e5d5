package main

import (
	"fmt"
	"io"

	"bench/harness"
)

func cmdVersion(stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("version", stderr, "\n\nPrints bench's version, the commit it was built from and its Go, as a session's metadata records them.")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("version: unexpected argument %q", fs.Arg(0))}
	}
	_, err := fmt.Fprintf(stdout, "bench %s\n", harness.Build())
	return err
}

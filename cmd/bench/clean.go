package main

import (
	"fmt"
	"io"

	"bench/harness/host"
)

func cmdClean(stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("clean", stderr, "[--prefix bench-]")
	prefix := fs.String("prefix", host.DefaultPrefix, "the prefix of the session's namespaces, links, cgroups and run directories")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("clean: unexpected argument %q", fs.Arg(0))}
	}
	removed, err := host.Clean(*prefix)
	for _, r := range removed {
		fmt.Fprintf(stdout, "removed %s\n", r)
	}
	if err != nil {
		return fmt.Errorf("clean: %w", err)
	}
	if len(removed) == 0 {
		fmt.Fprintf(stdout, "nothing left by a session with prefix %q\n", *prefix)
	}
	return nil
}

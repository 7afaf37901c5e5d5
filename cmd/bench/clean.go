package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"bench/harness/host"
)

func cmdClean(stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("clean", stderr, "[--prefix bench-] [--hosts FILE [--ssh-config FILE] [--accept-new-host-keys]]")
	prefix := fs.String("prefix", host.DefaultPrefix, "the prefix of the session's namespaces, links, cgroups and run directories")
	hf := addHostsFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("clean: unexpected argument %q", fs.Arg(0))}
	}
	if *hf.file != "" {
		return cleanHosts(stdout, hf, *prefix)
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

// cleanHosts removes what sessions with prefix left on each host of the
// file the flags name, and says it host by host.
func cleanHosts(stdout io.Writer, hf hostsFlags, prefix string) error {
	h, err := hf.read()
	if err != nil {
		return err
	}
	var errs []error
	for _, c := range host.CleanHosts(context.Background(), h, hf.sshOf, prefix) {
		for _, r := range c.Removed {
			fmt.Fprintf(stdout, "%s: removed %s\n", c.Dest, r)
		}
		switch {
		case c.Err != nil:
			errs = append(errs, c.Err)
		case len(c.Removed) == 0:
			fmt.Fprintf(stdout, "%s: nothing left by a session with prefix %q\n", c.Dest, prefix)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("clean: %w", err)
	}
	return nil
}

package main

import (
	"bench/history"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

const historySynopsis = `add [--proxy-commit COLUMN=COMMIT]... DIR SESSION.csv

Files a session in the history DIR (docs/nightly.md): its CSV, its
metadata, its runs' folder and its page, when it has them, are copied to
DIR/<machine>/<YYYY-MM-DD>-<session>/ by the machine and the start date its
metadata records, with history.json beside them: the commit bench was built
from (from the metadata) and those of proxies built from a checkout
(--proxy-commit). bench trend DIR reads the history.

A session in the history already, one whose CSV does not read (a truncated
file) or has no metadata beside it, one that did not end, one whose CSV's
count of runs or checksum is not what its end recorded in the metadata (a
session from before they were is filed with a warning), and a session id or
machine label that could name a path (/, .., NUL) are refused (exit 2)
before anything is written: DIR is left as it was. So is a session with a
link anywhere in its files (its CSV, metadata, runs' folder or page), or a
FIFO, a device or a socket: the history takes plain files and folders only,
so that nothing outside the session is copied into a history that gets
published; the copies are 0644, their folders 0755. The session is
copied to a folder in DIR, synced, and renamed into place at the end;
adds to one DIR take its lock in turn (of two adds of one session, the
second is refused), and an add removes what a killed one left.`

func cmdHistory(stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("history", stderr, historySynopsis)
	commits := proxyCommits{}
	fs.Var(commits, "proxy-commit", "the commit a column's proxy was built from, `COLUMN=COMMIT`; once per such column")
	args, help, err := subcommand(fs, "history", "add", args)
	if help || err != nil {
		return err
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return usageError{fmt.Errorf("history add: want DIR SESSION.csv; got %d arguments", fs.NArg())}
	}
	dest, warnings, err := history.Add(fs.Arg(0), fs.Arg(1), commits, time.Now().UTC().Truncate(time.Second))
	for _, w := range warnings {
		fmt.Fprintf(stderr, "bench: warning: %s\n", terminal(w))
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "filed %s\n", dest)
	return err
}

// proxyCommits are --proxy-commit's values: the commit of each column.
type proxyCommits map[string]string

func (p proxyCommits) String() string {
	var s []string
	for c, commit := range p {
		s = append(s, c+"="+commit)
	}
	sort.Strings(s)
	return strings.Join(s, ",")
}

func (p proxyCommits) Set(v string) error {
	i := strings.LastIndex(v, "=")
	if i <= 0 || i == len(v)-1 || strings.ContainsAny(v[i+1:], " \t\n") {
		return fmt.Errorf("want COLUMN=COMMIT, e.g. \"3proxy devel=1a2b3c4\"; got %q", v)
	}
	column := strings.TrimSpace(v[:i])
	if _, ok := p[column]; ok {
		return fmt.Errorf("column %q given twice", column)
	}
	p[column] = v[i+1:]
	return nil
}

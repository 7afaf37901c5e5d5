package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"bench/harness"
	"bench/report/results"
)

const historySynopsis = `add [--proxy-commit COLUMN=COMMIT]... DIR SESSION.csv

Files a session in the history DIR (README.md, "The history"): its CSV, its
metadata, its runs' folder and its page, when it has them, are copied to
DIR/<machine>/<YYYY-MM-DD>-<session>/ by the machine and the start date its
metadata records, with history.json beside them: the commit bench was built
from (from the metadata) and those of proxies built from a checkout
(--proxy-commit). bench trend DIR reads the history.

A session in the history already, one whose CSV does not read (a truncated
file) or has no metadata beside it, and one that did not end are refused
(exit 2) before anything is written: DIR is left as it was. The session is
copied to a folder in DIR and renamed into place at the end.`

func cmdHistory(stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("history", stderr, historySynopsis)
	commits := proxyCommits{}
	fs.Var(commits, "proxy-commit", "the commit the proxy of a column of the session was built from, as `COLUMN=COMMIT`, for history.json; repeat it for each such column, e.g. --proxy-commit \"3proxy devel=1a2b3c4\"")
	switch {
	case len(args) > 0 && args[0] == "add":
		args = args[1:]
	case len(args) > 0 && helpAsked(args[0]):
		fs.Usage()
		return nil
	case len(args) > 0:
		fs.Usage()
		return usageError{fmt.Errorf("history: unknown subcommand %q: want add", args[0])}
	default:
		fs.Usage()
		return usageError{errors.New("history: want a subcommand: add")}
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return usageError{fmt.Errorf("history add: want DIR SESSION.csv; got %d arguments", fs.NArg())}
	}
	s, err := readHistorySession(fs.Arg(1), commits)
	if err != nil {
		return err
	}
	dest, err := s.file(fs.Arg(0), time.Now().UTC())
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

// historySession is a session checked whole, to be filed in a history.
type historySession struct {
	csv   string
	meta  *results.Meta
	entry results.HistoryEntry
}

// readHistorySession reads and checks the session file csv and its
// metadata, and the columns of commits; what it refuses is an
// InputError.
func readHistorySession(csv string, commits proxyCommits) (*historySession, error) {
	if !strings.HasSuffix(csv, ".csv") {
		return nil, &results.InputError{File: csv, Err: errors.New("not a session file: want the .csv that bench run wrote")}
	}
	rows, err := results.ReadFiles([]string{csv})
	if err != nil {
		return nil, err
	}
	metaPath := results.MetaPath(csv)
	meta, err := results.ReadMeta(metaPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &results.InputError{File: csv, Err: fmt.Errorf("its metadata %s is missing: the history files a session by the machine and date that bench run records there", filepath.Base(metaPath))}
	}
	if err != nil {
		return nil, err
	}
	switch {
	case meta.Machine.Label == "" || meta.Session == "":
		return nil, &results.InputError{File: metaPath, Err: errors.New("no machine label or no session id: the history files a session by them")}
	case meta.Ended == nil:
		return nil, &results.InputError{File: metaPath, Err: errors.New("the session did not end (no ended time): continue it with bench run --resume, then file it")}
	}
	for _, r := range rows {
		if r.Machine != meta.Machine.Label || r.Session != meta.Session {
			return nil, &results.InputError{File: csv, Err: fmt.Errorf("a run of machine %q, session %q; its metadata's are %q, %q: the CSV and the metadata of two sessions", r.Machine, r.Session, meta.Machine.Label, meta.Session)}
		}
	}
	var columns []string
	for _, c := range meta.Columns {
		columns = append(columns, c.Name)
	}
	for c := range commits {
		if !slices.Contains(columns, c) {
			return nil, results.BadInput(fmt.Errorf("--proxy-commit: the session has no column %q; its columns: %s", c, strings.Join(columns, ", ")))
		}
	}
	s := &historySession{csv: csv, meta: meta, entry: results.HistoryEntry{ProxyCommits: commits}}
	if meta.Bench != nil {
		s.entry.BenchCommit = meta.Bench.Revision
	}
	return s, nil
}

// file copies the session into its folder in the history root, added at
// added, and returns the folder. The files go to a folder of root's own
// first, renamed into place whole; a session there already is refused
// (an InputError naming the folder).
func (s *historySession) file(root string, added time.Time) (dest string, err error) {
	dest = results.HistoryDir(root, s.meta.Machine.Label, results.HistoryDate(s.meta.Started), s.meta.Session)
	if _, err := os.Lstat(dest); err == nil {
		return "", &results.InputError{File: dest, Err: errors.New("the session is in the history already: remove its folder to file it again")}
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("create the history %s: %w", root, err)
	}
	tmp, err := os.MkdirTemp(root, ".add-")
	if err != nil {
		return "", fmt.Errorf("create a folder in the history %s: %w", root, err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", err
	}
	for _, src := range []string{s.csv, results.MetaPath(s.csv), results.RunsDir(s.csv), harness.PagePath(s.csv)} {
		if err := copyTree(src, filepath.Join(tmp, filepath.Base(src))); errors.Is(err, fs.ErrNotExist) && src != s.csv && src != results.MetaPath(s.csv) {
			continue // a session without runs' files or page
		} else if err != nil {
			return "", err
		}
	}
	s.entry.Added = added
	if err := results.WriteHistoryEntry(tmp, s.entry); err != nil {
		return "", err
	}
	machineDir := filepath.Dir(dest)
	_, statErr := os.Stat(machineDir)
	if err := os.MkdirAll(machineDir, 0o755); err != nil {
		return "", fmt.Errorf("create the machine's folder %s: %w", machineDir, err)
	}
	if err := os.Rename(tmp, dest); err != nil {
		if statErr != nil {
			os.Remove(machineDir) // made for this session alone
		}
		return "", fmt.Errorf("file the session as %s: %w", dest, err)
	}
	return dest, nil
}

// copyTree copies the file or folder src to dst, which it creates.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.Mkdir(to, 0o755)
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("copy %s: not a plain file", path)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("copy %s: %w", path, err)
		}
		if err := os.WriteFile(to, b, 0o644); err != nil {
			return fmt.Errorf("copy %s: %w", path, err)
		}
		return nil
	})
}

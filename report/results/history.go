package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// A history keeps sessions night after night, a folder each, as plain
// files a git repository can hold (README.md, "The history"):
//
//	ROOT/<machine slug>/<YYYY-MM-DD>-<session id>/
//	    <csv>, <csv>.meta.json, <csv without .csv>.runs/, <csv without .csv>.html
//	    history.json (HistoryEntry)
//
// HistoryDir and HistorySessions are the layout; bench history add files
// sessions by the one and bench trend reads them by the other.

// HistoryFile is the name of a history session's HistoryEntry in its folder.
const HistoryFile = "history.json"

// historyDate is the layout of the session's start date in its folder's name.
const historyDate = "2006-01-02"

// HistoryEntry is what a history keeps of a session beyond its own files:
// the commits of the builds it measured and when it was filed.
type HistoryEntry struct {
	// BenchCommit is the commit bench was built from, as the metadata
	// records it; empty where it does not.
	BenchCommit string `json:"bench_commit"`
	// ProxyCommits are the commits of the proxies under test built from
	// a checkout, by column: {"3proxy devel": "abc123"}.
	ProxyCommits map[string]string `json:"proxy_commits"`
	Added        time.Time         `json:"added"`
}

// HistoryDir is the folder, under the history root, of the session id of
// machine that started on date (HistoryDate).
func HistoryDir(root, machine, date, session string) string {
	return filepath.Join(root, Slug(machine), date+"-"+session)
}

// HistoryDate is the date of a session that started at t, as its folder
// names it: the day in UTC.
func HistoryDate(t time.Time) string { return t.UTC().Format(historyDate) }

// HistorySessions lists the session files of the history root
// (root/*/*/*.csv) in the order the sessions started, by their folders'
// dates, and by path for one date. Folders whose names begin with a dot
// (one being filed) are no part of it.
func HistorySessions(root string) ([]string, error) {
	if _, err := os.Stat(root); err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is the InputError's
		}
		return nil, &InputError{File: root, Err: err}
	}
	all, err := filepath.Glob(filepath.Join(root, "*", "*", "*.csv"))
	if err != nil {
		return nil, fmt.Errorf("list the history %s: %w", root, err)
	}
	var out []string
	for _, p := range all {
		session := filepath.Dir(p)
		machine := filepath.Dir(session)
		if !strings.HasPrefix(filepath.Base(session), ".") && !strings.HasPrefix(filepath.Base(machine), ".") {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		di, dj := filepath.Base(filepath.Dir(out[i])), filepath.Base(filepath.Dir(out[j]))
		if di[:min(len(di), len(historyDate))] != dj[:min(len(dj), len(historyDate))] {
			return di < dj
		}
		return out[i] < out[j]
	})
	return out, nil
}

// WriteHistoryEntry writes e as dir's HistoryFile.
func WriteHistoryEntry(dir string, e HistoryEntry) error {
	if e.ProxyCommits == nil {
		e.ProxyCommits = map[string]string{}
	}
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(dir, HistoryFile)
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ReadHistoryEntry reads the HistoryFile of the session folder dir; an
// error is an InputError naming it.
func ReadHistoryEntry(dir string) (*HistoryEntry, error) {
	e := &HistoryEntry{}
	if err := readJSON(filepath.Join(dir, HistoryFile), e); err != nil {
		return nil, err
	}
	return e, nil
}

// ReadHistory reads the HistoryEntry beside the session file csvPath;
// nil when its folder has none (a history filed by other means).
func ReadHistory(csvPath string) (*HistoryEntry, error) {
	e, err := ReadHistoryEntry(filepath.Dir(csvPath))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return e, err
}

// Slug turns a machine label into a file name part: "ARM (M4)" -> "arm-m4".
func Slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// AddToHistory files the session csv in the history root: its CSV,
// metadata, runs' folder and page (those it has) in its HistoryDir, with
// a HistoryEntry of bench's commit from the metadata, proxyCommits (by
// column) and added. It returns the folder. What it refuses is an
// InputError, before anything is written: a session there already, a
// CSV that does not read or has no metadata, a session that did not
// end, a commit for a column the session has not. The files go to a
// folder of root's own first (a dot folder, which HistorySessions
// skips), renamed into place whole.
func AddToHistory(root, csv string, proxyCommits map[string]string, added time.Time) (string, error) {
	s, err := readHistorySession(csv, proxyCommits)
	if err != nil {
		return "", err
	}
	return s.file(root, added)
}

// historySession is a session checked whole, to be filed in a history.
type historySession struct {
	csv   string
	meta  *Meta
	entry HistoryEntry
}

// readHistorySession reads and checks the session file csv and its
// metadata, and the columns of commits; what it refuses is an
// InputError.
func readHistorySession(csv string, commits map[string]string) (*historySession, error) {
	if !strings.HasSuffix(csv, ".csv") {
		return nil, &InputError{File: csv, Err: errors.New("not a session file: want the .csv that bench run wrote")}
	}
	rows, err := ReadFiles([]string{csv})
	if err != nil {
		return nil, err
	}
	metaPath := MetaPath(csv)
	meta, err := ReadMeta(metaPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &InputError{File: csv, Err: fmt.Errorf("its metadata %s is missing: the history files a session by the machine and date that bench run records there", filepath.Base(metaPath))}
	}
	if err != nil {
		return nil, err
	}
	switch {
	case meta.Machine.Label == "" || meta.Session == "":
		return nil, &InputError{File: metaPath, Err: errors.New("no machine label or no session id: the history files a session by them")}
	case meta.Ended == nil:
		return nil, &InputError{File: metaPath, Err: errors.New("the session did not end (no ended time): continue it with bench run --resume, then file it")}
	}
	for _, r := range rows {
		if r.Machine != meta.Machine.Label || r.Session != meta.Session {
			return nil, &InputError{File: csv, Err: fmt.Errorf("a run of machine %q, session %q; its metadata's are %q, %q: the CSV and the metadata of two sessions", r.Machine, r.Session, meta.Machine.Label, meta.Session)}
		}
	}
	var columns []string
	for _, c := range meta.Columns {
		columns = append(columns, c.Name)
	}
	for c := range commits {
		if !slices.Contains(columns, c) {
			return nil, BadInput(fmt.Errorf("--proxy-commit: the session has no column %q; its columns: %s", c, strings.Join(columns, ", ")))
		}
	}
	s := &historySession{csv: csv, meta: meta, entry: HistoryEntry{ProxyCommits: commits}}
	if meta.Bench != nil {
		s.entry.BenchCommit = meta.Bench.Revision
	}
	return s, nil
}

// file copies the session into its folder in the history root, added at
// added, and returns the folder; a session there already is refused (an
// InputError naming the folder).
func (s *historySession) file(root string, added time.Time) (dest string, err error) {
	dest = HistoryDir(root, s.meta.Machine.Label, HistoryDate(s.meta.Started), s.meta.Session)
	if _, err := os.Lstat(dest); err == nil {
		return "", &InputError{File: dest, Err: errors.New("the session is in the history already: remove its folder to file it again")}
	}
	_, noRoot := os.Stat(root)
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
			if noRoot != nil {
				os.Remove(root) // made for this session alone
			}
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", fmt.Errorf("open %s to readers: %w", tmp, err)
	}
	// a session may have no runs' files and no page
	optional := map[string]bool{RunsDir(s.csv): true, PagePath(s.csv): true}
	for _, src := range []string{s.csv, MetaPath(s.csv), RunsDir(s.csv), PagePath(s.csv)} {
		err := copyTree(src, filepath.Join(tmp, filepath.Base(src)))
		if optional[src] && errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", err
		}
	}
	s.entry.Added = added
	if err := WriteHistoryEntry(tmp, s.entry); err != nil {
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

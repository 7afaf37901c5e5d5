package history

import (
	"bench/inputerr"
	"bench/results"
	"encoding/json"
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
)

// A history keeps sessions night after night, a folder each, as plain
// files a git repository can hold (docs/nightly.md, "The history"):
//
//	ROOT/<machine slug>/<YYYY-MM-DD>-<session id>/
//	    <csv>, <csv>.meta.json, <csv without .csv>.runs/, <csv without .csv>.html
//	    history.json (Entry)
//
// Dir and Sessions are the layout; bench history add files
// sessions by the one and bench trend reads them by the other.

// File is the name of a history session's Entry in its folder.
const File = "history.json"

// dateLayout is the layout of the session's start date in its folder's name.
const dateLayout = "2006-01-02"

// Entry is what a history keeps of a session beyond its own files:
// the commits of the builds it measured and when it was filed.
type Entry struct {
	// BenchCommit is the commit bench was built from, as the metadata
	// records it; empty where it does not.
	BenchCommit string `json:"bench_commit"`
	// ProxyCommits are the commits of the proxies under test built from
	// a checkout, by column: {"3proxy devel": "abc123"}.
	ProxyCommits map[string]string `json:"proxy_commits"`
	Added        time.Time         `json:"added"`
}

// Dir is the folder, under the history root, of the session id of
// machine that started on date (Date).
func Dir(root, machine, date, session string) string {
	return filepath.Join(root, results.Slug(machine), date+"-"+session)
}

// Date is the date of a session that started at t, as its folder
// names it: the day in UTC.
func Date(t time.Time) string { return t.UTC().Format(dateLayout) }

// MaxSessions is the most sessions a history may hold, and
// maxNames the most names Sessions reads in its folders
// (a few a session, and as many more): a history past either is
// refused, so that a crafted one cannot make bench trend list, read and
// search without end.
const (
	MaxSessions = 100000
	maxNames    = 10 * MaxSessions
)

// Sessions lists the session files of the history root
// (root/*/*/*.csv) in the order the sessions started, by their folders'
// dates, and by path for one date. Folders whose names begin with a dot
// (one being filed) are no part of it. Nothing is followed or opened but
// folders: a link where a machine's or a session's folder is expected,
// and a session whose CSV, metadata or File is not a plain file
// (a link, a FIFO, a device), are skipped, each with a warning. A root
// that is not a folder, that holds no session at that depth (a
// machine's or a session's folder given for the history), or more than
// MaxSessions, is refused: an inputerr.Error naming it.
func Sessions(root string) (sessions, warnings []string, err error) {
	return listSessions(root, MaxSessions, maxNames)
}

// sessions is Sessions with at most maxSessions sessions
// and maxNames names read.
func listSessions(root string, maxSessions, maxNames int) (sessions, warnings []string, err error) {
	fi, err := os.Stat(root)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is the inputerr.Error's
		}
		return nil, nil, &inputerr.Error{File: root, Err: err}
	}
	if !fi.IsDir() {
		return nil, nil, &inputerr.Error{File: root, Err: errors.New("not a folder: a history is the folder bench history add files into, DIR/<machine>/<date>-<session>/<session>.csv")}
	}
	l := &historyLister{root: root, max: maxNames, budget: maxNames, maxSessions: maxSessions}
	machines, err := l.folders(root, "a machine's")
	if err != nil {
		return nil, nil, err
	}
	var out, dirs []string
	for _, m := range machines {
		ds, err := l.folders(m, "a session's")
		if err != nil {
			return nil, nil, err
		}
		dirs = append(dirs, ds...)
		if len(dirs) > maxSessions {
			return nil, nil, &inputerr.Error{File: root, Err: fmt.Errorf("more than %d sessions: a history holds at most %d", maxSessions, maxSessions)}
		}
	}
	for _, d := range dirs {
		files, err := l.read(d)
		if err != nil {
			return nil, nil, err
		}
		for _, f := range files {
			if !strings.HasSuffix(f.Name(), ".csv") || strings.HasPrefix(f.Name(), ".") {
				continue
			}
			p := filepath.Join(d, f.Name())
			if !f.Type().IsRegular() {
				l.warn(p, f.Type(), "where a session's file is expected: skipped, never opened")
				continue
			}
			if l.plainBeside(p, results.MetaPath(p)) && l.plainBeside(p, filepath.Join(d, File)) {
				out = append(out, p)
			}
		}
	}
	if len(out) == 0 {
		return nil, l.warnings, &inputerr.Error{File: root, Err: errors.New("no session in it: a history is the folder bench history add files into, its sessions at DIR/<machine>/<date>-<session>/<session>.csv (a machine's or a session's folder is not)")}
	}
	sort.SliceStable(out, func(i, j int) bool {
		di, dj := filepath.Base(filepath.Dir(out[i])), filepath.Base(filepath.Dir(out[j]))
		if di[:min(len(di), len(dateLayout))] != dj[:min(len(dj), len(dateLayout))] {
			return di < dj
		}
		return out[i] < out[j]
	})
	return out, l.warnings, nil
}

// historyLister reads the folders of the history root for
// Sessions, at most max names in all (budget of them left), for
// a history of at most maxSessions.
type historyLister struct {
	root        string
	max, budget int
	maxSessions int
	warnings    []string
}

// read lists the folder dir's entries, sorted by name, without
// following any of them; past the budget it refuses the history.
func (l *historyLister) read(dir string) ([]fs.DirEntry, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var all []fs.DirEntry
	for {
		ents, err := f.ReadDir(1024)
		all = append(all, ents...)
		if l.budget -= len(ents); l.budget < 0 {
			return nil, &inputerr.Error{File: l.root, Err: fmt.Errorf("more than %d names in its folders: a history holds at most %d sessions", l.max, l.maxSessions)}
		}
		if err == io.EOF || len(ents) == 0 {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	slices.SortFunc(all, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return all, nil
}

// folders lists the folders in dir, what's folders (a machine's, a
// session's), but those whose names begin with a dot; a link or another
// file that is not a plain file is skipped with a warning, plain files
// without one.
func (l *historyLister) folders(dir, what string) ([]string, error) {
	ents, err := l.read(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		switch {
		case strings.HasPrefix(e.Name(), "."):
		case e.IsDir():
			out = append(out, p)
		case !e.Type().IsRegular():
			l.warn(p, e.Type(), "where "+what+" folder is expected: skipped, never followed")
		}
	}
	return out, nil
}

// plainBeside says whether the file p beside the session file csv is a
// plain file or is not there; where it is another (a link, a FIFO), the
// session is skipped with a warning.
func (l *historyLister) plainBeside(csv, p string) bool {
	fi, err := os.Lstat(p)
	if err != nil || fi.Mode().IsRegular() {
		return true
	}
	l.warn(p, fi.Mode(), "beside the session "+csv+": the session is skipped, never opened")
	return false
}

// warn records that path, of mode's type, was skipped, and why.
func (l *historyLister) warn(path string, mode fs.FileMode, why string) {
	l.warnings = append(l.warnings, fmt.Sprintf("%s: %s %s", path, fileKind(mode), why))
}

// WriteEntry writes e as dir's File.
func WriteEntry(dir string, e Entry) error {
	if e.ProxyCommits == nil {
		e.ProxyCommits = map[string]string{}
	}
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(dir, File)
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ReadEntry reads the File of the session folder dir; an
// error is an inputerr.Error naming it.
func ReadEntry(dir string) (*Entry, error) {
	e := &Entry{}
	if err := results.ReadJSON(filepath.Join(dir, File), e); err != nil {
		return nil, err
	}
	return e, nil
}

// Read reads the Entry beside the session file csvPath;
// nil when its folder has none (a history filed by other means).
func Read(csvPath string) (*Entry, error) {
	e, err := ReadEntry(filepath.Dir(csvPath))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return e, err
}

// Add files the session csv in the history root: its CSV,
// metadata, runs' folder and page (those it has) in its Dir, with
// a Entry of bench's commit from the metadata, proxyCommits (by
// column) and added. It returns the folder. What it refuses is an
// inputerr.Error, before anything is written: a session there already, a
// CSV that does not read or has no metadata, a session that did not
// end, a commit for a column the session has not. The files go to a
// folder of root's own first (a dot folder, which Sessions
// skips), renamed into place whole.
//
// A session id or machine label that could name a path is refused
// (results.CheckName), and so is a session whose files are not all plain files
// and folders (a link, a FIFO, a device: checkPlain), so that nothing
// outside the session is copied into the history; a CSV whose count of runs or checksum is not what the
// session's end recorded in its metadata is refused (cut off, or
// changed since), and one from before they were recorded is filed
// with a warning that it could not be checked. Adds to one root take
// its lock in turn, so that of two adds of one session one files it
// and the other is refused; an add removes the folders of adds that
// were killed before it.
func Add(root, csv string, proxyCommits map[string]string, added time.Time) (dest string, warnings []string, err error) {
	s, err := readHistorySession(csv, proxyCommits)
	if err != nil {
		return "", nil, err
	}
	dest, err = s.file(root, added)
	return dest, s.warnings, err
}

// historySession is a session checked whole, to be filed in a history.
type historySession struct {
	csv      string
	meta     *results.Meta
	entry    Entry
	warnings []string
}

// readHistorySession reads and checks the session file csv and its
// metadata, and the columns of commits; what it refuses is an
// inputerr.Error.
func readHistorySession(csv string, commits map[string]string) (*historySession, error) {
	if !strings.HasSuffix(csv, ".csv") {
		return nil, &inputerr.Error{File: csv, Err: errors.New("not a session file: want the .csv that bench run wrote")}
	}
	// plain files only, before any is read: a link would copy what it
	// points to (a key, /proc/self/environ) into the history
	for _, p := range []string{csv, results.MetaPath(csv), results.RunsDir(csv), results.PagePath(csv)} {
		if err := checkPlain(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	rows, err := results.ReadFiles([]string{csv})
	if err != nil {
		return nil, err
	}
	metaPath := results.MetaPath(csv)
	meta, err := results.ReadMeta(metaPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &inputerr.Error{File: csv, Err: fmt.Errorf("its metadata %s is missing: the history files a session by the machine and date that bench run records there", filepath.Base(metaPath))}
	}
	if err != nil {
		return nil, err
	}
	switch {
	case meta.Machine.Label == "" || meta.Session == "":
		return nil, &inputerr.Error{File: metaPath, Err: errors.New("no machine label or no session id: the history files a session by them")}
	case meta.Ended == nil:
		return nil, &inputerr.Error{File: metaPath, Err: errors.New("the session did not end (no ended time): continue it with bench run --resume, then file it")}
	}
	if err := errors.Join(results.CheckName("the session id", meta.Session), results.CheckName("the machine label", meta.Machine.Label)); err != nil {
		return nil, &inputerr.Error{File: metaPath, Err: err}
	}
	n, sum, err := results.CSVSum(csv)
	if err != nil {
		return nil, err
	}
	if b, err := os.ReadFile(csv); err == nil && len(b) > 0 && b[len(b)-1] != '\n' {
		return nil, &inputerr.Error{File: csv, Err: errors.New("its last run is cut off (no end of line): copy it again from where the session wrote it")}
	}
	var warnings []string
	switch {
	case meta.CSVSHA256 == "":
		warnings = append(warnings, fmt.Sprintf("%s: its metadata records no count of runs nor checksum (a session from before they were): filed as it reads, %d runs, unchecked", csv, n))
	case n != meta.Rows:
		return nil, &inputerr.Error{File: csv, Err: fmt.Errorf("%d runs; the session's end recorded %d: a copy cut off? copy it again from where the session wrote it", n, meta.Rows)}
	case sum != meta.CSVSHA256:
		return nil, &inputerr.Error{File: csv, Err: fmt.Errorf("its checksum is not the one the session's end recorded (%s): a copy cut off or changed; copy it again from where the session wrote it", meta.CSVSHA256)}
	}
	for _, r := range rows {
		if r.Machine != meta.Machine.Label || r.Session != meta.Session {
			return nil, &inputerr.Error{File: csv, Err: fmt.Errorf("a run of machine %q, session %q; its metadata's are %q, %q: the CSV and the metadata of two sessions", r.Machine, r.Session, meta.Machine.Label, meta.Session)}
		}
	}
	var columns []string
	for _, c := range meta.Columns {
		columns = append(columns, c.Name)
	}
	for c := range commits {
		if !slices.Contains(columns, c) {
			return nil, inputerr.Bad(fmt.Errorf("--proxy-commit: the session has no column %q; its columns: %s", c, strings.Join(columns, ", ")))
		}
	}
	s := &historySession{csv: csv, meta: meta, entry: Entry{ProxyCommits: commits}, warnings: warnings}
	if meta.Bench != nil {
		s.entry.BenchCommit = meta.Bench.Revision
	}
	return s, nil
}

// file copies the session into its folder in the history root, added at
// added, and returns the folder; a session there already is refused (an
// inputerr.Error naming the folder). It holds root's lock (lockHistory)
// throughout; the folders it made are removed when it fails.
func (s *historySession) file(root string, added time.Time) (dest string, err error) {
	made, err := mkdirs(root)
	if err != nil {
		return "", fmt.Errorf("create the history %s: %w", root, err)
	}
	defer func() {
		if err != nil {
			removeMade(made)
		}
	}()
	unlock, err := lockHistory(root)
	if err != nil {
		return "", err
	}
	defer unlock()
	if err := removeLeftovers(root); err != nil {
		return "", err
	}
	machineDir, err := machineFolder(root, s.meta.Machine.Label)
	if err != nil {
		return "", err
	}
	dest = filepath.Join(machineDir, Date(s.meta.Started)+"-"+s.meta.Session)
	if _, err := os.Lstat(dest); err == nil {
		return "", &inputerr.Error{File: dest, Err: errors.New("the session is in the history already: remove its folder to file it again")}
	}
	tmp, err := os.MkdirTemp(root, addPrefix)
	if err != nil {
		return "", fmt.Errorf("create a folder in the history %s: %w", root, err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", fmt.Errorf("open %s to readers: %w", tmp, err)
	}
	// a session may have no runs' files and no page
	optional := map[string]bool{results.RunsDir(s.csv): true, results.PagePath(s.csv): true}
	for _, src := range []string{s.csv, results.MetaPath(s.csv), results.RunsDir(s.csv), results.PagePath(s.csv)} {
		err := copyTree(src, filepath.Join(tmp, filepath.Base(src)))
		if optional[src] && errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", err
		}
	}
	s.entry.Added = added
	if err := WriteEntry(tmp, s.entry); err != nil {
		return "", err
	}
	if err := syncFile(filepath.Join(tmp, File)); err != nil {
		return "", err
	}
	if err := syncFile(tmp); err != nil {
		return "", err
	}
	machineMade, err := mkdirs(machineDir)
	if err != nil {
		return "", fmt.Errorf("create the machine's folder %s: %w", machineDir, err)
	}
	if err := os.Rename(tmp, dest); err != nil {
		removeMade(machineMade)
		return "", fmt.Errorf("file the session as %s: %w", dest, err)
	}
	return dest, errors.Join(syncFile(machineDir), syncFile(root))
}

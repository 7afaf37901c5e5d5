package results

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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

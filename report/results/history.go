package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The history of sessions: a directory a git repository can hold, a
// folder per machine and in it a folder per session, named by the
// session's start date (UTC) and its id, holding the session's files as
// bench run wrote them and HistoryFile:
//
//	DIR/<machine slug>/<YYYY-MM-DD>-<session id>/<csv>
//	                                             <csv>.meta.json
//	                                             <csv without .csv>.runs/
//	                                             <csv without .csv>.html
//	                                             history.json
//
// bench history add writes it and bench trend reads it; this file alone
// decides its layout.

// HistoryFile is the name of a session's History record in its folder.
const HistoryFile = "history.json"

// History is what a history records of a session beyond its own files:
// the commits of bench and of the proxies it ran, and when the session
// was added.
type History struct {
	BenchCommit  string            `json:"bench_commit"`
	ProxyCommits map[string]string `json:"proxy_commits,omitempty"` // column -> commit
	Added        time.Time         `json:"added"`
}

// MachineSlug is the folder name of a machine in a history: its label in
// lower case, every run of other characters than letters and digits one
// '-' ("Xeon, 2 CPUs" is "xeon-2-cpus").
func MachineSlug(label string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(label) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
			continue
		}
		dash = true
	}
	return b.String()
}

// HistoryDir is the folder of a session in the history at root: the
// machine's slug, then the session's start date (UTC) and its id.
func HistoryDir(root, machine string, date time.Time, session string) string {
	return filepath.Join(root, MachineSlug(machine), date.UTC().Format(time.DateOnly)+"-"+session)
}

// HistorySessions lists the session files of the history at root, every
// root/*/*/*.csv, in the order of their folders' names: by machine, then
// by date.
func HistorySessions(root string) ([]string, error) {
	if _, err := os.Stat(root); err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is the InputError's
		}
		return nil, &InputError{File: root, Err: err}
	}
	paths, err := filepath.Glob(filepath.Join(root, "*", "*", "*.csv"))
	if err != nil {
		return nil, &InputError{File: root, Err: err}
	}
	slices.Sort(paths)
	return paths, nil
}

// ReadHistory reads the History record of the session file csvPath; nil
// when the folder has none.
func ReadHistory(csvPath string) (*History, error) {
	path := filepath.Join(filepath.Dir(csvPath), HistoryFile)
	b, err := ReadInput(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	h := &History{}
	if err := json.Unmarshal(b, h); err != nil {
		return nil, &InputError{File: path, Err: fmt.Errorf("not a history record: %w", err)}
	}
	return h, nil
}

package trend

import (
	"cmp"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"bench/history"
	"bench/inputerr"
	"bench/results"
)

// Session is a session of a history: its file, what it ran on and
// when, and the versions it ran.
type Session struct {
	Path    string
	Machine string    // the tables' label
	ID      string    // the session's id
	Started time.Time // its start
	// Bench is the build of bench that ran it: the history's record of
	// its commit, else the metadata's; empty when neither says.
	Bench string
	// Versions are its columns' versions: the metadata's, with the
	// commit the history records of the column where it does.
	Versions map[string]string
	rows     []results.Row
}

// Date is the session's start date.
func (s *Session) Date() string { return s.Started.UTC().Format(time.DateOnly) }

// ReadHistory reads every session of the history at root, in time
// order, and returns with them the warnings of what it skipped
// (history.Sessions: a link, a FIFO where a session's file is
// expected). A file that cannot be read is an inputerr.Error naming it, and
// so is a history with no session (history.Sessions) or with a
// session twice (the same machine and session id in two files: a
// session folder copied), which names both.
func ReadHistory(root string) ([]Session, []string, error) {
	paths, warnings, err := history.Sessions(root)
	if err != nil {
		return nil, warnings, err
	}
	out := make([]Session, len(paths))
	errs := make([]error, len(paths))
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = readTrendSession(paths[i], &out[i])
			}
		}()
	}
	for i := range paths {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, warnings, err
		}
	}
	type id struct{ machine, session string }
	seen := make(map[id]string, len(out))
	for _, s := range out {
		k := id{s.Machine, s.ID}
		if first, ok := seen[k]; ok {
			return nil, warnings, &inputerr.Error{File: s.Path, Err: fmt.Errorf("the session %q of machine %q is in the history twice, here and in %s: a session counts once; remove one of the two folders", s.ID, s.Machine, first)}
		}
		seen[k] = s.Path
	}
	slices.SortStableFunc(out, func(a, b Session) int {
		return cmp.Or(a.Started.Compare(b.Started), cmp.Compare(a.Machine, b.Machine), cmp.Compare(a.ID, b.ID))
	})
	return out, warnings, nil
}

// readTrendSession reads the session file at p, with its metadata and
// its history record, into s.
func readTrendSession(p string, s *Session) error {
	rows, err := results.ReadFiles([]string{p})
	if err != nil {
		return err
	}
	metas, err := results.ReadMetas([]string{p})
	if err != nil {
		return err
	}
	hist, err := history.Read(p)
	if err != nil {
		return err
	}
	*s = Session{Path: p, Machine: rows[0].Machine, ID: rows[0].Session, rows: rows, Versions: map[string]string{}}
	m := metas[0].Meta
	switch {
	case m != nil:
		s.Started = m.Started
	default:
		s.Started = rows[0].Started
		for _, r := range rows {
			if !r.Started.IsZero() && r.Started.Before(s.Started) {
				s.Started = r.Started
			}
		}
	}
	if s.Started.IsZero() {
		// the folder's date, where neither the metadata nor a run has one
		dir := filepath.Base(filepath.Dir(p))
		d, err := time.Parse(time.DateOnly, dir[:min(len(time.DateOnly), len(dir))])
		if err != nil {
			return &inputerr.Error{File: p, Err: fmt.Errorf("no start time in the session's runs or metadata, nor a date at the start of its folder's name %q", dir)}
		}
		s.Started = d
	}
	if m != nil {
		if m.Bench != nil {
			s.Bench = m.Bench.String()
		}
		for _, c := range m.Columns {
			s.Versions[c.Name] = c.Version
		}
	}
	if hist != nil {
		if hist.BenchCommit != "" {
			s.Bench = hist.BenchCommit
		}
		for col, commit := range hist.ProxyCommits {
			s.Versions[col] = strings.TrimSpace(s.Versions[col] + " " + commit)
		}
	}
	return nil
}

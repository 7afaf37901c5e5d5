package host

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// The files of a session spread over hosts of their own: the session
// writes each here first, beneath its run directory, and sends it to the
// host of the process that reads it before that process starts, at the
// same path (the run directory has the same path on every host); what
// the process wrote comes back when it ends. Only what changed goes
// either way: a file sent is noted as it is here, a file the host has as
// it was sent stays there.

// send sends the host the folders dirs with their files that changed
// here since they were last sent, each with its owner's name.
func (p *placed) send(ctx context.Context, dirs ...string) error {
	var batch AgentFiles
	var stamped []string
	p.sentMu.Lock()
	for _, d := range dirs {
		if d == "" {
			continue
		}
		filepath.WalkDir(d, func(path string, e os.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			info, err := e.Info()
			if err != nil || !e.IsDir() && !e.Type().IsRegular() {
				return nil
			}
			f := AgentFile{Path: path, Dir: e.IsDir(), Owner: ownerOf(info)}
			if !f.Dir {
				st := fileStamp{info.Size(), info.ModTime()}
				if p.sent[path] == st {
					return nil
				}
				if f.Data, err = os.ReadFile(path); err != nil {
					return nil
				}
				p.sent[path] = st
				stamped = append(stamped, path)
			}
			batch.Files = append(batch.Files, f)
			return nil
		})
	}
	p.sentMu.Unlock()
	err := p.remote.Call(ctx, "Put", batch, nil)
	if err != nil {
		p.sentMu.Lock()
		for _, path := range stamped {
			delete(p.sent, path) // sent again next time
		}
		p.sentMu.Unlock()
	}
	return err
}

// bring brings back from the host the files beneath dirs it has that it
// was not sent as they are, written at the same paths here through root
// (this machine's run directory), where each is beneath the folders
// asked for and was not changed here since it was sent.
func (p *placed) bring(ctx context.Context, root *os.Root, dirs ...string) error {
	var ask, got AgentFiles
	ask.Changed = true
	for _, d := range dirs {
		ask.Files = append(ask.Files, AgentFile{Path: d})
	}
	if err := p.remote.Call(ctx, "Get", ask, &got); err != nil {
		return err
	}
	var errs []error
	for _, f := range got.Files {
		if !beneathAny(f.Path, dirs) {
			errs = append(errs, &os.PathError{Op: "bring", Path: f.Path, Err: errors.New("not beneath the folders asked for")})
			continue
		}
		rel, err := relPath(root.Name(), f.Path, false)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		p.sentMu.Lock()
		sent, wasSent := p.sent[f.Path]
		p.sentMu.Unlock()
		if info, err := root.Lstat(rel); wasSent && err == nil && (fileStamp{info.Size(), info.ModTime()}) != sent {
			continue // changed here since: this one's is the newer
		}
		if err := root.MkdirAll(filepath.Dir(rel), 0o755); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := root.WriteFile(rel, f.Data, 0o644); err != nil {
			errs = append(errs, err)
			continue
		}
		if info, err := root.Lstat(rel); err == nil {
			p.sentMu.Lock()
			p.sent[f.Path] = fileStamp{info.Size(), info.ModTime()}
			p.sentMu.Unlock()
		}
	}
	return errors.Join(errs...)
}

// beneathAny says whether path is one of dirs or beneath one.
func beneathAny(path string, dirs []string) bool {
	for _, d := range dirs {
		if rel, err := filepath.Rel(d, path); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return true
		}
	}
	return false
}

// owners are the names of this machine's users by uid, as asked.
var owners sync.Map

// ownerOf is the name of a file's owner, "" for root or one without a
// name here.
func ownerOf(info fs.FileInfo) string {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || st.Uid == 0 {
		return ""
	}
	if name, ok := owners.Load(st.Uid); ok {
		return name.(string)
	}
	name := ""
	if u, err := user.LookupId(strconv.Itoa(int(st.Uid))); err == nil {
		name = u.Username
	}
	owners.Store(st.Uid, name)
	return name
}

// RemoveAll removes dir, beneath the run directory, here and on every
// host of its own that was sent it.
func (h *Host) RemoveAll(dir string) error {
	errs := []error{os.RemoveAll(dir)}
	for _, p := range h.placed {
		p.sentMu.Lock()
		for path := range p.sent {
			if beneathAny(path, []string{dir}) {
				delete(p.sent, path)
			}
		}
		p.sentMu.Unlock()
		errs = append(errs, p.remote.Call(context.Background(), "Remove", AgentFiles{Files: []AgentFile{{Path: dir}}}, nil))
	}
	return errors.Join(errs...)
}

package host

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
)

// The session's files on a host of its own: written, read back and
// removed beneath the run directory only, through an os.Root of it, so
// that no path the session gives, nor a link a role's process planted
// there (a proxy that runs as a user of its own writes in its folder),
// reaches anything outside it.

// AgentFile is a file or folder of the session's on the host: its
// absolute path, beneath the run directory; a file's data; its owner
// by name ("" for root), as the session's machine had it.
type AgentFile struct {
	Path  string
	Data  []byte
	Dir   bool
	Owner string
}

// AgentFiles are files and folders to write, or the paths of files and
// folders to read (Changed: only the files the session did not send as
// they are now).
type AgentFiles struct {
	Files   []AgentFile
	Changed bool
}

// relPath is path relative to the run directory dir, which it must be
// beneath (or be, where self).
func relPath(dir, path string, self bool) (string, error) {
	rel, err := filepath.Rel(dir, filepath.Clean(path))
	switch {
	case err != nil || !filepath.IsAbs(path) || rel == ".." || strings.HasPrefix(rel, "../"):
		return "", fmt.Errorf("%q: not beneath the session's run directory %s", path, dir)
	case rel == "." && !self:
		return "", fmt.Errorf("%q: the session's run directory itself", path)
	}
	return rel, nil
}

// chownName gives the file rel of root to the user name, as the host
// knows it.
func chownName(root *os.Root, rel, name string) error {
	if name == "" {
		return nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return fmt.Errorf("user %q: %w", name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return root.Lchown(rel, uid, gid)
}

// rooted is the host's run directory as an os.Root, and the host.
func (a *Agent) rooted() (*os.Root, *Host, error) {
	h, err := a.opened()
	if err != nil {
		return nil, nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.root == nil {
		if a.root, err = os.OpenRoot(h.RunDir()); err != nil {
			return nil, nil, err
		}
	}
	return a.root, h, nil
}

// Put writes files and makes folders, each with its owner, noting what
// each file is once written (Get's Changed).
func (a *Agent) Put(fs AgentFiles, _ *struct{}) error {
	root, h, err := a.rooted()
	if err != nil {
		return err
	}
	for _, f := range fs.Files {
		rel, err := relPath(h.RunDir(), f.Path, f.Dir)
		if err != nil {
			return err
		}
		dir := rel
		if !f.Dir {
			dir = filepath.Dir(rel)
		}
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if !f.Dir {
			if err := root.WriteFile(rel, f.Data, 0o644); err != nil {
				return err
			}
		}
		if err := chownName(root, rel, f.Owner); err != nil {
			return err
		}
		if info, err := root.Lstat(rel); err == nil && !f.Dir {
			a.mu.Lock()
			a.put[rel] = fileStamp{info.Size(), info.ModTime()}
			a.mu.Unlock()
		}
	}
	return nil
}

// Get answers the files asked: a file's contents, a folder's files
// beneath it, each with its path; what is not there is left out, and
// with Changed what the session sent as it is.
func (a *Agent) Get(ask AgentFiles, got *AgentFiles) error {
	root, h, err := a.rooted()
	if err != nil {
		return err
	}
	for _, f := range ask.Files {
		rel, err := relPath(h.RunDir(), f.Path, true)
		if err != nil {
			return err
		}
		err = fs.WalkDir(root.FS(), rel, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil // gone, or no regular file
			}
			if info, err := d.Info(); err == nil && ask.Changed {
				a.mu.Lock()
				same := a.put[p] == fileStamp{info.Size(), info.ModTime()}
				a.mu.Unlock()
				if same {
					return nil
				}
			}
			data, err := root.ReadFile(p)
			if err != nil {
				return err
			}
			got.Files = append(got.Files, AgentFile{Path: filepath.Join(h.RunDir(), p), Data: data})
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// Remove removes files and folders, what is beneath them too.
func (a *Agent) Remove(fs AgentFiles, _ *struct{}) error {
	root, h, err := a.rooted()
	if err != nil {
		return err
	}
	for _, f := range fs.Files {
		rel, err := relPath(h.RunDir(), f.Path, false)
		if err != nil {
			return err
		}
		if err := root.RemoveAll(rel); err != nil {
			return err
		}
		a.mu.Lock()
		for p := range a.put {
			if p == rel || strings.HasPrefix(p, rel+"/") {
				delete(a.put, p)
			}
		}
		a.mu.Unlock()
	}
	return nil
}

// plainDir checks that path, beneath the run directory, is a folder and
// not a link to one: what a process is started in, or a tmpfs mounted on.
func plainDir(root *os.Root, h *Host, path string) error {
	rel, err := relPath(h.RunDir(), path, true)
	if err != nil {
		return err
	}
	info, err := root.Lstat(rel)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return fmt.Errorf("%s: not a folder", path)
	}
	return nil
}

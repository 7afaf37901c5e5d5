package history

// The store under a history: the lock an add takes, the folders it makes
// and removes on failure, and the synced copy of a session's files.

import (
	"bench/inputerr"
	"bench/results"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// addPrefix begins the name of the folder an add fills before renaming
// it into place; Sessions skips it, and the next add removes one
// a killed add left.
const addPrefix = ".add-"

// lockHistory takes root's lock, an exclusive flock on the folder
// itself (no file that a commit of the history would take in), waiting
// for an add that holds it; the function returned gives it back.
func lockHistory(root string) (func(), error) {
	f, err := os.Open(root)
	if err != nil {
		return nil, fmt.Errorf("lock the history %s: %w", root, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock the history %s: %w", root, err)
	}
	return func() { f.Close() }, nil
}

// removeLeftovers removes the folders of adds to root that were killed
// before they renamed them; called under root's lock, no add is filling
// one.
func removeLeftovers(root string) error {
	left, err := filepath.Glob(filepath.Join(root, addPrefix+"*"))
	if err != nil {
		return err
	}
	for _, d := range left {
		if err := os.RemoveAll(d); err != nil {
			return fmt.Errorf("remove %s, left by an add that did not finish: %w", d, err)
		}
	}
	return nil
}

// machineFolder is the folder of machine label's sessions in root: its
// results.Slug's, unless sessions of another label are filed there (two labels
// of one slug, "ARM (M4)" and "arm m4"), then the slug and the label's
// hash.
func machineFolder(root, label string) (string, error) {
	dir := filepath.Join(root, results.Slug(label))
	metas, err := filepath.Glob(filepath.Join(dir, "*", "*"+results.MetaSuffix))
	if err != nil {
		return "", err
	}
	for _, p := range metas {
		m, err := results.ReadMeta(p)
		if err != nil || m.Machine.Label == label {
			continue
		}
		return filepath.Join(root, results.Slug(label)+"-"+results.LabelHash(label)), nil
	}
	return dir, nil
}

// mkdirs makes dir and the folders above it that are missing, and
// returns those it made, the deepest first.
func mkdirs(dir string) ([]string, error) {
	var made []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || filepath.Dir(d) == d {
			break
		}
		made = append(made, d)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return made, nil
}

// removeMade removes the folders mkdirs made, where they are empty.
func removeMade(made []string) {
	for _, d := range made {
		os.Remove(d)
	}
}

// syncFile flushes the file or folder at path to the disk.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return nil
}

// copyTree copies the plain file or folder src to dst, which it
// creates, and the plain files and folders under it, a file 0644 and a
// folder 0755 whatever the source's modes. It opens each without
// following a link (O_NOFOLLOW, each name under its folder's open
// descriptor), so that a link put in place after checkPlain is refused
// all the same (notPlain), and without waiting on a FIFO (O_NONBLOCK).
func copyTree(src, dst string) error {
	return copyAt(unix.AT_FDCWD, src, src, dst)
}

// copyAt copies name in the folder open as dir (AT_FDCWD: name is a
// path), path for messages, to dst.
func copyAt(dir int, name, path, dst string) error {
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err == unix.ELOOP {
		return notPlain(path, fs.ModeSymlink)
	}
	if err != nil {
		return &fs.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	switch {
	case fi.Mode().IsRegular():
		b, err := io.ReadAll(f)
		if err != nil {
			return fmt.Errorf("copy %s: %w", path, err)
		}
		if err := writeSynced(dst, b); err != nil {
			return fmt.Errorf("copy %s: %w", path, err)
		}
		return nil
	case !fi.IsDir():
		return notPlain(path, fi.Mode())
	}
	if err := os.Mkdir(dst, 0o755); err != nil {
		return err
	}
	if err := os.Chmod(dst, 0o755); err != nil {
		return err
	}
	entries, err := f.ReadDir(-1)
	if err != nil {
		return fmt.Errorf("copy %s: %w", path, err)
	}
	for _, e := range entries {
		if err := copyAt(int(f.Fd()), e.Name(), filepath.Join(path, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// checkPlain refuses (notPlain) the file or folder at path, and
// anything under the folder, that is not a plain file or a folder: a
// link (never followed: Lstat and the folders' entries' types), a FIFO,
// a device, a socket. A path that is not there is an fs.ErrNotExist.
func checkPlain(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case err != nil:
		return err
	case fi.Mode().IsRegular():
		return nil
	case !fi.IsDir():
		return notPlain(path, fi.Mode())
	}
	return filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && !d.Type().IsRegular() {
			return notPlain(p, d.Type())
		}
		return nil
	})
}

// notPlain is the inputerr.Error of a session's file at path that is of
// mode's type, neither a plain file nor a folder.
func notPlain(path string, mode fs.FileMode) error {
	return &inputerr.Error{File: path, Err: fmt.Errorf("%s: the history takes a session's plain files and folders only; links are refused so that nothing outside the session is copied into a history that gets published", fileKind(mode))}
}

// fileKind names the type of a file of mode that is not a plain file.
func fileKind(mode fs.FileMode) string {
	switch {
	case mode&fs.ModeSymlink != 0:
		return "a symbolic link"
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeDevice != 0:
		return "a device"
	case mode.IsDir():
		return "a folder"
	}
	return "not a plain file"
}

// writeSynced writes b as the file path, flushed to the disk.
func writeSynced(path string, b []byte) error {
	f, err := results.CreateFile(path)
	if err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil { // whatever the umask
		f.Close()
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}

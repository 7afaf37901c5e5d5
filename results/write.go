package results

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// Writer appends rows to a session file, syncing each one so that a
// killed session loses at most the run in flight.
type Writer struct {
	f    *os.File
	w    *csv.Writer
	path string
}

// Append opens the session file path for appending, writing the header
// if the file is new or empty. A file that is there must be a regular
// file of this user's with no other name: a link at path is not
// followed, and one planted there is refused.
func Append(path string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open session file: %w", err)
	}
	if err := ownFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("open session file %s: %w", path, err)
	}
	return newWriter(f, path)
}

// Create creates the session file path, failing with an error that
// errors.Is os.ErrExist when it (or a link) is there: two sessions never
// write one file.
func Create(path string) (*Writer, error) {
	f, err := CreateFile(path)
	if err != nil {
		return nil, fmt.Errorf("open session file: %w", err)
	}
	return newWriter(f, path)
}

func newWriter(f *os.File, path string) (*Writer, error) {
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	c := &Writer{f: f, w: csv.NewWriter(f), path: path}
	if st.Size() == 0 {
		if err := c.write(Header); err != nil {
			f.Close()
			return nil, err
		}
	}
	return c, nil
}

// ownFile checks that f is a regular file of this user's with one name,
// not a device or a pipe planted in its place, nor another user's file
// or a hard link to one.
func ownFile(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.Mode().IsRegular():
		return fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	case !ok || int(st.Uid) != os.Geteuid():
		return fmt.Errorf("the file is not this user's")
	case st.Nlink != 1:
		return fmt.Errorf("the file has %d names", st.Nlink)
	}
	return nil
}

// Write writes one row and syncs it to disk.
func (c *Writer) Write(r Row) error {
	return c.write(r.Record())
}

func (c *Writer) write(rec []string) error {
	if err := c.w.Write(rec); err != nil {
		return fmt.Errorf("write %s: %w", c.path, err)
	}
	c.w.Flush()
	if err := c.w.Error(); err != nil {
		return fmt.Errorf("write %s: %w", c.path, err)
	}
	if err := c.f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", c.path, err)
	}
	return nil
}

// Close closes the file; it may be called more than once.
func (c *Writer) Close() error {
	if c == nil || c.f == nil {
		return nil
	}
	err := c.f.Close()
	c.f = nil
	return err
}

// CreateFile creates the file path for writing, mode 0644, failing with
// an error that errors.Is os.ErrExist where anything is there, a link
// among others: it never writes through a link, so that a file root
// writes is one it made. Every file of a session and of the history is
// made by it, or by WriteFile.
func CreateFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
}

// WriteFile writes b as the file path whole: into path+".tmp", made by
// CreateFile (one a killed writer left is removed first, not followed),
// synced, then renamed over path, which replaces whatever path was, a
// link included, without writing through it.
func WriteFile(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("write %s: %w", path, err)
	}
	f, err := CreateFile(tmp)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, err = f.Write(b)
	if err = errors.Join(err, f.Sync(), f.Close()); err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// CheckDir checks that the folder dir, where a session writes its files,
// is one no other user can plant a link in: owned by this user, by root
// or by the user sudo ran this for (who holds root already), and
// writable by no one else unless its sticky bit keeps them from each
// other's names. A link at dir is followed only where one of them made
// it. what names the folder in the error ("--out").
func CheckDir(what, dir string) error {
	fi, err := os.Lstat(dir)
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if err = trustedOwner(fi); err != nil {
			return fmt.Errorf("%s %s: a link %w", what, dir, err)
		}
		fi, err = os.Stat(dir)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s %s: not a folder", what, dir)
	}
	if err := trustedOwner(fi); err != nil {
		return fmt.Errorf("%s %s: a folder %w", what, dir, err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	switch perm := fi.Mode(); {
	case perm&fs.ModeSticky != 0:
	case perm&0o002 != 0:
		return fmt.Errorf("%s %s: a folder every user may write in (mode %o), where another user could plant a link to a file this one would write: chmod o-w it or give another", what, dir, perm.Perm())
	case perm&0o020 != 0 && !trusted(st.Gid, "SUDO_GID", os.Getegid()):
		return fmt.Errorf("%s %s: a folder group %s may write in (mode %o), where another user could plant a link to a file this one would write: chmod g-w it or give another", what, dir, groupName(st.Gid), perm.Perm())
	}
	return nil
}

// trustedOwner checks that fi is owned by this user, root or the user
// sudo ran this for.
func trustedOwner(fi fs.FileInfo) error {
	st := fi.Sys().(*syscall.Stat_t)
	if trusted(st.Uid, "SUDO_UID", os.Geteuid()) {
		return nil
	}
	name := strconv.Itoa(int(st.Uid))
	if u, err := user.LookupId(name); err == nil {
		name = u.Username
	}
	return fmt.Errorf("of user %s's, who could plant a link there to a file this user would write: give a folder of your own", name)
}

// trusted reports whether id is root's, own, or the one the environment
// variable sudo sets names.
func trusted(id uint32, sudo string, own int) bool {
	if id == 0 || int(id) == own {
		return true
	}
	s, ok := os.LookupEnv(sudo)
	return ok && s == strconv.Itoa(int(id))
}

func groupName(gid uint32) string {
	if g, err := user.LookupGroupId(strconv.Itoa(int(gid))); err == nil {
		return g.Name
	}
	return strconv.Itoa(int(gid))
}

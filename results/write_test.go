package results

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"bench/internal/testenv"
)

// victim is a file of the test's own, outside the folder written, that a
// link planted there points at; checkVictim checks it was left as it was.
func victim(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(p, []byte("not yours\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func checkVictim(t *testing.T, what, p string) {
	t.Helper()
	if b, err := os.ReadFile(p); err != nil || string(b) != "not yours\n" {
		t.Errorf("%s: the file a planted link points at holds %q, %v; want it untouched", what, b, err)
	}
}

func plant(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// A link planted at the name of a file a session writes, or at the name
// of the file it writes first beside it, is never written through: the
// write goes around it (the file made and renamed over the link) or
// fails, and the file linked to is untouched.
func TestWritesFollowNoLink(t *testing.T) {
	writers := []struct {
		what  string
		write func(path string) error
	}{
		{"metadata", func(path string) error { return (&Meta{Session: "s"}).Write(path) }},
		{"run data", func(path string) error {
			return WriteRunData(filepath.Dir(path), strings.TrimSuffix(filepath.Base(path), RunDataSuffix), RunData{})
		}},
		{"a file", func(path string) error { return WriteFile(path, []byte("mine\n")) }},
	}
	for _, w := range writers {
		for _, at := range []string{"", ".tmp"} {
			dir, v := t.TempDir(), victim(t)
			path := filepath.Join(dir, "x"+RunDataSuffix)
			plant(t, v, path+at)
			err := w.write(path)
			what := w.what + ", a link at its name" + at
			checkVictim(t, what, v)
			if err != nil {
				t.Errorf("%s: %v; want the link replaced", what, err)
				continue
			}
			if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
				t.Errorf("%s: %s is %v, %v; want a regular file", what, path, fi.Mode(), err)
			}
			if _, err := os.Lstat(path + ".tmp"); err == nil {
				t.Errorf("%s: %s.tmp left", what, path)
			}
		}
	}
}

// A new session file is never made through a link; a session resumed
// appends only to a regular file of its own with no other name.
func TestSessionFileFollowsNoLink(t *testing.T) {
	dir, v := t.TempDir(), victim(t)
	path := filepath.Join(dir, "m-s.csv")
	plant(t, v, path)
	if w, err := Create(path); err == nil {
		w.Close()
		t.Errorf("Create through a link: no error")
	}
	if w, err := Append(path); err == nil {
		w.Close()
		t.Errorf("Append through a link: no error")
	}
	checkVictim(t, "the session file", v)

	os.Remove(path)
	if err := os.Link(v, path); err != nil {
		t.Fatal(err)
	}
	if w, err := Append(path); err == nil {
		w.Close()
		t.Errorf("Append to a file with another name: no error")
	}
	checkVictim(t, "the session file, a hard link", v)

	os.Remove(path)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	// A reader, so that a writer's open does not wait for one.
	r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if w, err := Append(path); err == nil {
		w.Close()
		t.Errorf("Append to a pipe: no error")
	}
}

// A session resumed does not append to a file another user owns.
func TestAppendRefusesAnotherUsersFile(t *testing.T) {
	testenv.NeedRoot(t, "gives a file to another user")
	path := filepath.Join(t.TempDir(), "m-s.csv")
	if err := os.WriteFile(path, []byte(strings.Join(Header, ",")+"\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if w, err := Append(path); err == nil || !strings.Contains(err.Error(), "not this user's") {
		w.Close()
		t.Errorf("Append to another user's file: %v; want it refused", err)
	}
}

// A folder another user owns, or may write in without the sticky bit,
// is refused, and says why; the session's own, and /tmp, are not.
func TestCheckDir(t *testing.T) {
	testenv.NeedRoot(t, "gives folders to another user")
	t.Setenv("SUDO_UID", "")
	t.Setenv("SUDO_GID", "")
	const nobody = 65534
	mk := func(mode os.FileMode, uid, gid int) string {
		d := filepath.Join(t.TempDir(), "out")
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(d, uid, gid); err != nil {
			t.Fatal(err)
		}
		return d
	}
	link := func(to string, uid int) string {
		l := filepath.Join(t.TempDir(), "link")
		plant(t, to, l)
		if err := os.Lchown(l, uid, uid); err != nil {
			t.Fatal(err)
		}
		return l
	}
	own := mk(0o755, 0, 0)
	for _, c := range []struct {
		what, dir, says string
	}{
		{"own", own, ""},
		{"own, group-writable", mk(0o775, 0, 0), ""},
		{"sticky, every user's", mk(os.ModeSticky|0o777, 0, 0), ""},
		{"/tmp", "/tmp", ""},
		{"own link", link(own, 0), ""},
		{"another user's", mk(0o755, nobody, 0), "of user nobody's"},
		{"writable by every user", mk(0o777, 0, 0), "every user may write in (mode 777)"},
		{"writable by another group", mk(0o775, 0, nobody), "may write in (mode 775)"},
		{"another user's link", link(own, nobody), "a link of user nobody's"},
		{"a file", victim(t), "not a folder"},
	} {
		err := CheckDir("--out", c.dir)
		switch {
		case c.says == "" && err != nil:
			t.Errorf("%s: %v; want it taken", c.what, err)
		case c.says != "" && (err == nil || !strings.Contains(err.Error(), c.says) || !strings.HasPrefix(err.Error(), "--out "+c.dir)):
			t.Errorf("%s: %v; want an error naming --out %s and saying %q", c.what, err, c.dir, c.says)
		}
	}
}

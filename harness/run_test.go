package harness

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"bench/harness/host"
	"bench/inputerr"
	"bench/internal/testenv"
	"bench/proxies"
	"bench/results"
)

// The files a run keeps beside the session's (its tool's output, the
// proxy's log, configuration and command line, its profile) are never
// written through a link planted at their names: the file linked to is
// untouched and each name holds what the run kept.
func TestRunsFilesFollowNoLink(t *testing.T) {
	out, dir := t.TempDir(), t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("not yours\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "load"), 0o755); err != nil {
		t.Fatal(err)
	}
	for p, b := range map[string]string{"load/wrk.out": "the output\n", "proxy.log": "the log\n"} {
		if err := os.WriteFile(filepath.Join(dir, p), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const name = "0001-nginx-http-ka-1k-1"
	kept := map[string]string{
		".load.wrk.out": "the output\n", ".proxy.log": "the log\n",
		".proxy.nginx.conf": "events {}\n", ".proxy.argv": "nginx -g daemon off;\n",
		results.FoldedSuffix: "",
	}
	for suffix := range kept {
		if err := os.Symlink(victim, filepath.Join(out, name+suffix)); err != nil {
			t.Fatal(err)
		}
	}
	s := &runner{OutputDir: out}
	s.keep(dir, name, errors.New("the proxy exited"))
	s.keepConfig(name, []end{{role: host.RoleProxy, inst: proxies.Instance{
		Files: []proxies.File{{Path: "nginx.conf", Data: []byte("events {}\n")}},
		Argv:  []string{"nginx", "-g", "daemon off;"},
	}}})
	if err := writeProfile(filepath.Join(out, name), nil); err != nil {
		t.Errorf("writeProfile: %v", err)
	}
	if b, err := os.ReadFile(victim); err != nil || string(b) != "not yours\n" {
		t.Errorf("the file the links point at holds %q, %v; want it untouched", b, err)
	}
	for suffix, want := range kept {
		p := filepath.Join(out, name+suffix)
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s: %v; want a regular file, not a link", p, err)
			continue
		}
		if b, _ := os.ReadFile(p); string(b) != want {
			t.Errorf("%s holds %q; want %q", p, b, want)
		}
	}
}

// A session's folder another user may write in, or a runs folder that is
// another user's link, is refused as bad input, and nothing is written
// through it.
func TestOutDirsRefused(t *testing.T) {
	testenv.NeedRoot(t, "gives a link to another user")
	t.Setenv("SUDO_UID", "")
	open := filepath.Join(t.TempDir(), "open")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	out, elsewhere := t.TempDir(), t.TempDir()
	runs := filepath.Join(out, "m-s.runs")
	if err := os.Symlink(elsewhere, runs); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(runs, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ out, runs string }{
		{open, filepath.Join(open, "m-s.runs")},
		{out, runs},
	} {
		err := makeOutDirs(c.out, c.runs)
		if !errors.As(err, new(*inputerr.Error)) {
			t.Errorf("makeOutDirs(%s, %s) = %v; want it refused as bad input", c.out, c.runs, err)
		}
	}
	if _, err := os.Stat(filepath.Join(open, "m-s.runs")); err == nil {
		t.Errorf("a runs folder was made in %s, a folder every user may write in", open)
	}
}

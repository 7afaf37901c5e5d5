// The Makefile's set-up commands, run as `sudo make ...` runs them: with
// sudo's secure_path, which holds neither /usr/local/go/bin nor the user's
// own directories.
package bench_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"bench/harness"
	"bench/internal/testenv"

	"bench/internal/child"
)

// securePath is sudo's secure_path on Debian and Ubuntu.
const securePath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// makeEnv is the environment sudo gives make: secure_path, no GO, no
// SUDO_USER (the test runs as whoever runs it), and extra.
func makeEnv(path string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "PATH", "GO", "GO_SEARCH", "SUDO_USER", "MAKEFLAGS", "MAKELEVEL":
			continue
		}
		env = append(env, kv)
	}
	return append(append(env, "PATH="+path), extra...)
}

func runMake(t *testing.T, env []string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	mk, lerr := exec.LookPath("make")
	if lerr != nil {
		testenv.Skip(t, "make not installed: %v", lerr)
	}
	cmd := exec.Command(mk, args...)
	cmd.Env = env
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err = child.Run(cmd)
	return o.String(), e.String(), err
}

// goroot is the toolchain that runs this test.
func goroot(t *testing.T) string {
	t.Helper()
	out, err := child.Output(exec.Command("go", "env", "GOROOT"))
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// noDistributionGo skips where a go on secure_path would be found first.
func noDistributionGo(t *testing.T) {
	t.Helper()
	for _, dir := range filepath.SplitList(securePath) {
		if _, err := os.Stat(filepath.Join(dir, "go")); err == nil {
			testenv.Skip(t, "%s/go is on secure_path and is tried first", dir)
		}
	}
}

// TestMakeFindsGoOutsidePath: with secure_path, the targets that build
// use a Go that is in a directory outside it.
func TestMakeFindsGoOutsidePath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "go", "bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	goBin := filepath.Join(dir, "go")
	if err := os.Symlink(filepath.Join(goroot(t), "bin", "go"), goBin); err != nil {
		t.Fatal(err)
	}
	noDistributionGo(t)
	env := makeEnv(securePath, "GO_SEARCH="+dir)
	out, errOut, err := runMake(t, env, "-n", "build", "modules", "test")
	if err != nil {
		t.Fatalf("make -n build modules test: %v\n%s", err, errOut)
	}
	for _, want := range []string{
		goBin + " build -buildvcs=auto -ldflags \"-X bench/harness.linkedCommit=",
		"-o bin/bench ./cmd/bench",
		goBin + " mod download",
		goBin + " vet ./...",
		goBin + " test ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("make -n printed no %q:\n%s", want, out)
		}
	}

	// And for real: make build with that Go builds bench.
	out, errOut, err = runMake(t, env, "build")
	if err != nil {
		t.Fatalf("make build: %v\n%s%s", err, out, errOut)
	}
	if _, err := os.Stat("bin/bench"); err != nil {
		t.Errorf("make build made no bin/bench: %v", err)
	}
}

// TestMakeDefaultSearch: with secure_path and the default search, make
// finds the Go at /usr/local/go/bin, where Go's release archive goes.
func TestMakeDefaultSearch(t *testing.T) {
	noDistributionGo(t)
	root := goroot(t)
	if root != "/usr/local/go" {
		testenv.Skip(t, "this Go is at %s, not /usr/local/go", root)
	}
	out, errOut, err := runMake(t, makeEnv(securePath), "-n", "build")
	if err != nil {
		t.Fatalf("make -n build: %v\n%s", err, errOut)
	}
	if !strings.Contains(out, "/usr/local/go/bin/go build") {
		t.Errorf("make -n build did not use /usr/local/go/bin/go:\n%s", out)
	}
}

// TestMakeWithoutGo: with no Go anywhere, a target that builds stops with
// one line that says what is missing and where it looked, before it
// installs anything.
func TestMakeWithoutGo(t *testing.T) {
	// A PATH with the tools scripts/find-go uses, and no go.
	bin := t.TempDir()
	for _, tool := range []string{"sh", "sed", "sort", "dirname", "tail", "getent", "cut", "id", "timeout", "su"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	for _, target := range []string{"build", "test", "bench", "modules"} {
		out, errOut, err := runMake(t, makeEnv(bin, "GO_SEARCH="+t.TempDir()), target)
		if err == nil {
			t.Fatalf("make %s succeeded without Go:\n%s%s", target, out, errOut)
		}
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		if len(lines) != 1 || out != "" {
			t.Errorf("make %s printed more than one line:\n%s%s", target, out, errOut)
		}
		for _, want := range []string{"no Go 1.", "or later", "looked at PATH (" + bin + ")", "GO=/path/to/go"} {
			if !strings.Contains(errOut, want) {
				t.Errorf("make %s: %q lacks %q", target, errOut, want)
			}
		}
		if strings.Contains(errOut, "127") {
			t.Errorf("make %s: %q", target, errOut)
		}
	}
}

// TestMakeRefusesOldGo: a Go older than go.mod's go line is named, not
// used.
func TestMakeRefusesOldGo(t *testing.T) {
	old := filepath.Join(t.TempDir(), "go")
	if err := os.WriteFile(old, []byte("#!/bin/sh\necho go version go1.19.8 linux/amd64\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, errOut, err := runMake(t, makeEnv(securePath, "GO="+old), "build")
	if err == nil {
		t.Fatal("make build succeeded with Go 1.19")
	}
	if want := old + " is 1.19.8"; !strings.Contains(errOut, want) {
		t.Errorf("%q lacks %q", errOut, want)
	}
}

// TestDepsPerFamily: scripts/deps, which make deps runs, picks the
// family of the system from its os-release as the harness does, installs
// the harness's packages of that family, with apt-get or dnf, and EPEL
// first on RHEL's rebuilds; a system of neither family is refused.
func TestDepsPerFamily(t *testing.T) {
	for _, c := range []struct {
		file     string
		commands []string // the commands it would run, package lists left out
	}{
		{"debian-12", []string{"apt-get update -qq", "apt-get install -y -qq --no-install-recommends"}},
		{"ubuntu-24.04", []string{"apt-get update -qq", "apt-get install -y -qq --no-install-recommends"}},
		{"almalinux-10", []string{"dnf install -y epel-release", "crb enable", "dnf -q makecache", "dnf install -y"}},
		{"rocky-9", []string{"dnf install -y epel-release", "crb enable", "dnf -q makecache", "dnf install -y"}},
		{"fedora-42", []string{"dnf -q makecache", "dnf install -y"}},
	} {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join("testdata", "os-release", c.file)
			rel, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("sh", "scripts/deps", "--dry-run")
			cmd.Env = append(os.Environ(), "OS_RELEASE="+path)
			out, err := child.CombinedOutput(cmd)
			if err != nil {
				t.Fatalf("scripts/deps --dry-run: %v\n%s", err, out)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			family := harness.OSFamily(string(rel))
			want := strings.Join(harness.Packages(family), " ")
			if len(lines) < 2 || lines[0] != "family: "+string(family) || lines[1] != "packages: "+want {
				t.Fatalf("scripts/deps --dry-run printed\n%s\nwant the family %s and the packages %s", out, family, want)
			}
			var got []string
			for _, l := range lines[2:] {
				got = append(got, strings.TrimSpace(strings.TrimSuffix(l, want)))
				if strings.HasSuffix(l, "install -y "+want) || strings.HasSuffix(l, "--no-install-recommends "+want) {
					continue
				}
				if strings.Contains(l, "install") && !strings.Contains(l, "epel-release") {
					t.Errorf("%q does not install the family's packages %s", l, want)
				}
			}
			if strings.Join(got, "\n") != strings.Join(c.commands, "\n") {
				t.Errorf("commands:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.commands, "\n"))
			}
		})
	}
	cmd := exec.Command("sh", "scripts/deps", "--dry-run")
	cmd.Env = append(os.Environ(), "OS_RELEASE="+filepath.Join("testdata", "os-release", "alpine-3.20"))
	if out, err := child.CombinedOutput(cmd); err == nil || !strings.Contains(string(out), "Alpine Linux v3.20 is neither") {
		t.Errorf("scripts/deps on Alpine: %v\n%s", err, out)
	}
}

// TestDepsSkipsMissing: a package the system's repositories do not have
// (dante-server on Debian 13 and in a repository without EPEL's) is
// looked up first, skipped with a warning that names the program a
// session goes without, and every other package installs. The package
// managers are stand-ins that log what they are asked.
func TestDepsSkipsMissing(t *testing.T) {
	testenv.NeedRoot(t, "scripts/deps installs only as root")
	for _, file := range []string{"debian-13", "almalinux-10"} {
		t.Run(file, func(t *testing.T) {
			bin := t.TempDir()
			logFile := filepath.Join(bin, "log")
			stubs := map[string]string{
				// nothing is installed yet
				"dpkg-query": "exit 1",
				"rpm":        "exit 1",
				"apt-cache": `[ "$1" = policy ] || exit 1
if [ "$2" = dante-server ]; then echo "$2:"; echo "  Installed: (none)"; echo "  Candidate: (none)"
else echo "$2:"; echo "  Installed: (none)"; echo "  Candidate: 1.0-1"; fi`,
				"apt-get": `echo "apt-get $*" >>` + logFile,
				"dnf": `if [ "$1 $2 $3" = "-q -C info" ]; then [ "$4" != dante-server ]; exit; fi
echo "dnf $*" >>` + logFile,
				"crb": `echo "crb $*" >>` + logFile,
			}
			for name, body := range stubs {
				if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command("sh", "scripts/deps")
			cmd.Env = append(os.Environ(), "OS_RELEASE="+filepath.Join("testdata", "os-release", file), "PATH="+bin+":"+os.Getenv("PATH"))
			out, err := child.CombinedOutput(cmd)
			if err != nil {
				t.Fatalf("scripts/deps: %v\n%s", err, out)
			}
			if !strings.Contains(string(out), "warning: dante-server is not in this system's repositories: skipped, so there is no danted") {
				t.Errorf("scripts/deps printed\n%s\nwant a warning naming dante-server and danted", out)
			}
			logged, _ := os.ReadFile(logFile)
			var install string
			for _, l := range strings.Split(string(logged), "\n") {
				if strings.Contains(l, "install") && !strings.Contains(l, "epel-release") {
					install = l
				}
			}
			fam := harness.OSFamily(readFile(t, filepath.Join("testdata", "os-release", file)))
			for _, p := range harness.Packages(fam) {
				if has := slices.Contains(strings.Fields(install), p); has == (p == "dante-server") {
					t.Errorf("install command %q: has %s = %v", install, p, has)
				}
			}
		})
	}
}

func readFile(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestTestDeps: scripts/deps --tests, which make test-deps runs, installs
// the packages of the programs only the tests run, of the system's
// family, from internal/testenv/packages.txt: on Debian chromium,
// shellcheck and openssh-server, on Fedora its names for them; an
// argument it does not know is refused.
func TestTestDeps(t *testing.T) {
	for file, want := range map[string]string{
		"debian-12": "apt-get install -y -qq --no-install-recommends chromium shellcheck openssh-server",
		"fedora-42": "dnf install -y chromium ShellCheck openssh-server",
	} {
		cmd := exec.Command("sh", "scripts/deps", "--tests", "--dry-run")
		cmd.Env = append(os.Environ(), "OS_RELEASE="+filepath.Join("testdata", "os-release", file))
		out, err := child.CombinedOutput(cmd)
		if err != nil || !strings.Contains(string(out), "\n"+want+"\n") {
			t.Errorf("%s: scripts/deps --tests --dry-run: %v\n%s\nwant the line %q", file, err, out, want)
		}
	}
	out, err := child.CombinedOutput(exec.Command("sh", "scripts/deps", "--test"))
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), "unknown argument --test") {
		t.Errorf("scripts/deps --test: %v\n%s; want exit 2 naming the argument", err, out)
	}
}

package main

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"bench/history"
	"bench/results"
)

// referenceSession is the session the repository keeps under data/.
const referenceSession = "../../data/epyc-2-cpus-2026-12-05.csv"

// historyFixture writes a session in a folder of its own, as bench run
// leaves one: the reference session's first runs, its metadata with a
// build of bench, a runs' folder and a page. It returns the CSV's path.
func historyFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	csv := filepath.Join(dir, filepath.Base(referenceSession))
	lines := strings.SplitAfter(readFile(t, referenceSession), "\n")
	writeFile(t, csv, strings.Join(lines[:6], ""))
	meta, err := results.ReadMeta(results.MetaPath(referenceSession))
	if err != nil {
		t.Fatal(err)
	}
	meta.Bench = &results.BuildInfo{Version: "(devel)", Revision: "0123456789abcdef0123456789abcdef01234567", Go: "go1.26.0"}
	if err := meta.Finish(results.MetaPath(csv)); err != nil { // its runs and checksum, as the session's end records them
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(results.RunsDir(csv), "0001-no-proxy-http-ka-1k-1.load.wrk.out"), "Requests/sec: 33929.56\n")
	writeFile(t, results.PagePath(csv), "<!doctype html>\n")
	return csv
}

// writeFile writes text to path, making its folder.
func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// listing is every file and folder under root with its size and mode, a
// line each.
func listing(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		fmt.Fprintf(&b, "%s %v %d\n", rel, fi.Mode(), fi.Size())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// historyAdd runs bench history add with args and returns its exit
// status and what it printed.
func historyAdd(args ...string) (status int, stdout, stderr string) {
	var out, errs bytes.Buffer
	status = exitStatus(cmdHistory(&out, &errs, append([]string{"add"}, args...)), &errs)
	return status, out.String(), errs.String()
}

// TestHistoryAdd: a session is filed by its machine and date with its
// files and history.json, the commits of bench and of a proxy in it.
func TestHistoryAdd(t *testing.T) {
	csv := historyFixture(t)
	root := filepath.Join(t.TempDir(), "history")
	before := time.Now().UTC()
	status, stdout, stderr := historyAdd("--proxy-commit", "haproxy splice-auto=abc123", root, csv)
	if status != exitOK {
		t.Fatalf("bench history add: exit %d; want 0\n%s", status, stderr)
	}
	dest := filepath.Join(root, "epyc-2-cpus", "2026-12-05-2026-12-05")
	if want := "filed " + dest + "\n"; stdout != want {
		t.Errorf("bench history add printed %q; want %q", stdout, want)
	}
	name := filepath.Base(csv)
	want := strings.Join([]string{
		". drwxr-xr-x",
		name,
		name + ".meta.json",
		"epyc-2-cpus-2026-12-05.html",
		"epyc-2-cpus-2026-12-05.runs",
		"epyc-2-cpus-2026-12-05.runs/0001-no-proxy-http-ka-1k-1.load.wrk.out",
		"history.json",
	}, "\n")
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(listing(t, dest)), "\n") {
		f := strings.Fields(l)
		got = append(got, f[0])
		if f[0] == "." {
			got[0] = f[0] + " " + f[1]
		}
	}
	if strings.Join(got, "\n") != want {
		t.Errorf("the session's folder holds\n%s\nwant\n%s", strings.Join(got, "\n"), want)
	}
	for _, f := range []string{name, name + ".meta.json"} {
		if readFile(t, filepath.Join(dest, f)) != readFile(t, filepath.Join(filepath.Dir(csv), f)) {
			t.Errorf("%s is not the session's", f)
		}
	}
	e, err := history.ReadEntry(dest)
	if err != nil {
		t.Fatal(err)
	}
	if e.BenchCommit != "0123456789abcdef0123456789abcdef01234567" || len(e.ProxyCommits) != 1 || e.ProxyCommits["haproxy splice-auto"] != "abc123" || e.Added.Before(before.Truncate(time.Second)) {
		t.Errorf("history.json = %+v; want bench's commit from the metadata, haproxy splice-auto's abc123, added since %s", *e, before)
	}
	if got, _, err := history.Sessions(root); err != nil || len(got) != 1 || got[0] != filepath.Join(dest, name) {
		t.Errorf("HistorySessions(%q) = %q, %v; want the session filed", root, got, err)
	}
}

// TestHistoryAddRefused: a session twice, a truncated CSV, a CSV without
// its metadata, a session that did not end and a column the session has
// not exit 2, name what was refused and leave the history as it was.
func TestHistoryAddRefused(t *testing.T) {
	csv := historyFixture(t)
	root := t.TempDir()
	if status, _, stderr := historyAdd(root, csv); status != exitOK {
		t.Fatalf("bench history add: exit %d; want 0\n%s", status, stderr)
	}
	dest := filepath.Join(root, "epyc-2-cpus", "2026-12-05-2026-12-05")

	dir := filepath.Dir(csv)
	text := readFile(t, csv)
	truncated := filepath.Join(dir, "truncated", filepath.Base(csv))
	// cut at a comma in the first half of its last line, before its
	// note (which may hold quotes and commas of its own)
	last := strings.LastIndex(strings.TrimSuffix(text, "\n"), "\n") + 1
	writeFile(t, truncated, text[:strings.LastIndex(text[:last+(len(text)-last)/2], ",")])
	writeFile(t, results.MetaPath(truncated), readFile(t, results.MetaPath(csv)))
	noMeta := filepath.Join(dir, "no-meta", filepath.Base(csv))
	writeFile(t, noMeta, text)
	unended := filepath.Join(dir, "unended", filepath.Base(csv))
	writeFile(t, unended, text)
	writeFile(t, results.MetaPath(unended), strings.Replace(readFile(t, results.MetaPath(csv)), `"ended"`, `"no_end"`, 1))

	for _, c := range []struct {
		args []string
		says string // what bench prints
	}{
		// the same session again: the folder it is in
		{[]string{root, csv}, "bench: " + dest + ": the session is in the history already: remove its folder to file it again\n"},
		// a CSV cut in its last line: the line
		{[]string{root, truncated}, "bench: " + truncated + ":6: wrong number of fields\n"},
		// no metadata beside the CSV
		{[]string{root, noMeta}, "bench: " + noMeta + ": its metadata " + filepath.Base(csv) + ".meta.json is missing: the history files a session by the machine and date that bench run records there\n"},
		// a session interrupted and not continued
		{[]string{root, unended}, "bench: " + results.MetaPath(unended) + ": the session did not end (no ended time): continue it with bench run --resume, then file it\n"},
		// a commit for a column the session did not run
		{[]string{"--proxy-commit", "3proxy=abc", root, csv}, "bench: --proxy-commit: the session has no column \"3proxy\"; its columns: no proxy, nginx, haproxy, squid, tinyproxy, dante, stunnel, haproxy splice-auto\n"},
	} {
		before := listing(t, root)
		status, stdout, stderr := historyAdd(c.args...)
		if status != exitUsage || stderr != c.says || stdout != "" {
			t.Errorf("bench history add %q: exit %d, printed %q, %q; want %d, %q", c.args, status, stdout, stderr, exitUsage, c.says)
		}
		if after := listing(t, root); after != before {
			t.Errorf("bench history add %q changed the history from\n%s\nto\n%s", c.args, before, after)
		}
	}
}

// TestHistoryAddFails: a session that cannot be copied whole (its runs'
// folder holds a link to what is not a plain file) exits 2 and leaves
// the history as it was, without the folder it was being copied to, and
// the folders of a history it made not made; one whose machine's folder
// cannot be made exits 1, the history as it was.
func TestHistoryAddFails(t *testing.T) {
	csv := historyFixture(t)
	link := filepath.Join(results.RunsDir(csv), "link")
	if err := os.Symlink("/dev/null", link); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "arm-m4", "2026-10-13-evening", "arm-m4-evening.csv"), "a night before\n")
	before := listing(t, root)
	status, stdout, stderr := historyAdd(root, csv)
	if want := "bench: " + link + ": a symbolic link: the history takes a session's plain files and folders only; links are refused so that nothing outside the session is copied into a history that gets published\n"; status != exitUsage || stdout != "" || stderr != want {
		t.Errorf("bench history add: exit %d, printed %q, %q; want %d, %q", status, stdout, stderr, exitUsage, want)
	}
	if after := listing(t, root); after != before {
		t.Errorf("bench history add changed the history from\n%s\nto\n%s", before, after)
	}
	// a history that was not there, two folders deep, is not there after
	parent := t.TempDir()
	absent := filepath.Join(parent, "H7", "deep")
	if status, _, _ := historyAdd(absent, csv); status != exitUsage {
		t.Errorf("bench history add %s: exit %d; want %d", absent, status, exitUsage)
	}
	if _, err := os.Stat(filepath.Join(parent, "H7")); !os.IsNotExist(err) {
		t.Errorf("bench history add left %s behind: %v", filepath.Join(parent, "H7"), err)
	}
	// the machine's folder is a file
	os.Remove(link)
	blocked := t.TempDir()
	writeFile(t, filepath.Join(blocked, "epyc-2-cpus"), "not a folder\n")
	before = listing(t, blocked)
	if status, _, stderr := historyAdd(blocked, csv); status != exitError {
		t.Errorf("bench history add into a machine's folder that is a file: exit %d; want %d\n%s", status, exitError, stderr)
	}
	if after := listing(t, blocked); after != before {
		t.Errorf("bench history add changed the history from\n%s\nto\n%s", before, after)
	}
}

// TestHistoryAddRefusesLinks: a session whose runs' folder holds a link
// to /proc/self/environ (with a secret in the environment) and a link to
// a key readable by its owner alone is refused (exit 2, the link named),
// and so is a link or a FIFO as any of the session's files: nothing of
// what they point to is in the history, which is as it was. A session
// of plain files is filed 0644 and 0755 whatever the source's modes.
func TestHistoryAddRefusesLinks(t *testing.T) {
	// the environment of a process of its own: /proc/self/environ is
	// what a process was started with
	const secret = "SECRET=a0b1c2d3-environ-secret"
	t.Setenv("SECRET", strings.TrimPrefix(secret, "SECRET="))
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(t.TempDir(), "key")
	const keyText = "-----BEGIN PRIVATE KEY-----a0b1c2d3-key\n"
	if err := os.WriteFile(key, []byte(keyText), 0o600); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if status, _, stderr := historyAdd(root, sessionWith(t, "filed", func(m *results.Meta) { m.Session = "filed" }, nil)); status != exitOK {
		t.Fatalf("bench history add: exit %d; want 0\n%s", status, stderr)
	}
	link := func(target, name string) func(string) string {
		return func(csv string) string {
			if err := os.Remove(name); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			if err := os.Symlink(target, name); err != nil {
				t.Fatal(err)
			}
			return name
		}
	}
	for _, c := range []struct {
		name string
		// craft puts the link in the session of csv and returns the
		// path refused
		craft func(csv string) string
	}{
		{"the crafted runs", func(csv string) string {
			runs := results.RunsDir(csv)
			link(key, filepath.Join(runs, "notes.txt"))(csv)
			return link("/proc/self/environ", filepath.Join(runs, "a.out"))(csv)
		}},
		{"a link to the environment", func(csv string) string {
			return link("/proc/self/environ", filepath.Join(results.RunsDir(csv), "a.out"))(csv)
		}},
		{"a link to a key", func(csv string) string {
			return link(key, filepath.Join(results.RunsDir(csv), "sub", "notes.txt"))(csv)
		}},
		{"the page a link", func(csv string) string { return link(key, results.PagePath(csv))(csv) }},
		{"the runs' folder a link", func(csv string) string {
			d := filepath.Join(t.TempDir(), "runs")
			writeFile(t, filepath.Join(d, "notes.txt"), keyText)
			os.RemoveAll(results.RunsDir(csv))
			return link(d, results.RunsDir(csv))(csv)
		}},
		{"the metadata a link", func(csv string) string {
			real := filepath.Join(t.TempDir(), "meta.json")
			if err := os.Rename(results.MetaPath(csv), real); err != nil {
				t.Fatal(err)
			}
			return link(real, results.MetaPath(csv))(csv)
		}},
		{"the CSV a link", func(csv string) string {
			real := filepath.Join(t.TempDir(), "real.csv")
			if err := os.Rename(csv, real); err != nil {
				t.Fatal(err)
			}
			return link(real, csv)(csv)
		}},
		{"a FIFO in the runs", func(csv string) string {
			p := filepath.Join(results.RunsDir(csv), "fifo.out")
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}},
	} {
		csv := sessionWith(t, "crafted", nil, nil)
		writeFile(t, filepath.Join(results.RunsDir(csv), "sub", "plain.out"), "plain\n")
		refused := c.craft(csv)
		before := listing(t, root)
		var out, errs bytes.Buffer
		cmd := exec.Command(exe, "history", "add", root, csv)
		cmd.Stdout, cmd.Stderr = &out, &errs
		cmd.Run()
		status, stdout, stderr := cmd.ProcessState.ExitCode(), out.String(), errs.String()
		if status != exitUsage || stdout != "" || !strings.HasPrefix(stderr, "bench: "+refused+": ") || !strings.Contains(stderr, "links are refused so that nothing outside the session is copied into a history that gets published") {
			t.Errorf("%s: bench history add: exit %d, printed %q, %q; want %d, %s refused", c.name, status, stdout, stderr, exitUsage, refused)
		}
		if after := listing(t, root); after != before {
			t.Errorf("%s: bench history add changed the history from\n%s\nto\n%s", c.name, before, after)
		}
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if b, err := os.ReadFile(p); err == nil && (strings.Contains(string(b), secret) || strings.Contains(string(b), "a0b1c2d3-key")) {
				t.Errorf("%s: %s holds the secret or the key", c.name, p)
			}
			return nil
		})
	}

	// plain files, a key's mode and a private folder's: filed 0644, 0755
	csv := sessionWith(t, "modes", func(m *results.Meta) { m.Session = "modes" }, nil)
	writeFile(t, filepath.Join(results.RunsDir(csv), "private", "own.out"), "mine\n")
	if err := os.Chmod(filepath.Join(results.RunsDir(csv), "private", "own.out"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(results.RunsDir(csv), "private"), 0o700); err != nil {
		t.Fatal(err)
	}
	status, stdout, stderr := historyAdd(root, csv)
	if status != exitOK {
		t.Fatalf("bench history add: exit %d; want 0\n%s", status, stderr)
	}
	dest := strings.TrimSpace(strings.TrimPrefix(stdout, "filed "))
	filepath.WalkDir(dest, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		if want := map[bool]fs.FileMode{true: fs.ModeDir | 0o755, false: 0o644}[d.IsDir()]; fi.Mode() != want {
			t.Errorf("%s filed %v; want %v", p, fi.Mode(), want)
		}
		return nil
	})
}

// sessionWith writes the fixture's session in a folder of its own with
// its metadata changed by edit and its CSV's text by cut (nil: as it
// is), the metadata's count of runs and checksum the session's end
// recorded of the CSV before the cut. It returns the CSV's path.
func sessionWith(t *testing.T, name string, edit func(*results.Meta), cut func(string) string) string {
	t.Helper()
	src := historyFixture(t)
	csv := filepath.Join(t.TempDir(), name, filepath.Base(src))
	text := readFile(t, src)
	meta, err := results.ReadMeta(results.MetaPath(src))
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(meta)
		// the runs carry the machine and the session the metadata names
		var lines []string
		for i, l := range strings.SplitAfter(text, "\n") {
			if i > 0 && l != "" {
				l = strings.Replace(strings.Replace(l, "EPYC, 2 CPUs", meta.Machine.Label, 1), ",2026-12-05,", ","+meta.Session+",", 1)
			}
			lines = append(lines, l)
		}
		text = strings.Join(lines, "")
	}
	writeFile(t, csv, text)
	if err := meta.Finish(results.MetaPath(csv)); err != nil {
		t.Fatal(err)
	}
	if cut != nil {
		writeFile(t, csv, cut(text))
	}
	return csv
}

// TestHistoryAddChecks: what could name a path is refused, a label
// without a letter of a slug is filed under its hash, a CSV cut off
// (a run short, or inside its last figure) is refused, one from before
// the checks is filed with a warning, and an add removes what a killed
// add left.
func TestHistoryAddChecks(t *testing.T) {
	root := t.TempDir()
	for _, c := range []struct {
		name string
		csv  string
		says string // a part of what bench prints
	}{
		// a session id that climbs out of the history
		{"path id", sessionWith(t, "id", func(m *results.Meta) { m.Session = "x/../../../escaped" }, nil), `the session id "x/../../../escaped" holds a slash`},
		// a machine label that is a path, its slug empty
		{"path label", sessionWith(t, "label", func(m *results.Meta) { m.Machine.Label = "../.." }, nil), `the machine label "../.." holds a slash`},
		// a session id past a file name's room, which failed at the
		// rename with exit 1 once everything was copied
		{"long id", sessionWith(t, "long", func(m *results.Meta) { m.Session = strings.Repeat("s", 300) }, nil), "is 300 bytes long"},
		// the CSV's last run cut off at a line's end
		{"a run short", sessionWith(t, "short", nil, func(s string) string {
			lines := strings.SplitAfter(s, "\n")
			return strings.Join(lines[:len(lines)-2], "")
		}), "4 runs; the session's end recorded 5"},
		// a figure of the last run a digit short (8625.0 read as
		// 8625.), the line's end kept
		{"a figure short", sessionWith(t, "figure", nil, func(s string) string {
			lines := strings.SplitAfter(s, "\n")
			fields := strings.Split(lines[len(lines)-2], ",")
			for i, f := range fields {
				if _, err := strconv.ParseFloat(f, 64); err == nil && len(f) >= 4 {
					fields[i] = f[:len(f)-1]
					break
				}
			}
			lines[len(lines)-2] = strings.Join(fields, ",")
			return strings.Join(lines, "")
		}), "its checksum is not the one the session's end recorded"},
	} {
		before := listing(t, root)
		status, _, stderr := historyAdd(root, c.csv)
		if status != exitUsage || !strings.Contains(stderr, c.says) {
			t.Errorf("%s: bench history add: exit %d, printed %q; want %d, %q", c.name, status, stderr, exitUsage, c.says)
		}
		if after := listing(t, root); after != before {
			t.Errorf("%s: bench history add changed the history from\n%s\nto\n%s", c.name, before, after)
		}
	}

	// two labels without a letter of a slug: two folders, both read
	for _, label := range []string{"ÄÖ 机器", "机器 ÄÖ"} {
		csv := sessionWith(t, "hash", func(m *results.Meta) { m.Machine.Label = label }, nil)
		if status, stdout, stderr := historyAdd(root, csv); status != exitOK || !strings.Contains(stdout, filepath.Join(root, results.Slug(label))) {
			t.Errorf("bench history add of %q: exit %d, printed %q, %q; want 0, filed under %s", label, status, stdout, stderr, results.Slug(label))
		}
	}
	if a, b := results.Slug("ÄÖ 机器"), results.Slug("机器 ÄÖ"); a == b || a == "" {
		t.Errorf("Slug(%q), Slug(%q) = %q, %q; want two names", "ÄÖ 机器", "机器 ÄÖ", a, b)
	}
	if got, _, err := history.Sessions(root); err != nil || len(got) != 2 {
		t.Errorf("HistorySessions = %q, %v; want the two sessions", got, err)
	}

	// a session from before the checks, over an add killed before its
	// rename
	old := sessionWith(t, "old", func(m *results.Meta) { m.Session = "old" }, nil)
	meta, err := results.ReadMeta(results.MetaPath(old))
	if err != nil {
		t.Fatal(err)
	}
	meta.Rows, meta.CSVSHA256 = 0, ""
	if err := meta.Write(results.MetaPath(old)); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, ".add-123", filepath.Base(old)), "a killed add's\n")
	status, stdout, stderr := historyAdd(root, old)
	if status != exitOK || !strings.Contains(stderr, "warning: "+old+": its metadata records no count of runs nor checksum") {
		t.Errorf("bench history add of a session from before the checks: exit %d, printed %q, %q; want 0 and a warning", status, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(root, ".add-123")); !os.IsNotExist(err) {
		t.Errorf("a killed add's folder is still there after an add: %v", err)
	}
}

// TestHistoryAddRace: two adds of one session at once file one copy;
// the other exits 2.
func TestHistoryAddRace(t *testing.T) {
	csv := historyFixture(t)
	root := t.TempDir()
	statuses := make(chan int, 2)
	for range 2 {
		go func() {
			status, _, _ := historyAdd(root, csv)
			statuses <- status
		}()
	}
	a, b := <-statuses, <-statuses
	if min(a, b) != exitOK || max(a, b) != exitUsage {
		t.Errorf("two adds of one session: exit %d and %d; want %d and %d", a, b, exitOK, exitUsage)
	}
	if got, _, err := history.Sessions(root); err != nil || len(got) != 1 {
		t.Errorf("HistorySessions = %q, %v; want one copy", got, err)
	}
}

// TestRunRefusesPathNames: a session id or a machine label that could
// name a path is refused at the session's start (exit 2), nothing
// written, as bench history add refuses it.
func TestRunRefusesPathNames(t *testing.T) {
	for _, args := range [][]string{
		{"--session", "x/../../../escaped"},
		{"--machine", "../.."},
		{"--session", ".."},
		{"--machine", "a\x00b"},
	} {
		out := t.TempDir()
		var stderr bytes.Buffer
		err := cmdRun(io.Discard, &stderr, append(args, "--dry-run", "--scenario", "relay-ka-1k", "--proxy", "no proxy", "--out", out))
		if status := exitStatus(err, io.Discard); status != exitUsage || !strings.Contains(err.Error(), "holds a slash") && !strings.Contains(err.Error(), "names a folder") && !strings.Contains(err.Error(), "not printable") {
			t.Errorf("bench run %q = %v, status %d; want %d, the name refused", args, err, status, exitUsage)
		}
		if left, err := os.ReadDir(out); err != nil || len(left) != 0 {
			t.Errorf("bench run %q wrote %v in its output folder (%v); want nothing", args, left, err)
		}
	}
}

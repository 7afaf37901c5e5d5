package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"bench/report/results"
)

// referenceSession is the session the repository keeps under data/.
const referenceSession = "../../data/epyc-2-cpus-2026-12-02.csv"

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
	if err := meta.Write(results.MetaPath(csv)); err != nil {
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
	dest := filepath.Join(root, "epyc-2-cpus", "2026-12-02-2026-12-02")
	if want := "filed " + dest + "\n"; stdout != want {
		t.Errorf("bench history add printed %q; want %q", stdout, want)
	}
	name := filepath.Base(csv)
	want := strings.Join([]string{
		". drwxr-xr-x",
		name,
		name + ".meta.json",
		"epyc-2-cpus-2026-12-02.html",
		"epyc-2-cpus-2026-12-02.runs",
		"epyc-2-cpus-2026-12-02.runs/0001-no-proxy-http-ka-1k-1.load.wrk.out",
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
	e, err := results.ReadHistoryEntry(dest)
	if err != nil {
		t.Fatal(err)
	}
	if e.BenchCommit != "0123456789abcdef0123456789abcdef01234567" || len(e.ProxyCommits) != 1 || e.ProxyCommits["haproxy splice-auto"] != "abc123" || e.Added.Before(before.Truncate(time.Second)) {
		t.Errorf("history.json = %+v; want bench's commit from the metadata, haproxy splice-auto's abc123, added since %s", *e, before)
	}
	if got, err := results.HistorySessions(root); err != nil || len(got) != 1 || got[0] != filepath.Join(dest, name) {
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
	dest := filepath.Join(root, "epyc-2-cpus", "2026-12-02-2026-12-02")

	dir := filepath.Dir(csv)
	text := readFile(t, csv)
	truncated := filepath.Join(dir, "truncated", filepath.Base(csv))
	writeFile(t, truncated, text[:len(text)-40])
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
// folder holds what is not a plain file) exits 1 and leaves the history
// as it was, without the folder it was being copied to, and a history it
// made not made.
func TestHistoryAddFails(t *testing.T) {
	csv := historyFixture(t)
	if err := os.Symlink("/dev/null", filepath.Join(results.RunsDir(csv), "link")); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "arm-m4", "2026-10-13-evening", "arm-m4-evening.csv"), "a night before\n")
	before := listing(t, root)
	status, stdout, stderr := historyAdd(root, csv)
	if want := "bench: copy " + filepath.Join(results.RunsDir(csv), "link") + ": not a plain file\n"; status != exitError || stdout != "" || stderr != want {
		t.Errorf("bench history add: exit %d, printed %q, %q; want %d, %q", status, stdout, stderr, exitError, want)
	}
	if after := listing(t, root); after != before {
		t.Errorf("bench history add changed the history from\n%s\nto\n%s", before, after)
	}
	// a history that was not there is not there after
	absent := filepath.Join(t.TempDir(), "history")
	if status, _, _ := historyAdd(absent, csv); status != exitError {
		t.Errorf("bench history add %s: exit %d; want %d", absent, status, exitError)
	}
	if _, err := os.Stat(absent); !os.IsNotExist(err) {
		t.Errorf("bench history add left %s behind: %v", absent, err)
	}
}

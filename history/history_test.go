package history

import (
	"bench/inputerr"
	"bench/results"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestHistoryDir(t *testing.T) {
	// A session that started late in the evening west of UTC is filed
	// under the day in UTC.
	started := time.Date(2026, 11, 29, 22, 30, 0, 0, time.FixedZone("UTC-3", -3*3600))
	got := Dir("h", "Xeon, 2 CPUs", Date(started), "nightly")
	if want := filepath.Join("h", "xeon-2-cpus", "2026-11-30-nightly"); got != want {
		t.Errorf("Dir(%q) = %q; want %q", started, got, want)
	}
}

// TestHistorySessions: the sessions of every machine come in the order of
// their dates, and a folder being filed (a dot folder) is left out.
func TestHistorySessions(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{
		"xeon/2026-11-30-b/xeon-b.csv",
		"arm-m4/2026-12-01-a/arm-m4-a.csv",
		"arm-m4/2026-11-29-z/arm-m4-z.csv",
		"xeon/2026-11-30-b/xeon-b.csv.meta.json",
		"xeon/.add-123/xeon-c.csv",
		".add-456/x/y.csv",
	} {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, _, err := Sessions(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		filepath.Join(root, "arm-m4/2026-11-29-z/arm-m4-z.csv"),
		filepath.Join(root, "xeon/2026-11-30-b/xeon-b.csv"),
		filepath.Join(root, "arm-m4/2026-12-01-a/arm-m4-a.csv"),
	}
	if !slices.Equal(got, want) {
		t.Errorf("Sessions(%q) = %q; want %q", root, got, want)
	}
}

func TestHistoryEntry(t *testing.T) {
	dir := t.TempDir()
	e := Entry{BenchCommit: "1a2b3c", ProxyCommits: map[string]string{"3proxy devel": "abc123"}, Added: time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)}
	if err := WriteEntry(dir, e); err != nil {
		t.Fatal(err)
	}
	got, err := ReadEntry(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.BenchCommit != e.BenchCommit || got.ProxyCommits["3proxy devel"] != "abc123" || !got.Added.Equal(e.Added) {
		t.Errorf("ReadEntry(WriteEntry(%v)) = %v", e, *got)
	}
}

// TestFinishRecordsCSV: the session's end records its CSV's count of
// runs and checksum, which results.CSVSum gives again of the same file and not
// of a copy a run short.
func TestFinishRecordsCSV(t *testing.T) {
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "m-s.csv")
	text := "a,b\n1,2\n3,\"4,5\"\n"
	if err := os.WriteFile(csvPath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	m := &results.Meta{Session: "s"}
	if err := m.Finish(results.MetaPath(csvPath)); err != nil {
		t.Fatal(err)
	}
	got, err := results.ReadMeta(results.MetaPath(csvPath))
	if err != nil {
		t.Fatal(err)
	}
	rows, sum, err := results.CSVSum(csvPath)
	if err != nil || got.Ended == nil || got.Rows != 2 || rows != 2 || got.CSVSHA256 != sum || len(sum) != 64 {
		t.Errorf("Finish: rows %d, sum %q, ended %v; results.CSVSum = %d, %q, %v; want 2 runs and one checksum", got.Rows, got.CSVSHA256, got.Ended, rows, sum, err)
	}
	if err := os.WriteFile(csvPath, []byte("a,b\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if rows, short, _ := results.CSVSum(csvPath); rows != 1 || short == sum {
		t.Errorf("CSVSum(a run short) = %d, %q; want 1 and another checksum than %q", rows, short, sum)
	}
}

// TestCopyTreeRefusesLinks: the copy itself, past the session's check
// (a link put in place after it), refuses a link to a plain file, at
// the top or under a folder, and a FIFO, without opening what they
// point to, and leaves no copy of it.
func TestCopyTreeRefusesLinks(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "key")
	if err := os.WriteFile(key, []byte("a key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	runs := filepath.Join(dir, "x.runs")
	if err := os.MkdirAll(filepath.Join(runs, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(key, filepath.Join(runs, "sub", "notes.txt")); err != nil {
		t.Fatal(err)
	}
	top := filepath.Join(dir, "x.html")
	if err := os.Symlink(key, top); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "x.csv")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for src, want := range map[string]string{
		runs: filepath.Join(runs, "sub", "notes.txt") + ": a symbolic link: ",
		top:  top + ": a symbolic link: ",
		fifo: fifo + ": a named pipe (FIFO): ",
	} {
		dst := filepath.Join(t.TempDir(), "copy")
		err := copyTree(src, dst)
		var ie *inputerr.Error
		if !errors.As(err, &ie) || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("copyTree(%s) = %v; want an inputerr.Error %q...", src, err, want)
		}
		filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				t.Errorf("copyTree(%s) left %s", src, p)
			}
			return nil
		})
	}
}

// TestHistorySessionsRefused: a path that is not a folder, a folder of no
// session at the history's depth (empty, a machine's folder, a
// session's) and a history past its bounds are refused, an inputerr.Error
// naming it; a FIFO or a link where a session's file or folder is
// expected is skipped with a warning naming it, never opened, and a
// history of nothing else is refused.
func TestHistorySessionsRefused(t *testing.T) {
	root := t.TempDir()
	write := func(p string) string {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("machine,session\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := func(p string) string {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	link := func(target, p string) string {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	readme := write("README.md")
	empty := filepath.Join(root, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	a := write("h/xeon/2026-11-30-a/xeon-a.csv")
	b := write("h/xeon/2026-12-01-b/xeon-b.csv")
	skipped := []string{
		fifo("h/xeon/2026-12-02-c/xeon-c.csv"),
		link(a, "h/xeon/2026-12-03-d/xeon-d.csv"),
		link(filepath.Join(root, "h/xeon"), "h/linked"),
		fifo("h/xeon/2026-12-04-e/xeon-e.csv.meta.json"),
		fifo("h/xeon/2026-12-05-f/history.json"),
	}
	write("h/xeon/2026-12-04-e/xeon-e.csv")
	write("h/xeon/2026-12-05-f/xeon-f.csv")
	fifo("fifos/xeon/2026-12-02-c/xeon-c.csv")

	got, warnings, err := Sessions(filepath.Join(root, "h"))
	if err != nil || !slices.Equal(got, []string{a, b}) {
		t.Errorf("Sessions = %q, %v; want %q", got, err, []string{a, b})
	}
	if len(warnings) != len(skipped) {
		t.Errorf("Sessions warned %q; want one for each of %q", warnings, skipped)
	}
	for _, p := range skipped {
		if !slices.ContainsFunc(warnings, func(w string) bool { return strings.HasPrefix(w, p+": ") }) {
			t.Errorf("Sessions warned %q; want %s named", warnings, p)
		}
	}

	for _, c := range []struct {
		name, root string
		says       string
	}{
		{"a file", readme, "not a folder"},
		{"an empty folder", empty, "no session in it"},
		{"a machine's folder", filepath.Join(root, "h/xeon"), "no session in it"},
		{"a session's folder", filepath.Dir(a), "no session in it"},
		{"FIFOs alone", filepath.Join(root, "fifos"), "no session in it"},
	} {
		got, _, err := Sessions(c.root)
		var ie *inputerr.Error
		if !errors.As(err, &ie) || ie.File != c.root || !strings.Contains(err.Error(), c.says) || got != nil {
			t.Errorf("%s: Sessions(%s) = %q, %v; want an inputerr.Error naming it, %q", c.name, c.root, got, err, c.says)
		}
	}
	if MaxSessions < 100000 {
		t.Errorf("MaxSessions = %d; want room for a history of 100000 sessions", MaxSessions)
	}
	for _, c := range []struct {
		maxSessions, maxNames int
		says                  string
	}{
		{1, 1000, "more than 1 sessions"},
		{1000, 5, "more than 5 names in its folders"},
	} {
		h := filepath.Join(root, "h")
		got, _, err := listSessions(h, c.maxSessions, c.maxNames)
		var ie *inputerr.Error
		if !errors.As(err, &ie) || ie.File != h || !strings.Contains(err.Error(), c.says) || got != nil {
			t.Errorf("listSessions(%s, %d, %d) = %q, %v; want an inputerr.Error naming it, %q", h, c.maxSessions, c.maxNames, got, err, c.says)
		}
	}
}

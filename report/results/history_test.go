package results

import (
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

func TestSlug(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"ARM (M4)", "arm-m4"},                           // a label as the tables print it
		{"Intel (Skylake)", "intel-skylake"},             // spaces and brackets become one dash
		{"Intel Xeon Gold 6148", "intel-xeon-gold-6148"}, // a CPU model, the default label
		{"Xeon, 2 CPUs", "xeon-2-cpus"},                  // the history's example
		{"--x--", "x"},                                   // no dash at either end
		{"ÄÖ 机器", labelHash("ÄÖ 机器")},                    // no ASCII letter or digit: its hash
		{"", labelHash("")},                              // never empty
	} {
		if got := Slug(c.in); got != c.want {
			t.Errorf("Slug(%q) = %q; want %q", c.in, got, c.want)
		}
	}
	if a, b := Slug("ÄÖ 机器"), Slug("机器 ÄÖ"); a == b || len(a) != 9 {
		t.Errorf("Slug(%q), Slug(%q) = %q, %q; want two names of 9 characters", "ÄÖ 机器", "机器 ÄÖ", a, b)
	}
}

func TestHistoryDir(t *testing.T) {
	// A session that started late in the evening west of UTC is filed
	// under the day in UTC.
	started := time.Date(2026, 11, 29, 22, 30, 0, 0, time.FixedZone("UTC-3", -3*3600))
	got := HistoryDir("h", "Xeon, 2 CPUs", HistoryDate(started), "nightly")
	if want := filepath.Join("h", "xeon-2-cpus", "2026-11-30-nightly"); got != want {
		t.Errorf("HistoryDir(%q) = %q; want %q", started, got, want)
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
	got, err := HistorySessions(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		filepath.Join(root, "arm-m4/2026-11-29-z/arm-m4-z.csv"),
		filepath.Join(root, "xeon/2026-11-30-b/xeon-b.csv"),
		filepath.Join(root, "arm-m4/2026-12-01-a/arm-m4-a.csv"),
	}
	if !slices.Equal(got, want) {
		t.Errorf("HistorySessions(%q) = %q; want %q", root, got, want)
	}
}

func TestHistoryEntry(t *testing.T) {
	dir := t.TempDir()
	e := HistoryEntry{BenchCommit: "1a2b3c", ProxyCommits: map[string]string{"3proxy devel": "abc123"}, Added: time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)}
	if err := WriteHistoryEntry(dir, e); err != nil {
		t.Fatal(err)
	}
	got, err := ReadHistoryEntry(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.BenchCommit != e.BenchCommit || got.ProxyCommits["3proxy devel"] != "abc123" || !got.Added.Equal(e.Added) {
		t.Errorf("ReadHistoryEntry(WriteHistoryEntry(%v)) = %v", e, *got)
	}
}

// TestFinishRecordsCSV: the session's end records its CSV's count of
// runs and checksum, which CSVSum gives again of the same file and not
// of a copy a run short.
func TestFinishRecordsCSV(t *testing.T) {
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "m-s.csv")
	text := "a,b\n1,2\n3,\"4,5\"\n"
	if err := os.WriteFile(csvPath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	m := &Meta{Session: "s"}
	if err := m.Finish(MetaPath(csvPath)); err != nil {
		t.Fatal(err)
	}
	got, err := ReadMeta(MetaPath(csvPath))
	if err != nil {
		t.Fatal(err)
	}
	rows, sum, err := CSVSum(csvPath)
	if err != nil || got.Ended == nil || got.Rows != 2 || rows != 2 || got.CSVSHA256 != sum || len(sum) != 64 {
		t.Errorf("Finish: rows %d, sum %q, ended %v; CSVSum = %d, %q, %v; want 2 runs and one checksum", got.Rows, got.CSVSHA256, got.Ended, rows, sum, err)
	}
	if err := os.WriteFile(csvPath, []byte("a,b\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if rows, short, _ := CSVSum(csvPath); rows != 1 || short == sum {
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
		var ie *InputError
		if !errors.As(err, &ie) || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("copyTree(%s) = %v; want an InputError %q...", src, err, want)
		}
		filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				t.Errorf("copyTree(%s) left %s", src, p)
			}
			return nil
		})
	}
}

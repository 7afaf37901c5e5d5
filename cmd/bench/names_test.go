package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
)

// TestReportRefusesControlLabels: a session file whose run's proxy holds
// a newline that would begin a heading and a link in the markdown, or a
// tab that would shift the tab-separated text's columns, is refused, the
// exit status 2, naming the file, its line and the column; the message
// reaches the terminal with no control character of the file's.
func TestReportRefusesControlLabels(t *testing.T) {
	dir := t.TempDir()
	lines := strings.SplitAfter(readFile(t, filepath.Join(reportDir, "m4.csv")), "\n")
	header, first, second := lines[0], lines[1], lines[2]
	for _, c := range []struct {
		proxy, says string
	}{
		{"x\n\n# Heading [link](http://example.invalid)", `bench: bad.csv:3: column "proxy": value "x\n\n# Heading [link](http://example.invalid)" holds U+000A`},
		{"x\ty", `bench: bad.csv:3: column "proxy": value "x\ty" holds U+0009`},
		{"x\x1b]0;owned\a", `bench: bad.csv:3: column "proxy": value "x\x1b]0;owned\a" holds U+001B`},
	} {
		bad := filepath.Join(dir, "bad.csv")
		f := strings.Split(second, ",")
		f[2] = `"` + c.proxy + `"`
		if err := os.WriteFile(bad, []byte(header+first+strings.Join(f, ",")), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, format := range []string{"md", "tsv"} {
			var stdout, cmdErr, stderr bytes.Buffer
			status := exitStatus(dispatch(&stdout, &cmdErr, []string{"report", "--format", format, bad}), &stderr)
			says := strings.ReplaceAll(stderr.String(), dir+string(filepath.Separator), "")
			if status != exitUsage || !strings.HasPrefix(says, c.says) || stdout.Len() > 0 ||
				strings.ContainsFunc(strings.TrimSuffix(says, "\n"), unicode.IsControl) {
				t.Errorf("bench report --format %s of proxy %q: exit %d, %q, %d bytes out; want %d, %q and nothing out", format, c.proxy, status, says, stdout.Len(), exitUsage, c.says)
			}
		}
	}
}

// TestTerminalEscapes: what bench prints to the terminal of an error or
// a warning keeps its lines, and shows any other control character.
func TestTerminalEscapes(t *testing.T) {
	if got, want := terminal("a\x1b[2J\tb\r\nsecond"), `a\x1b[2J\tb\r`+"\nsecond"; got != want {
		t.Errorf("terminal = %q; want %q", got, want)
	}
}

package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode"

	"bench/internal/golden"
	"bench/internal/nights"
	"bench/internal/testenv"
	"bench/results"
)

// The manual's command examples are the README's and docs/'s console
// blocks: a line "$ bench ..." and what it prints after it, "..." for lines
// left out. A command that needs root or a real machine ends with
// "# needs: why"; of those only the flags are parsed. So the manual cannot
// drift from what the commands print (x/perf cmd/benchstat's doc_test.go).

// docRoot is the checkout's top, where the examples' paths start.
const docRoot = "../.."

// needsMark ends a command the test does not run, with the reason.
const needsMark = "# needs: "

// example is one command of a console block and what it prints.
type example struct {
	place string // file:line of the command
	line  string // the command, as written
	args  []string
	needs string // why it is not run; empty for one that is
	want  []string
}

// docFiles are the pages whose examples are checked.
func docFiles(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(docRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join(docRoot, "README.md")}, pages...)
}

// parseExamples reads the console blocks of a markdown page.
func parseExamples(name string, text string) ([]example, error) {
	var all []example
	in := false
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case !in && strings.TrimSpace(line) == "```console":
			in = true
		case in && strings.HasPrefix(line, "```"):
			in = false
		case in && strings.HasPrefix(line, "$ "):
			ex, err := parseCommand(fmt.Sprintf("%s:%d", name, n), strings.TrimPrefix(line, "$ "))
			if err != nil {
				return nil, err
			}
			all = append(all, ex)
		case in && len(all) > 0:
			all[len(all)-1].want = append(all[len(all)-1].want, line)
		case in:
			return nil, fmt.Errorf("%s:%d: output before any command", name, n)
		}
	}
	if in {
		return nil, fmt.Errorf("%s: a console block is not closed", name)
	}
	return all, sc.Err()
}

// parseCommand splits a command line as a shell would (quotes, globs of
// unquoted words), without its needs mark.
func parseCommand(place, line string) (example, error) {
	ex := example{place: place, line: line}
	if i := strings.Index(line, needsMark); i >= 0 {
		ex.needs = strings.TrimSpace(line[i+len(needsMark):])
		line = line[:i]
	}
	words, err := shellWords(line)
	if err != nil {
		return ex, fmt.Errorf("%s: %v", place, err)
	}
	if len(words) > 0 && words[0].text == "sudo" {
		if ex.needs == "" {
			return ex, fmt.Errorf("%s: %q runs as root and has no %q", place, line, needsMark)
		}
		words = words[1:]
	}
	if len(words) == 0 || words[0].text != "bench" {
		return ex, fmt.Errorf("%s: %q is not a bench command", place, line)
	}
	for _, w := range words[1:] {
		if w.quoted || !strings.ContainsAny(w.text, "*?[") {
			ex.args = append(ex.args, w.text)
			continue
		}
		m, err := filepath.Glob(filepath.Join(docRoot, w.text))
		if err != nil || len(m) == 0 {
			return ex, fmt.Errorf("%s: %q matches no file", place, w.text)
		}
		for _, f := range m {
			rel, _ := filepath.Rel(docRoot, f)
			ex.args = append(ex.args, rel)
		}
	}
	return ex, nil
}

// word is a word of a command line, and whether any of it was quoted.
type word struct {
	text   string
	quoted bool
}

// shellWords splits a line at blanks, as sh does with ” and "" quotes.
func shellWords(line string) ([]word, error) {
	var words []word
	var cur strings.Builder
	var quote rune
	inWord, quoted := false, false
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord, quoted = r, true, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, word{cur.String(), quoted})
				cur.Reset()
				inWord, quoted = false, false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, errors.New("a quote is not closed")
	}
	if inWord {
		words = append(words, word{cur.String(), quoted})
	}
	return words, nil
}

// helpArgs puts -h where the flags of args end, so that the flags are
// parsed and nothing is run: after the command (and its subcommand), each
// flag and the value after it.
func helpArgs(args []string) []string {
	i := 1
	if len(args) > 1 && (args[0] == "history" || args[0] == "profile" || args[0] == "mix" && args[1] == "tls") {
		i = 2
	}
	if i == 2 && args[0] == "mix" && len(args) > 2 {
		i = 3 // bench mix tls client|server
	}
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		if !strings.Contains(args[i], "=") && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") && isValueFlag(args[i]) {
			i++
		}
		i++
	}
	return append(append(append([]string{}, args[:i]...), "-h"), args[i:]...)
}

// boolFlags are the examples' flags that take no value.
var boolFlags = map[string]bool{"dry-run": true, "sweep": true, "resume": true, "latency": true, "detail": true, "across-machines": true, "steps": true}

func isValueFlag(arg string) bool { return !boolFlags[strings.TrimLeft(arg, "-")] }

// matchLines says whether got is want, "..." in want standing for any
// lines; trailing blanks are no difference.
func matchLines(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if strings.TrimSpace(want[0]) == "..." {
		for i := 0; i <= len(got); i++ {
			if matchLines(want[1:], got[i:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && strings.TrimRight(want[0], " ") == strings.TrimRight(got[0], " ") && matchLines(want[1:], got[1:])
}

// onMachine is how an example that needs the machine runs on it, its
// output not compared: what it runs and what its first line must be;
// nil where it cannot run here. A session (bench run) is planned as
// --dry-run, but one to resume, of the user's own columns or on the
// user's hosts; bench list and bench check of the machine's own columns
// run as written.
func onMachine(args []string) ([]string, *regexp.Regexp) {
	if len(args) == 0 || slices.Contains(args, "--columns") || slices.Contains(args, "--hosts") {
		return nil, nil
	}
	switch {
	case args[0] == "run" && !slices.Contains(args, "--resume"):
		if !slices.Contains(args, "--dry-run") {
			args = append(slices.Clone(args), "--dry-run")
		}
		return args, regexp.MustCompile(`\Asession \S+ on ".*": .* = [0-9.]+ runs`)
	case len(args) == 1 && args[0] == "list":
		return args, regexp.MustCompile(`\ASCENARIO +MODE +LOAD`)
	case len(args) == 1 && args[0] == "check":
		return args, regexp.MustCompile(`\ACHECK +RESULT +FOUND`)
	}
	return nil, nil
}

// trimBlank drops the blank lines at the end of lines.
func trimBlank(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// TestDocExamples runs every command example of the README and docs/
// and wants what it prints. An example that needs root or a real
// machine (`# needs: why`) is not compared: its flags must parse (its
// usage printed), and where it can run here (onMachine) it must.
func TestDocExamples(t *testing.T) {
	var all []example
	for _, f := range docFiles(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(docRoot, f)
		exs, err := parseExamples(rel, string(b))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, exs...)
	}
	if len(all) == 0 {
		t.Fatal("no command example in the README or docs/")
	}
	t.Chdir(docRoot)
	for _, ex := range all {
		t.Run(ex.place, func(t *testing.T) {
			var out bytes.Buffer
			if ex.needs != "" {
				args := helpArgs(ex.args)
				if err := dispatch(&out, &out, args); err != nil && !errors.Is(err, flag.ErrHelp) {
					t.Fatalf("%s: bench %q = %v; want its flags to parse\n%s", ex.place, args, err, out.String())
				}
				if !strings.Contains(out.String(), "Usage: bench ") {
					t.Fatalf("%s: bench %q printed no usage:\n%s", ex.place, args, out.String())
				}
				run, first := onMachine(ex.args)
				if run == nil {
					t.Logf("not run, needs %s (its flags parse)", ex.needs)
					return
				}
				if run[0] != "list" {
					// a session's plan and the checks read the machine as root does
					testenv.NeedRoot(t, "bench "+run[0])
				}
				out.Reset()
				if err := dispatch(&out, &out, run); err != nil || !first.MatchString(out.String()) {
					t.Fatalf("%s: bench %q = %v; want its first line to match %s\n%s", ex.place, run, err, first, out.String())
				}
				t.Logf("needs %s: run as bench %s, output not compared: %s", ex.needs, strings.Join(run, " "), strings.SplitN(out.String(), "\n", 2)[0])
				return
			}
			err := dispatch(&out, &out, ex.args)
			if status := exitStatus(err, &out); status != exitOK {
				fmt.Fprintf(&out, "(exit %d)\n", status)
			}
			got := trimBlank(strings.Split(out.String(), "\n"))
			if want := trimBlank(ex.want); !matchLines(want, got) {
				t.Errorf("%s: bench %s printed\n%s\nwant\n%s", ex.place, strings.Join(ex.args, " "), strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func TestDocParse(t *testing.T) {
	tests := []struct {
		line  string
		args  []string
		needs string
		help  []string // the flags alone, for a command not run
	}{
		// a quoted glob is the command's, an unquoted one the shell's
		{`bench run --scenario 'http-*' --proxy "no proxy,nginx"  # needs: root`,
			[]string{"run", "--scenario", "http-*", "--proxy", "no proxy,nginx"}, "root",
			[]string{"run", "--scenario", "http-*", "--proxy", "no proxy,nginx", "-h"}},
		{`bench report testdata/report/m4.c*`, []string{"report", "testdata/report/m4.csv"}, "",
			[]string{"report", "-h", "testdata/report/m4.csv"}},
		// sudo goes, the subcommand stays before -h
		{`sudo bench history add --proxy-commit "a=b" h x.csv  # needs: a history`,
			[]string{"history", "add", "--proxy-commit", "a=b", "h", "x.csv"}, "a history",
			[]string{"history", "add", "--proxy-commit", "a=b", "-h", "h", "x.csv"}},
		// a flag of no value is followed by another flag
		{`bench run --dry-run --reps 1  # needs: proxies`,
			[]string{"run", "--dry-run", "--reps", "1"}, "proxies",
			[]string{"run", "--dry-run", "--reps", "1", "-h"}},
	}
	for _, tt := range tests {
		ex, err := parseCommand("x.md:1", tt.line)
		if err != nil {
			t.Fatalf("parseCommand(%q) = %v", tt.line, err)
		}
		if strings.Join(ex.args, "|") != strings.Join(tt.args, "|") || ex.needs != tt.needs {
			t.Errorf("parseCommand(%q) = %q, needs %q; want %q, needs %q", tt.line, ex.args, ex.needs, tt.args, tt.needs)
		}
		if got := helpArgs(ex.args); strings.Join(got, "|") != strings.Join(tt.help, "|") {
			t.Errorf("helpArgs(%q) = %q; want %q", ex.args, got, tt.help)
		}
	}
	for _, line := range []string{
		`sudo bench clean`,  // root, and no reason given
		`make test`,         // not bench
		`bench report 'x`,   // a quote not closed
		`bench report no/*`, // a glob of no file
	} {
		if _, err := parseCommand("x.md:1", line); err == nil {
			t.Errorf("parseCommand(%q) = nil; want an error", line)
		}
	}
	tests2 := []struct {
		want, got []string
		ok        bool
	}{
		{[]string{"a", "...", "d"}, []string{"a", "b", "c", "d"}, true},
		{[]string{"a", "..."}, []string{"a"}, true},
		{[]string{"a", "d"}, []string{"a", "b", "d"}, false},
		{[]string{"a  "}, []string{"a"}, true},
	}
	for _, tt := range tests2 {
		if got := matchLines(tt.want, tt.got); got != tt.ok {
			t.Errorf("matchLines(%q, %q) = %v; want %v", tt.want, tt.got, got, tt.ok)
		}
	}
}

// linkRE is a markdown link's target.
var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// anchors are the GitHub anchors of a page's headings, outside its code
// blocks.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	in := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			in = !in
		}
		if in || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
		var b strings.Builder
		for _, r := range title {
			switch {
			case r == ' ' || r == '-':
				b.WriteRune('-')
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_':
				b.WriteRune(r)
			}
		}
		out[b.String()] = true
	}
	return out
}

// TestDocLinks: every link of the README and docs/ to a file of the
// checkout names one that is there, and an anchor a heading of it.
func TestDocLinks(t *testing.T) {
	for _, f := range docFiles(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range linkRE.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := f
			if file != "" {
				path = filepath.Join(filepath.Dir(f), file)
			}
			page, err := os.ReadFile(path)
			if err != nil && !errors.Is(err, syscall.EISDIR) {
				t.Errorf("%s: link %q: %v", f, target, err)
				continue
			}
			if anchor != "" && !anchors(string(page))[anchor] {
				t.Errorf("%s: link %q: no heading of that anchor", f, target)
			}
		}
	}
}

// TestDocFixtures: the manual's fixtures are what their generators write
// (-update writes them again): testdata/history, 16 nights of two of the
// reference session's cells, nginx's 15% slower and at a new version from
// the 9th. (testdata/profile holds profiles captured by bench run, not
// generated: TestRelayProfiles reads them.)
func TestDocFixtures(t *testing.T) {
	rows, meta, err := nights.Reference(filepath.Join(docRoot, "data"))
	if err != nil {
		t.Fatal(err)
	}
	nginx := results.Cell{Proxy: "nginx", Mode: results.HTTP, Load: "ka-1k"}
	haproxy := results.Cell{Proxy: "haproxy", Mode: results.HTTP, Load: "ka-1k"}
	var some []results.Row
	for _, r := range rows {
		if c := r.Cell(); c == nginx || c == haproxy {
			some = append(some, r)
		}
	}
	h := nights.History{Reference: some, Meta: meta, Nights: 16, Draws: 42,
		Start:    time.Date(2026, 11, 1, 1, 17, 0, 0, time.UTC),
		Shifts:   []nights.Shift{{Cell: nginx, From: 8, Step: -0.15}},
		Releases: []nights.Release{{Night: 0, Version: "1a2b3c4"}, {Night: 8, Column: "nginx", Version: "1.24.0"}},
	}
	dir := t.TempDir()
	if _, err := nights.Write(dir, h); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(docRoot, "testdata", "history")
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		golden.Check(t, filepath.Join(want, rel), b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

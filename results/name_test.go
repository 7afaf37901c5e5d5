package results

import (
	"bench/inputerr"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCheckName(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
	}{
		{"2026-11-30-nightly", true},  // a session id as the nightly names it
		{"Xeon, 2 CPUs", true},        // a label as the tables print it
		{"ÄÖ 机器", true},               // letters a slug has not: its hash names the folder
		{"x/../../../escaped", false}, // climbs out of the history
		{"../..", false},              // a path, its slug empty
		{"..", false},                 // the folder above
		{".", false},                  // the folder itself
		{"a\\b", false},               // a backslash
		{"a\x00b", false},             // a NUL
		{"", false},                   // nothing to name a folder by
		{"a\nb", false},               // a newline ends a table's row
		{"a\tb", false},               // a tab shifts a TSV's columns
		{"a\x1b[2Jb", false},          // an escape steers a terminal
		{"a\rb", false},               // a carriage return ends a YAML comment
		{"a\u0085b", false},           // a C1 control
		{"a\xffb", false},             // not UTF-8
		{strings.Repeat("x", MaxLabel), true},
		{strings.Repeat("x", MaxLabel+1), false}, // past a file name's room
	} {
		if err := CheckName("the session id", c.in); (err == nil) != c.ok {
			t.Errorf("CheckName(%q) = %v; want ok %v", c.in, err, c.ok)
		}
	}
}

// TestReadRefusesLabels: a row whose labels hold what could end a line,
// shift a column or steer a terminal, or whose note does or is too long,
// is refused with its file, line and column; a label of letters beyond
// ASCII and a note of punctuation are read.
func TestReadRefusesLabels(t *testing.T) {
	const ok = "ARM,s1,nginx,copy,http,ka-1k,1,10,100,0,1,proxy,1000,ok"
	row := func(field, value string) string { // ok with field (machine, session, proxy, load) set to value
		f := strings.Split(ok, ",")
		f[map[string]int{"machine": 0, "session": 1, "proxy": 2, "load": 5}[field]] = `"` + strings.ReplaceAll(value, `"`, `""`) + `"`
		return strings.Join(f, ",")
	}
	for _, c := range []struct {
		name, in, want string
	}{
		{"heading in the proxy", minimalHeader + "\n" + ok + "\n" + row("proxy", "x\n\n# Heading [link](http://example.invalid)") + "\n",
			`m4.csv:3: column "proxy": value "x\n\n# Heading [link](http://example.invalid)" holds U+000A`},
		{"tab in the proxy", minimalHeader + "\n" + row("proxy", "x\ty") + "\n", `m4.csv:2: column "proxy": value "x\ty" holds U+0009`},
		{"escape in the machine", minimalHeader + "\n" + row("machine", "ARM\x1b[2J") + "\n", `m4.csv:2: column "machine": value "ARM\x1b[2J" holds U+001B`},
		{"carriage return in the session", minimalHeader + "\n" + row("session", "s\radmin: x") + "\n", `m4.csv:2: column "session": value "s\radmin: x" holds U+000D`},
		{"line separator in the load", minimalHeader + "\n" + row("load", "ka\u20281k") + "\n", `m4.csv:2: column "load": value "ka\u20281k" holds U+2028`},
		{"long proxy", minimalHeader + "\n" + row("proxy", strings.Repeat("x", MaxLabel+1)) + "\n", `m4.csv:2: column "proxy": value "xxxx`},
		{"newline in the note", minimalHeader + ",note\n" + ok + ",\"a\nb\"\n", `m4.csv:2: column "note": value "a\nb" holds U+000A`},
		{"long note", minimalHeader + ",note\n" + ok + "," + strings.Repeat("n", MaxNote+1) + "\n", `m4.csv:2: column "note": value "nnnn`},
	} {
		_, err := readFrom(strings.NewReader(c.in), "m4.csv")
		var ie *inputerr.Error
		if !errors.As(err, &ie) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: read = %v; want an inputerr.Error beginning %s", c.name, err, c.want)
		}
	}
	rows, err := readFrom(strings.NewReader(minimalHeader+",note\n"+row("proxy", "ÄÖ 机器 (devel -s0)")+",\"reconnects 3: a; b, \"\"c\"\" <d> | e\"\n"), "m4.csv")
	if err != nil || len(rows) != 1 || rows[0].Proxy != "ÄÖ 机器 (devel -s0)" {
		t.Errorf("read = %v, %v; want the row of proxy ÄÖ 机器 (devel -s0)", rows, err)
	}
}

// TestReadMetaRefusesLabels: metadata whose session id, machine label or
// column's name holds a control character, or whose note does, is
// refused, naming the file.
func TestReadMetaRefusesLabels(t *testing.T) {
	for _, c := range []struct {
		name string
		meta Meta
		want string
	}{
		{"session", Meta{Session: "s\n# x"}, `the session id "s\n# x" holds U+000A`},
		{"machine", Meta{Session: "s", Machine: MachineInfo{Label: "m\x1b]0;pwned\a"}}, `the machine label "m\x1b]0;pwned\a" holds U+001B`},
		{"column", Meta{Session: "s", Columns: []ColumnMeta{{Name: "ok", Kind: "nginx"}, {Name: "x\r\nadmin:", Kind: "envoy"}}}, `the name of column 2 "x\r\nadmin:" holds U+000D`},
		{"note", Meta{Session: "s", Notes: []string{"fine", "a\tb"}}, `note 2 "a\tb" holds U+0009`},
		{"long note", Meta{Session: "s", Notes: []string{strings.Repeat("n", MaxNote+1)}}, `note 1 "nnnn`},
	} {
		path := filepath.Join(t.TempDir(), "m-s.csv.meta.json")
		if err := c.meta.Write(path); err != nil {
			t.Fatal(err)
		}
		_, err := ReadMeta(path)
		var ie *inputerr.Error
		if !errors.As(err, &ie) || ie.File != path || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: ReadMeta = %v; want an inputerr.Error naming %s and saying %s", c.name, err, path, c.want)
		}
	}
}

func TestCheckNote(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
	}{
		{"", true},
		{"reconnects 3: exchanges made again; 12 of the failed exchanges half-closed", true},
		{strings.Repeat("n", MaxNote), true},
		{strings.Repeat("n", MaxNote+1), false},
		{"a\nb", false},
		{"a\tb", false},
		{"a\x1b[31mb", false},
		{"a\xffb", false},
	} {
		if err := CheckNote("the note", c.in); (err == nil) != c.ok {
			t.Errorf("CheckNote(%q) = %v; want ok %v", c.in, err, c.ok)
		}
	}
}

// TestCleanNote: what the harness writes of a tool's output passes the
// reader's rule: its lines and tabs one line, its escapes visible, its
// length cut.
func TestCleanNote(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"wrk: exit status 1:\n\tunable to connect\r\n", "wrk: exit status 1: unable to connect"},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"bad \xff byte", `bad \xff byte`},
		{"line\u2028separator", "line separator"},
	} {
		if got := CleanNote(c.in); got != c.want {
			t.Errorf("CleanNote(%q) = %q; want %q", c.in, got, c.want)
		}
	}
	long := CleanNote(strings.Repeat("é", MaxNote))
	if err := CheckNote("the note", long); err != nil || !strings.HasSuffix(long, "…") {
		t.Errorf("CleanNote of %d bytes: %v, ends %q; want a note of at most %d bytes ending …", 2*MaxNote, err, long[len(long)-6:], MaxNote)
	}
}

func TestVisible(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"nginx", "nginx"},
		{"ÄÖ 机器 ‖ †", "ÄÖ 机器 ‖ †"},
		{"x\n\n# Heading", `x\n\n# Heading`},
		{"a\tb", `a\tb`},
		{"\x1b[2J", `\x1b[2J`},
		{"a\rb\u0085c\u2028d", `a\rb\u0085c\u2028d`},
		{"\xff\xfe", `\xff\xfe`},
		{"\ufffd", "\ufffd"}, // a printable rune, kept
	} {
		if got := Visible(c.in); got != c.want {
			t.Errorf("Visible(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}

// FuzzLabel: a label CheckLabel takes holds nothing that ends a line,
// shifts a column or steers a terminal; Visible leaves such a label as it
// is and makes of any text one CheckLabel's runes would pass; CleanNote
// makes of any text a note CheckNote takes. The seeds are in
// testdata/fuzz/FuzzLabel; a longer run is in docs/tests.md.
func FuzzLabel(f *testing.F) {
	for _, s := range []string{"nginx", "haproxy splice-auto", "x\n\n# Heading [link](http://example.invalid)", "x\ty", "\x1b[2J", "a\r\nadmin:", "\xff", "ÄÖ 机器"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		labelErr := CheckLabel("the label", s)
		if labelErr == nil {
			if s == "" || len(s) > MaxLabel || strings.ContainsAny(s, "\n\r\t\x1b\x00\v\f\u0085\u2028\u2029") || !utf8.ValidString(s) {
				t.Errorf("CheckLabel took %q", s)
			}
			if Visible(s) != s {
				t.Errorf("Visible(%q) = %q; want a label CheckLabel takes as it is", s, Visible(s))
			}
		}
		v := Visible(s)
		if err := checkText("the text", v); err != nil {
			t.Errorf("Visible(%q) = %q: %v", s, v, err)
		}
		if (v == s) != (checkText("the text", s) == nil) {
			t.Errorf("Visible(%q) = %q, and checkText says %v", s, v, checkText("the text", s))
		}
		if n := CleanNote(s); CheckNote("the note", n) != nil {
			t.Errorf("CleanNote(%q) = %q: %v", s, n, CheckNote("the note", n))
		}
	})
}

func TestSlug(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"ARM (M4)", "arm-m4"},                           // a label as the tables print it
		{"Intel (Skylake)", "intel-skylake"},             // spaces and brackets become one dash
		{"Intel Xeon Gold 6148", "intel-xeon-gold-6148"}, // a CPU model, the default label
		{"Xeon, 2 CPUs", "xeon-2-cpus"},                  // the history's example
		{"--x--", "x"},                                   // no dash at either end
		{"ÄÖ 机器", LabelHash("ÄÖ 机器")},                    // no ASCII letter or digit: its hash
		{"", LabelHash("")},                              // never empty
	} {
		if got := Slug(c.in); got != c.want {
			t.Errorf("Slug(%q) = %q; want %q", c.in, got, c.want)
		}
	}
	if a, b := Slug("ÄÖ 机器"), Slug("机器 ÄÖ"); a == b || len(a) != 9 {
		t.Errorf("Slug(%q), Slug(%q) = %q, %q; want two names of 9 characters", "ÄÖ 机器", "机器 ÄÖ", a, b)
	}
}

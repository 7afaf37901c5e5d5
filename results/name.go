package results

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxLabel is the longest a label may be, in bytes: a proxy column's
// name, a session id, a machine label. A session's files are named by
// its machine and session (`<machine>-<session>.csv.meta.json`), and a
// file name holds at most 255 bytes, so the two with their suffixes fit.
const MaxLabel = 100

// CheckLabel is the one rule for what a label may hold, wherever it
// enters (a columns file, a flag, a CSV, the metadata, a history):
// printable UTF-8 (letters, marks, numbers, punctuation, symbols and
// the ASCII space), no control character (a tab, a newline, an escape,
// a carriage return), at most MaxLabel bytes, not empty. Labels end up
// in tables, terminals, config files and file names; a label that could
// end a line, shift a column or steer a terminal is refused before
// anything is written. what says which label it is ("--session", "the
// proxy").
func CheckLabel(what, label string) error {
	switch {
	case label == "":
		return fmt.Errorf("%s is empty", what)
	case len(label) > MaxLabel:
		return fmt.Errorf("%s %.40q... is %d bytes long: want at most %d", what, label, len(label), MaxLabel)
	}
	return checkText(what, label)
}

// checkText refuses text (what names it) that is not UTF-8 or holds a
// rune not printable.
func checkText(what, s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s %q is not valid UTF-8", what, s)
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return fmt.Errorf("%s %q holds %U, which is not printable: want letters, digits, punctuation, symbols and spaces", what, s, r)
		}
	}
	return nil
}

// CheckName refuses a session id or a machine label (what names it) that
// breaks CheckLabel's rule or could name a path where the history files
// it: "." or "..", or holding a slash or a backslash.
func CheckName(what, name string) error {
	if err := CheckLabel(what, name); err != nil {
		return err
	}
	switch {
	case name == "." || name == "..":
		return fmt.Errorf("%s %q names a folder: want a name", what, name)
	case strings.ContainsAny(name, `/\`):
		return fmt.Errorf("%s %q holds a slash or a backslash: the history files a session in folders by its id and machine; want a name without them", what, name)
	}
	return nil
}

// MaxNote is the longest a note may be, in bytes: a run's in the CSV, one
// of the metadata's. A note is free text, not a label (CheckNote); the
// longest bench writes is a failed run's error, cut to 400 bytes, with
// what the run scaled and a sweep's step beside it.
const MaxNote = 2000

// CheckNote is the rule of a note (what says which), free text that
// tables and terminals print: empty, or printable UTF-8 as a label is
// (CheckLabel), of at most MaxNote bytes. What bench writes passes it:
// the harness writes its notes through CleanNote.
func CheckNote(what, note string) error {
	switch {
	case note == "":
		return nil
	case len(note) > MaxNote:
		return fmt.Errorf("%s %.40q... is %d bytes long: want at most %d", what, note, len(note), MaxNote)
	}
	return checkText(what, note)
}

// CleanNote is s as a note bench writes (CheckNote): its runs of white
// space (a tool's output's newlines and tabs) one space, any other rune a
// label may not hold written as Visible writes it, cut at MaxNote bytes
// with "…".
func CleanNote(s string) string {
	s = Visible(strings.Join(strings.Fields(s), " "))
	if len(s) <= MaxNote {
		return s
	}
	const more = "…"
	cut := MaxNote - len(more)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + more
}

// Visible is s with each rune that CheckLabel refuses in a label (a
// control character, a rune not printable, a byte not UTF-8) written as
// Go writes it in a quoted string: "\n", "\t", "\x1b", "\u2028". Every
// writer of text that came from a file or a flag (a markdown or
// tab-separated table, a terminal's line) prints it through Visible, so
// that what a reader let pass still cannot end a line, shift a column or
// steer a terminal.
func Visible(s string) string {
	i := strings.IndexFunc(s, func(r rune) bool { return r == utf8.RuneError || !unicode.IsPrint(r) })
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case !unicode.IsPrint(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// checkTexts holds a row read from a CSV to the rules of its texts: its
// labels (the machine, the session, the proxy, its kind, the load) to
// CheckLabel's, its note to CheckNote's; the first column that breaks
// them fails the row.
func (p *rowParser) checkTexts(r *Row) {
	for _, l := range []struct {
		c int
		s string
	}{{cMachine, r.Machine}, {cSession, r.Session}, {cProxy, r.Proxy}, {cKind, r.Kind}, {cLoad, r.Load}} {
		if l.s == "" {
			continue // an optional one absent; a required one empty failed already
		}
		if err := CheckLabel("value", l.s); err != nil {
			p.fail(l.c, "%v", err)
		}
	}
	if err := CheckNote("value", r.Note); err != nil {
		p.fail(cNote, "%v", err)
	}
}

// checkTexts holds the metadata's labels (the session id, the machine's
// label, the columns' names and kinds) to CheckLabel's rule, and its
// notes to CheckNote's. A label left empty is taken as absent, as the
// report takes it (bench history add wants the session and machine).
func (m *Meta) checkTexts() error {
	var errs []error
	label := func(what, s string) {
		if s != "" {
			errs = append(errs, CheckLabel(what, s))
		}
	}
	label("the session id", m.Session)
	label("the machine label", m.Machine.Label)
	for i, c := range m.Columns {
		label(fmt.Sprintf("the name of column %d", i+1), c.Name)
		label(fmt.Sprintf("the kind of column %d", i+1), c.Kind)
	}
	for i, n := range m.Notes {
		errs = append(errs, CheckNote(fmt.Sprintf("note %d", i+1), n))
	}
	errs = append(errs, CheckNote("the CPU layout's warning", m.LayoutNote))
	return errors.Join(errs...)
}

// Slug turns a machine label into a file name part: "ARM (M4)" -> "arm-m4";
// a label with no ASCII letter or digit ("ÄÖ 机器") is its short hash
// (LabelHash), so that a slug is never empty.
func Slug(s string) string {
	if slug := asciiSlug(s); slug != "" {
		return slug
	}
	return LabelHash(s)
}

// LabelHash is a short hash of a label, a file name part: "h" and the
// first 8 hex digits of its SHA-256.
func LabelHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "h" + hex.EncodeToString(sum[:4])
}

// asciiSlug is s lower case, its runs of other characters than ASCII
// letters and digits one dash, none at either end.
func asciiSlug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

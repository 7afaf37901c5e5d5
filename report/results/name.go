package results

import (
	"fmt"
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
	case !utf8.ValidString(label):
		return fmt.Errorf("%s %q is not valid UTF-8", what, label)
	}
	for _, r := range label {
		if !unicode.IsPrint(r) {
			return fmt.Errorf("%s %q holds %U, which is not printable: want letters, digits, punctuation, symbols and spaces", what, label, r)
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

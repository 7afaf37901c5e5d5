package results

import (
	"strings"
	"testing"
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

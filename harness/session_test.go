package harness

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestOneLineCutsOnARune(t *testing.T) {
	s := strings.Repeat("a", 399) + "é" + strings.Repeat("b", 10)
	got := oneLine(s)
	if !utf8.ValidString(got) || got != strings.Repeat("a", 399)+"…" {
		t.Errorf("oneLine cut %q", got[390:])
	}
	if got := oneLine("  a\n b  "); got != "a b" {
		t.Errorf("oneLine = %q", got)
	}
}

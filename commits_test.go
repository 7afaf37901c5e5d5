// The history's habits (DESIGN.md, Habits).
package bench_test

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"bench/internal/child"
	"bench/internal/testenv"
)

// habitsSince is the commit after which every commit keeps the subject
// rule; the ones before it are as they were written.
const habitsSince = "d6e159a"

// subjectRE is a subject's form: the package path or paths changed, a
// colon, a space, then what changed.
var subjectRE = regexp.MustCompile(`^[a-zA-Z0-9./_ ,{}*-]+: [^ ]`)

// TestCommitSubjects: each commit since habitsSince but the merges has a
// subject of at most 72 characters, "package: what changed".
func TestCommitSubjects(t *testing.T) {
	if _, err := os.Stat(".git"); err != nil {
		testenv.Skip(t, "not a git checkout: %v", err)
	}
	testenv.NeedProgram(t, "git")
	if err := child.Run(exec.Command("git", "cat-file", "-e", habitsSince+"^{commit}")); err != nil {
		testenv.Skip(t, "the history lacks %s (a shallow clone?): %v", habitsSince, err)
	}
	out, err := child.Output(exec.Command("git", "log", "--format=%H%x00%s%x00%P", habitsSince+"..HEAD"))
	if err != nil {
		t.Fatalf("git log: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		if line == "" {
			continue
		}
		f := strings.Split(line, "\x00")
		if len(f) != 3 {
			t.Fatalf("git log gave %q", line)
		}
		hash, subject, parents := f[0], f[1], strings.Fields(f[2])
		if len(parents) > 1 {
			continue
		}
		if n := utf8.RuneCountInString(subject); n > 72 {
			t.Errorf("%.12s %q: %d characters; at most 72", hash, subject, n)
		}
		if !subjectRE.MatchString(subject) {
			t.Errorf("%.12s %q: want \"package: what changed\" (%s)", hash, subject, subjectRE)
		}
	}
}

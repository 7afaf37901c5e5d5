// The Makefile's test lanes: every package of the module in exactly one.
package bench_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"bench/internal/child"
)

// The lanes' variables in the Makefile.
const (
	handicappedVar = "HANDICAPPED_PKGS"
	unloadedVar    = "UNLOADED_PKGS"
)

// laneAssign is an assignment to a lane's variable: NAME = ..., :=, ?=
// or +=, the value a list of packages separated by blanks.
var laneAssign = regexp.MustCompile(`^(` + handicappedVar + `|` + unloadedVar + `)\s*(\+=|:=|::=|\?=|=)\s*(.*)$`)

// makefileLanes reads the lanes' lists from the Makefile's text: each
// variable's packages in the order written, continued lines joined and
// comments left out.
func makefileLanes(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lanes := map[string][]string{}
	var line string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		text := sc.Text()
		if strings.HasSuffix(text, `\`) {
			line += strings.TrimSuffix(text, `\`) + " "
			continue
		}
		line += text
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		if m := laneAssign.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			if m[2] != "+=" {
				lanes[m[1]] = nil
			}
			lanes[m[1]] = append(lanes[m[1]], strings.Fields(m[3])...)
		}
		line = ""
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lanes
}

// TestTestLanes: every package of the module (go list ./...) is in
// exactly one of the Makefile's lanes, HANDICAPPED_PKGS or
// UNLOADED_PKGS, and each package a lane names is one of the module's;
// and make test runs the unloaded lane two packages at a time and the
// handicapped one under rthog, one at a time. A new package that is in
// neither fails here, by name, rather than going untested.
func TestTestLanes(t *testing.T) {
	lanes := makefileLanes(t, "Makefile")
	for _, v := range []string{handicappedVar, unloadedVar} {
		if len(lanes[v]) == 0 {
			t.Fatalf("the Makefile sets no %s", v)
		}
	}
	out, err := child.Output(exec.Command("go", "list", "-f", "{{.Dir}}", "./..."))
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	top, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	// The module's packages as the lanes name them: ., ./dir.
	var pkgs []string
	for _, dir := range strings.Fields(string(out)) {
		rel, err := filepath.Rel(top, dir)
		if err != nil || strings.HasPrefix(rel, "..") {
			t.Fatalf("go list ./... gave %s, outside %s", dir, top)
		}
		if rel == "." {
			pkgs = append(pkgs, ".")
		} else {
			pkgs = append(pkgs, "./"+filepath.ToSlash(rel))
		}
	}

	laneOf := map[string]string{}
	for _, v := range []string{handicappedVar, unloadedVar} {
		for _, p := range lanes[v] {
			p = filepath.ToSlash(filepath.Clean(p))
			if p != "." {
				p = "./" + p
			}
			switch prev, ok := laneOf[p]; {
			case ok && prev == v:
				t.Errorf("%s names %s twice", v, p)
			case ok:
				t.Errorf("%s is in both %s and %s; a package runs in one lane", p, prev, v)
			case !slices.Contains(pkgs, p):
				t.Errorf("%s names %s, which is no package of the module (go list ./...)", v, p)
			}
			laneOf[p] = v
		}
	}
	for _, p := range pkgs {
		if _, ok := laneOf[p]; !ok {
			t.Errorf("package %s is in no test lane: add to the Makefile\n"+
				"\t%s += %s\tif its tests measure time or CPU, or run namespaces, proxies or sessions\n"+
				"\t%s += %s\tif they measure nothing", p, handicappedVar, p, unloadedVar, p)
		}
	}

	if t.Failed() {
		return
	}
	// make test runs the lists: the unloaded lane's go test -p 2, the
	// handicapped lane's go test -p 1 under bin/rthog.
	goBin := filepath.Join(goroot(t), "bin", "go")
	stdout, stderr, err := runMake(t, makeEnv(os.Getenv("PATH"), "GO="+goBin), "-n", "test")
	if err != nil {
		t.Fatalf("make -n test: %v\n%s", err, stderr)
	}
	var unloaded, handicapped []string
	for _, line := range strings.Split(stdout, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) > 0 && f[0] == "bin/rthog" && strings.Contains(line, " test -p 1 "):
			handicapped = append(handicapped, f...)
		case len(f) > 0 && f[0] == goBin && strings.Contains(line, " test -p 2 "):
			unloaded = append(unloaded, f...)
		}
	}
	for p, v := range laneOf {
		inH, inU := slices.Contains(handicapped, p), slices.Contains(unloaded, p)
		if inH != (v == handicappedVar) || inU != (v == unloadedVar) {
			t.Errorf("make -n test runs %s (in %s): under rthog %v, unloaded %v\n%s", p, v, inH, inU, stdout)
		}
	}
}

// TestCIRunsEveryLane: .ci/run runs make test's steps, each once, and
// every other lane: the VM image's build in the background, go vet and
// the unloaded lane beside it, the handicapped lane only once the build
// has ended (it measures the CPU the build takes), then the end-to-end
// session and the VM test.
func TestCIRunsEveryLane(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	at := func(prefix string) int {
		n, i := 0, -1
		for j, l := range lines {
			if strings.HasPrefix(l, prefix) {
				n, i = n+1, j
			}
		}
		if n != 1 {
			t.Errorf(".ci/run has %d lines beginning %q; want 1", n, prefix)
		}
		return i
	}
	steps := []string{
		"make vm-image ",
		"make vet test-unloaded",
		`wait "$image_pid"`,
		"make test-handicap",
		"bin/bench run ",
		"make vm-test",
	}
	last := -1
	for _, s := range steps {
		i := at(s)
		if i >= 0 && i < last {
			t.Errorf(".ci/run: %q comes before the steps above it in %q", s, steps)
		}
		last = max(last, i)
	}
	if i := at("make vm-image "); i >= 0 && !strings.Contains(lines[i], "&") {
		t.Errorf(".ci/run builds the VM image in the foreground: %q", lines[i])
	}
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "make" && slices.Contains(f, "test") {
			t.Errorf(".ci/run: %q runs the suite a second time", l)
		}
	}
}

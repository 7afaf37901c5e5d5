// The house's layers, as DESIGN.md's "Layers" table writes them, held
// against what `go list` reads of the packages' imports.
package bench_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"bench/internal/child"
)

// layerRow is a row of the table: its layer's number, the packages it
// names (a path relative to the module, `.` for its root, `x/...` for x and
// everything below it), and what they may import of the project.
type layerRow struct {
	layer    int
	name     string
	patterns []string
	imports  string // "nothing", "below", "below and its row"
	line     int
}

var importRules = map[string]bool{"nothing": true, "below": true, "below and its row": true}

// readLayers reads the table under "## Layers" in path.
func readLayers(path string) ([]layerRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows []layerRow
	in := false
	code := regexp.MustCompile("`([^`]+)`")
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			in = line == "## Layers"
			continue
		case !in || !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| layer"):
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) != 4 {
			return nil, fmt.Errorf("%s:%d: want 4 cells (layer, name, packages, may import), have %d", path, n, len(cells))
		}
		layer, err := strconv.Atoi(cells[0])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: layer %q is not a number", path, n, cells[0])
		}
		r := layerRow{layer: layer, name: cells[1], imports: cells[3], line: n}
		if !importRules[r.imports] {
			return nil, fmt.Errorf("%s:%d: may import %q: want nothing, below, or below and its row", path, n, r.imports)
		}
		for _, m := range code.FindAllStringSubmatch(cells[2], -1) {
			r.patterns = append(r.patterns, m[1])
		}
		if len(r.patterns) == 0 {
			return nil, fmt.Errorf("%s:%d: no package named", path, n)
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no row under ## Layers", path)
	}
	return rows, nil
}

// rowOf is the row whose pattern names pkg (relative to the module) most
// closely: an exact name before a `/...` one, a longer before a shorter.
func rowOf(rows []layerRow, pkg string) (int, bool) {
	i, _, ok := patternOf(rows, pkg)
	return i, ok
}

// patternOf is rowOf with the pattern that names pkg.
func patternOf(rows []layerRow, pkg string) (int, string, bool) {
	best, bestLen, pattern := -1, -1, ""
	for i, r := range rows {
		for _, p := range r.patterns {
			l := -1
			if p == pkg {
				l = len(p) + 1
			} else if base, ok := strings.CutSuffix(p, "/..."); ok && (pkg == base || strings.HasPrefix(pkg, base+"/")) {
				l = len(base)
			}
			if l > bestLen {
				best, bestLen, pattern = i, l, p
			}
		}
	}
	return best, pattern, best >= 0
}

type listedPackage struct {
	ImportPath string
	Imports    []string
}

// modulePackages is what `go list -json ./...` says of the module's
// packages: each one's path relative to the module and the project
// packages its own code (not its tests) imports.
func modulePackages(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command(filepath.Join(goroot(t), "bin", "go"), "list", "-json", "./...")
	out, err := child.Output(cmd)
	if err != nil {
		t.Fatalf("go list -json ./...: %v", err)
	}
	pkgs := map[string][]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p listedPackage
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("go list's output: %v", err)
		}
		var own []string
		for _, imp := range p.Imports {
			if rel, ok := relPackage(imp); ok {
				own = append(own, rel)
			}
		}
		rel, _ := relPackage(p.ImportPath)
		pkgs[rel] = own
	}
	return pkgs
}

// relPackage is an import path relative to the module, if it is one of
// the module's.
func relPackage(path string) (string, bool) {
	if path == "bench" {
		return ".", true
	}
	rel, ok := strings.CutPrefix(path, "bench/")
	return rel, ok
}

// layerViolations lists each package no row names and each import its
// row does not allow.
func layerViolations(rows []layerRow, pkgs map[string][]string) []string {
	var bad []string
	used := map[string]bool{}
	for pkg, imports := range pkgs {
		i, pattern, ok := patternOf(rows, pkg)
		if !ok {
			bad = append(bad, fmt.Sprintf("package %s is in no row of the layers", pkg))
			continue
		}
		used[pattern] = true
		r := rows[i]
		for _, imp := range imports {
			j, ok := rowOf(rows, imp)
			switch {
			case !ok:
				continue // reported as a package of its own
			case r.imports == "nothing":
				bad = append(bad, fmt.Sprintf("%s (%s, imports nothing of the project) imports %s", pkg, r.name, imp))
			case rows[j].layer < r.layer, r.imports == "below and its row" && j == i:
			default:
				bad = append(bad, fmt.Sprintf("%s (layer %d, %s) imports %s (layer %d, %s)", pkg, r.layer, r.name, imp, rows[j].layer, rows[j].name))
			}
		}
	}
	for _, r := range rows {
		for _, p := range r.patterns {
			if !used[p] {
				bad = append(bad, fmt.Sprintf("%s in row %q (line %d) names no package of the module", p, r.name, r.line))
			}
		}
	}
	return bad
}

// TestLayers: every package of the module is in a layer of DESIGN.md's
// table, and imports only what its row allows: nothing, the layers below,
// or those and its own row's packages.
func TestLayers(t *testing.T) {
	rows, err := readLayers("DESIGN.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range layerViolations(rows, modulePackages(t)) {
		t.Error(v)
	}
}

// TestLayerRules: the rules read as written, on a made-up house.
func TestLayerRules(t *testing.T) {
	rows := []layerRow{
		{layer: 0, name: "ground", patterns: []string{"internal/..."}, imports: "below and its row"},
		{layer: 1, name: "format", patterns: []string{"results"}, imports: "below"},
		{layer: 2, name: "host", patterns: []string{"harness/host"}, imports: "nothing"},
		{layer: 3, name: "session", patterns: []string{"harness/..."}, imports: "below"},
		{layer: 3, name: "report", patterns: []string{"report/..."}, imports: "below and its row"},
		{layer: 4, name: "unused", patterns: []string{"gone"}, imports: "below"},
	}
	pkgs := map[string][]string{
		"internal/a":       {"internal/b"},
		"internal/b":       nil,
		"results":          {"internal/a"},
		"harness/host":     {"internal/a"},
		"harness":          {"results", "harness/host", "harness/pace"},
		"harness/pace":     nil,
		"report":           {"results"},
		"report/compare":   {"report", "harness"},
		"cmd/bench":        {"harness"},
		"internal/a/lower": {"results"},
	}
	want := []string{
		"package cmd/bench is in no row of the layers",
		"harness/host (host, imports nothing of the project) imports internal/a",
		"harness (layer 3, session) imports harness/pace (layer 3, session)",
		"report/compare (layer 3, report) imports harness (layer 3, session)",
		"internal/a/lower (layer 0, ground) imports results (layer 1, format)",
		`gone in row "unused" (line 0) names no package of the module`,
	}
	got := layerViolations(rows, pkgs)
	if len(got) != len(want) {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || g == w
		}
		if !found {
			t.Errorf("missing violation %q in:\n%s", w, strings.Join(got, "\n"))
		}
	}
}

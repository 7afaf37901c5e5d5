// The house's measures that DESIGN.md's habits keep: files and functions
// a reader takes in whole, and a README that is a set-up, not a manual.
package bench_test

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	maxFileLines   = 600 // a Go file's, tests apart
	maxFuncLines   = 80  // a function's, from its signature to its brace
	maxReadmeLines = 300
)

// oversized lists the Go files of the tree under root (tests apart) over
// maxFileLines and their functions over maxFuncLines.
func oversized(root string) ([]string, error) {
	var bad []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != root:
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go"):
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if n := bytes.Count(src, []byte("\n")); n > maxFileLines {
			bad = append(bad, fmt.Sprintf("%s: %d lines, more than %d", p, n, maxFileLines))
		}
		f, err := parser.ParseFile(fset, p, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			start, end := fset.Position(fn.Pos()), fset.Position(fn.End())
			if n := end.Line - start.Line + 1; n > maxFuncLines {
				bad = append(bad, fmt.Sprintf("%s:%d: %s is %d lines, more than %d", p, start.Line, fn.Name.Name, n, maxFuncLines))
			}
		}
		return nil
	})
	return bad, err
}

// TestHouseMeasures: no Go file over 600 lines, no function over 80, a
// README of at most 300.
func TestHouseMeasures(t *testing.T) {
	bad, err := oversized(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Error(b)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(readme, []byte("\n")); n > maxReadmeLines {
		t.Errorf("README.md: %d lines, more than %d: the manual's pages are in docs/", n, maxReadmeLines)
	}
}

// TestOversized: the measures find what they are for, in a made-up tree.
func TestOversized(t *testing.T) {
	dir := t.TempDir()
	long := "package x\n\nfunc long() {\n" + strings.Repeat("\t_ = 1\n", maxFuncLines-1) + "}\n"
	short := "package x\n\nfunc short() {\n" + strings.Repeat("\t_ = 1\n", maxFuncLines-2) + "}\n"
	big := "package x\n" + strings.Repeat("\n", maxFileLines)
	files := map[string]string{
		"a/long.go":         long,
		"a/short.go":        short,
		"b/big.go":          big,
		"b/big_test.go":     big + long,
		"testdata/long.go":  long,
		"a/.hidden/long.go": long,
		"a/not_go_long.txt": long,
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bad, err := oversized(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		fmt.Sprintf("%s:3: long is %d lines, more than %d", filepath.Join(dir, "a/long.go"), maxFuncLines+1, maxFuncLines),
		fmt.Sprintf("%s: %d lines, more than %d", filepath.Join(dir, "b/big.go"), maxFileLines+1, maxFileLines),
	}
	if strings.Join(bad, "\n") != strings.Join(want, "\n") {
		t.Errorf("oversized:\n%s\nwant:\n%s", strings.Join(bad, "\n"), strings.Join(want, "\n"))
	}
}

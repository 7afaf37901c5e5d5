package proxies

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// exemption is a string literal a file may hold, and why.
type exemption struct{ file, literal, why string }

// namedElsewhere are the string literals outside the adapter files that
// are a kind's name, and why each may be.
var namedElsewhere = []exemption{
	// The origin's HTTP server (scenarios.ToolNginx) is nginx the
	// program, which every session runs whatever its columns: a tool of
	// the scenarios, not the nginx kind.
	{"scenarios/wrk.go", "nginx", "the origin's server"},
	// The generated nightly sessions of the trend tests copy cells of
	// the reference session, whose columns are data there as they are in
	// testdata; only tests import the package.
	{"internal/nights/nights.go", "nginx", "a reference cell"},
	{"internal/nights/nights.go", "haproxy", "a reference cell"},
	{"internal/nights/nights.go", "haproxy splice-auto", "a reference cell"},
	{"internal/nights/nights.go", "dante", "a reference cell"},
}

// testSupport are the packages only tests import, left out as the tests
// are: report's generated sessions name the kinds their columns run.
var testSupport = []string{"report/internal/reporttest"}

// TestKindsNamedOnce: no Go code of the module outside a kind's adapter
// file (the file that declares its type) names the kind as a string
// literal: not its kind, its binaries nor its columns' names. So adding a
// kind touches its adapter file and the tests alone. Tests are left out,
// and the packages only they import (testSupport): they name kinds to
// check them. Comments and documents are left out:
// they name kinds as examples and change nothing. The baseline (direct)
// is left out: it is in every session, no kind one adds, and the report
// tells its column by the kind the results record.
func TestKindsNamedOnce(t *testing.T) {
	owner := map[string]Declaration{} // a literal to its kind
	for _, d := range declared {
		if _, ok := d.Adapter.(Direct); ok {
			continue
		}
		owner[d.Adapter.Kind()] = d
		for _, b := range d.Binaries {
			owner[b] = d
		}
		for name := range d.Colours {
			owner[name] = d
		}
		for _, c := range d.Columns {
			owner[c.Name] = d
		}
	}
	files := moduleFiles(t)
	typeFile := map[string]string{} // a type of package proxies to its file
	for path, f := range files {
		if filepath.Dir(path) == "proxies" {
			for _, decl := range f.Decls {
				if g, ok := decl.(*ast.GenDecl); ok && g.Tok == token.TYPE {
					for _, s := range g.Specs {
						typeFile[s.(*ast.TypeSpec).Name.Name] = path
					}
				}
			}
		}
	}
	used := make([]bool, len(namedElsewhere))
	for _, path := range slices.Sorted(maps.Keys(files)) {
		ast.Inspect(files[path], func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			d, named := owner[s]
			if err != nil || !named {
				return true
			}
			home := typeFile[reflect.TypeOf(d.Adapter).Name()]
			if path == home {
				return true
			}
			if i := slices.IndexFunc(namedElsewhere, func(e exemption) bool { return e.file == path && e.literal == s }); i >= 0 {
				used[i] = true
				return true
			}
			t.Errorf("%s:%d: %q names kind %s outside its adapter file %s", path, parsed.Position(lit.Pos()).Line, s, d.Adapter.Kind(), home)
			return true
		})
	}
	for i, e := range namedElsewhere {
		if !used[i] {
			t.Errorf("%s no longer holds %q (%s): drop it from namedElsewhere", e.file, e.literal, e.why)
		}
	}
}

// parsed holds the file set the module's files were parsed into.
var parsed = token.NewFileSet()

// moduleFiles parses the module's Go files but its tests, by their paths
// from the module's root; testdata is not Go code of the module.
func moduleFiles(t *testing.T) map[string]*ast.File {
	t.Helper()
	files := map[string]*ast.File{}
	err := filepath.WalkDir("..", func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := e.Name()
		if e.IsDir() {
			rel, _ := filepath.Rel("..", path)
			if path != ".." && (name == "testdata" || strings.HasPrefix(name, ".") || slices.Contains(testSupport, filepath.ToSlash(rel))) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(parsed, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("..", path)
		files[filepath.ToSlash(rel)] = f
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 50 {
		t.Fatalf("found %d Go files from ..; want the module's", len(files))
	}
	return files
}

package proxies

import (
	"bytes"
	"maps"
	"slices"
	"strings"
	"testing"

	"bench/results"

	"go.yaml.in/yaml/v4"
)

// hostileName would end the configs' first line, a comment, and begin
// lines of their own: envoy's YAML reads a CR, a NEL and a line
// separator as line breaks, and an admin listener on every address.
const hostileName = "x\r\nadmin:\n  address: { socket_address: { address: 0.0.0.0, port_value: 9901 } }\r# \u0085\u2028\u2029\"\\"

// lineBreaks are what a config's parser may take for the end of a line.
const lineBreaks = "\n\r\v\f\u0085\u2028\u2029"

// TestConfigNameStaysInComment: whatever a column's name holds, every
// kind's config in every mode is the one of an ordinary name but for its
// first line, the comment that names the column, which holds no line
// break.
func TestConfigNameStaysInComment(t *testing.T) {
	for _, c := range goldenColumns {
		a, _ := Lookup(c.Kind)
		for _, m := range a.Modes() {
			plain, err := a.Instance(c, m, goldenEnv)
			if err != nil {
				t.Fatal(err)
			}
			h := c
			h.Name = hostileName
			hostile, err := a.Instance(h, m, goldenEnv)
			if err != nil {
				t.Fatal(err)
			}
			for i, f := range hostile.Files {
				first, rest, _ := bytes.Cut(f.Data, []byte("\n"))
				_, plainRest, _ := bytes.Cut(plain.Files[i].Data, []byte("\n"))
				if bytes.ContainsAny(first, lineBreaks) || !bytes.Equal(rest, plainRest) {
					t.Errorf("%s, %s: %s with the name %q begins\n%q\nand is otherwise not the config of column %q", c.Kind, m, f.Path, hostileName, first, c.Name)
				}
			}
		}
	}
}

// TestEnvoyConfigName: envoy's config for a column whose name holds a CR
// and a newline before "admin:" is YAML with no top-level key but those
// of envoy's template.
func TestEnvoyConfigName(t *testing.T) {
	c := Column{Name: hostileName, Kind: "envoy", Binary: "/opt/envoy/bin/envoy", Group: results.Copy}
	for _, m := range (Envoy{}).Modes() {
		inst, err := Envoy{}.Instance(c, m, goldenEnv)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := yaml.Unmarshal(inst.Files[0].Data, &doc); err != nil {
			t.Fatalf("%s: envoy.yaml does not parse: %v\n%s", m, err, inst.Files[0].Data)
		}
		if keys := slices.Sorted(maps.Keys(doc)); !slices.Equal(keys, []string{"layered_runtime", "static_resources"}) {
			t.Errorf("%s: envoy.yaml's top-level keys are %q; want layered_runtime and static_resources alone", m, keys)
		}
	}
}

// TestColumnNameRule: a columns file's name, and a column's given to
// Validate, that the label rule refuses is refused with its place.
func TestColumnNameRule(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"\"a\rb\" squid", `cols:1: the column's name "a\rb" holds U+000D`},
		{"\"a\x1b[2Jb\" squid", `cols:1: the column's name "a\x1b[2Jb" holds U+001B`},
		{"\"a\\\tb\" squid", `cols:1: the column's name "a\tb" holds U+0009`},
		{"\"\" squid", `cols:1: the column's name is empty`},
		{"\"" + strings.Repeat("n", results.MaxLabel+1) + "\" squid", `cols:1: the column's name "nnnn`},
	} {
		_, err := ParseColumns(strings.NewReader(tc.line), "cols")
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("ParseColumns(%q) = %v; want %s", tc.line, err, tc.want)
		}
	}
	err := Validate([]Column{{Name: "x\n# y", Kind: "squid", Group: results.Copy, Source: "cols", Line: 3}}, nil)
	if want := `cols:3: the column's name "x\n# y" holds U+000A`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Validate = %v; want %s", err, want)
	}
}

// FuzzConfigName: whatever a column's name holds, each kind's config is
// the one of an ordinary name but for its first line, which holds no
// line break. The seeds are in testdata/fuzz/FuzzConfigName.
func FuzzConfigName(f *testing.F) {
	for _, s := range []string{"nginx", hostileName, "x\ty", "\x1b[2J", "\xff\"\\"} {
		f.Add(s)
	}
	plain := make([][]byte, len(goldenColumns))
	for i, c := range goldenColumns {
		a, _ := Lookup(c.Kind)
		inst, err := a.Instance(c, a.Modes()[0], goldenEnv)
		if err != nil {
			f.Fatal(err)
		}
		if len(inst.Files) > 0 {
			_, plain[i], _ = bytes.Cut(inst.Files[0].Data, []byte("\n"))
		}
	}
	f.Fuzz(func(t *testing.T, name string) {
		for i, c := range goldenColumns {
			a, _ := Lookup(c.Kind)
			c.Name = name
			inst, err := a.Instance(c, a.Modes()[0], goldenEnv)
			if err != nil {
				t.Fatal(err)
			}
			if len(inst.Files) == 0 {
				continue
			}
			first, rest, _ := bytes.Cut(inst.Files[0].Data, []byte("\n"))
			if bytes.ContainsAny(first, lineBreaks) || !bytes.Equal(rest, plain[i]) {
				t.Errorf("%s's config of a column named %q begins %q and is otherwise not the config of column %q", c.Kind, name, first, goldenColumns[i].Name)
			}
		}
	})
}

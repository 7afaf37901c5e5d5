package proxies

import (
	"bench/results"
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
)

// The columns file declares a session's own builds, a column a line:
//
//	# name                kind     key=value ...
//	"devel -s0"           3proxy   binary=/opt/3proxy/devel/bin/3proxy flags="-s0"
//	"haproxy splice-auto" haproxy  group=splice options=splice-auto
//	envoy                 envoy    binary=/opt/envoy/bin/envoy
//
// The name comes first (quoted when it has spaces), then the kind, then
// any of these keys:
//
//	binary=PATH      the program; needed by kinds without a packaged one (3proxy, envoy)
//	flags="A B"      extra command-line flags, split at spaces (3proxy: on every service line)
//	group=G          copy (the default), splice or baseline: the tables' side
//	options=A,B      the kind's own switches (haproxy: splice-auto, splice)
//	modes=M,N        measure only these modes (each one the kind serves)
//
// Blank lines and lines starting with # are ignored. Values may be quoted
// with double quotes; a backslash escapes the next character inside them.

// ParseColumns reads a columns file; name is used in errors, which read
// "name:line: ...". It checks the syntax, the kind, the group, the modes
// and the options, and holds the names to the label rule
// (results.CheckLabel); Validate checks the binaries and the names'
// clashes.
func ParseColumns(r io.Reader, name string) ([]Column, error) {
	var cols []Column
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		c, err := parseColumn(text)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		c.Source, c.Line = name, line
		cols = append(cols, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return cols, nil
}

func parseColumn(text string) (Column, error) {
	fields, err := splitFields(text)
	if err != nil {
		return Column{}, err
	}
	if len(fields) < 2 {
		return Column{}, errors.New(`want a name and a kind, e.g. "devel -s0" 3proxy binary=/path/to/3proxy`)
	}
	c := Column{Name: fields[0], Kind: fields[1], Group: results.Copy}
	if err := results.CheckLabel("the column's name", c.Name); err != nil {
		return Column{}, err
	}
	a, ok := Lookup(c.Kind)
	if !ok {
		return Column{}, fmt.Errorf("column %q: unknown kind %q (known: %s)", c.Name, c.Kind, kindList())
	}
	seen := map[string]bool{}
	for _, f := range fields[2:] {
		key, value, ok := strings.Cut(f, "=")
		if !ok {
			return Column{}, fmt.Errorf("column %q: %q is not key=value", c.Name, f)
		}
		if seen[key] {
			return Column{}, fmt.Errorf("column %q: %s given twice", c.Name, key)
		}
		seen[key] = true
		switch key {
		case "binary":
			c.Binary = value
		case "flags":
			c.Flags = strings.Fields(value)
		case "group":
			c.Group = results.Group(value)
			if c.Group != results.Copy && c.Group != results.Splice && c.Group != results.Baseline {
				return Column{}, fmt.Errorf("column %q: group %q is none of copy, splice, baseline", c.Name, value)
			}
		case "options":
			c.Options = splitList(value)
		case "modes":
			for _, m := range splitList(value) {
				c.Modes = append(c.Modes, results.Mode(m))
			}
		default:
			return Column{}, fmt.Errorf("column %q: unknown key %q (known: binary, flags, group, options, modes)", c.Name, key)
		}
	}
	if err := checkColumn(a, c); err != nil {
		return Column{}, err
	}
	return c, nil
}

// checkColumn checks what the kind decides: its options and modes.
func checkColumn(a Adapter, c Column) error {
	if err := checkOptions(a, c); err != nil {
		return err
	}
	for _, m := range c.Modes {
		if err := checkMode(a, c, m); err != nil {
			return err
		}
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// splitFields splits at spaces outside double quotes; quotes may start
// anywhere in a field (flags="-s0 -g8000,3,10").
func splitFields(s string) ([]string, error) {
	var (
		fields  []string
		cur     strings.Builder
		inField bool
		quoted  bool
	)
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case quoted && ch == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
		case ch == '"':
			quoted = !quoted
			inField = true
		case !quoted && (ch == ' ' || ch == '\t'):
			if inField {
				fields = append(fields, cur.String())
				cur.Reset()
				inField = false
			}
		case !quoted && ch == '#' && !inField:
			i = len(s) // a comment to the end of the line
		default:
			cur.WriteByte(ch)
			inField = true
		}
	}
	if quoted {
		return nil, errors.New("unterminated quote")
	}
	if inField {
		fields = append(fields, cur.String())
	}
	return fields, nil
}

func kindList() string {
	kinds := make([]string, len(declared))
	for i, d := range declared {
		kinds[i] = d.Adapter.Kind()
	}
	return strings.Join(kinds, ", ")
}

// Packaged is a proxy the distributions package: its kind, the names its
// binary goes by (the first the name the package list knows it by) and
// the packages that install it.
type Packaged struct {
	Kind     string
	Binaries []string
	Packages Packages
}

// PackagedProxies lists the packaged proxies, in the kinds' order.
func PackagedProxies() []Packaged {
	var out []Packaged
	for _, d := range declared {
		if len(d.Binaries) > 0 {
			out = append(out, Packaged{d.Adapter.Kind(), slices.Clone(d.Binaries), d.Packages})
		}
	}
	return out
}

// DefaultColumns returns the kinds' default columns (Declaration.Columns)
// in the tables' order: "no proxy" (kind direct, group baseline) and a
// column for every packaged proxy lookPath finds (exec.LookPath on a
// real machine), with the binary's full path.
func DefaultColumns(lookPath func(string) (string, error)) []Column {
	var cols []Column
	for _, dc := range defaultColumns() {
		c := dc.Column
		c.Options = slices.Clone(c.Options)
		c.Modes = slices.Clone(c.Modes)
		c.Source = "default"
		if len(dc.Binaries) == 0 {
			cols = append(cols, c)
			continue
		}
		for _, b := range dc.Binaries {
			if path, err := lookPath(b); err == nil {
				c.Binary = path
				cols = append(cols, c)
				break
			}
		}
	}
	return cols
}

// where is a column's place for errors: "file:line: " or "".
func where(c Column) string {
	switch {
	case c.Source != "" && c.Line > 0:
		return fmt.Sprintf("%s:%d: ", c.Source, c.Line)
	case c.Source != "":
		return c.Source + ": "
	}
	return ""
}

// Validate checks a session's columns before anything starts: a name
// the label rule refuses (results.CheckLabel), two columns with one name, an unknown kind, group, option or mode, a kind
// that needs a binary and has none, a binary that is missing, not a file
// or not executable (stat is os.Stat on a real machine; nil where the
// binaries are on another host, which is asked for them before the first
// run). It returns every problem found, each naming the line that
// declared the column.
func Validate(cols []Column, stat func(path string) (fs.FileInfo, error)) error {
	var errs []error
	first := map[string]Column{}
	for _, c := range cols {
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("%scolumn %q: %s", where(c), c.Name, fmt.Sprintf(format, args...)))
		}
		if err := results.CheckLabel("the column's name", c.Name); err != nil {
			errs = append(errs, fmt.Errorf("%s%w", where(c), err))
			continue
		}
		if prev, dup := first[c.Name]; dup {
			bad("declared twice (first at %s); give each column its own name", strings.TrimSuffix(where(prev), ": "))
			continue
		}
		first[c.Name] = c
		a, ok := Lookup(c.Kind)
		if !ok {
			bad("unknown kind %q (known: %s)", c.Kind, kindList())
			continue
		}
		switch c.Group {
		case results.Copy, results.Splice, results.Baseline:
		default:
			bad("group %q is none of copy, splice, baseline", c.Group)
		}
		if err := checkColumn(a, c); err != nil {
			errs = append(errs, fmt.Errorf("%s%w", where(c), err))
		}
		if _, ok := a.(Direct); ok {
			continue
		}
		bin := Binary(a, c)
		if bin == "" {
			bad("%s needs binary=PATH: there is no packaged %s", c.Kind, c.Kind)
			continue
		}
		if !strings.Contains(bin, "/") || stat == nil {
			continue // looked up in PATH when run, or on the proxy's host
		}
		fi, err := stat(bin)
		switch {
		case err != nil:
			bad("binary %s: %v", bin, err)
		case !fi.Mode().IsRegular():
			bad("binary %s is not a file", bin)
		case fi.Mode().Perm()&0o111 == 0:
			bad("binary %s is not executable (chmod +x %s)", bin, bin)
		}
	}
	return errors.Join(errs...)
}

// Serves reports whether column c is measured in mode m: its kind can
// serve it (or, for the mix and handshake scenarios, the mode they run
// through) and the column's own list, if any, names it.
func Serves(c Column, m results.Mode) bool {
	a, ok := Lookup(c.Kind)
	return ok && kindServes(a, m) && (len(c.Modes) == 0 || slices.Contains(c.Modes, m))
}

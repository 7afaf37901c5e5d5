package proxies

import (
	"bench/results"
	"errors"
	"io/fs"
	"os"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

// TestParseColumns reads good lines into columns.
func TestParseColumns(t *testing.T) {
	in := `# a comment
"devel -s0"  3proxy binary=/opt/3proxy/bin/3proxy flags="-s0 -g8000,3,10"

haproxy-splice haproxy group=splice options=splice-auto,splice # both
"env oy" envoy binary="/opt/my envoy/envoy" modes=http,relay
"q\"uote" squid
`
	want := []Column{
		{Name: "devel -s0", Kind: "3proxy", Binary: "/opt/3proxy/bin/3proxy", Flags: []string{"-s0", "-g8000,3,10"}, Group: results.Copy, Source: "cols", Line: 2},
		{Name: "haproxy-splice", Kind: "haproxy", Group: results.Splice, Options: []string{"splice-auto", "splice"}, Source: "cols", Line: 4},
		{Name: "env oy", Kind: "envoy", Binary: "/opt/my envoy/envoy", Group: results.Copy, Modes: []results.Mode{"http", "relay"}, Source: "cols", Line: 5},
		{Name: `q"uote`, Kind: "squid", Group: results.Copy, Source: "cols", Line: 6},
	}
	got, err := ParseColumns(strings.NewReader(in), "cols")
	if err != nil {
		t.Fatalf("ParseColumns = %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseColumns =\n%+v\nwant\n%+v", got, want)
	}
}

// TestParseColumnsErrors checks that each bad line fails with its place.
func TestParseColumnsErrors(t *testing.T) {
	cases := []struct {
		line, want string
	}{
		// a name alone
		{`devel`, "cols:1: want a name and a kind"},
		// an unknown kind
		{`x 4proxy binary=/x`, `cols:1: column "x": unknown kind "4proxy"`},
		// a mode the kind cannot serve
		{`n nginx modes=connect`, `cols:1: column "n": nginx cannot serve mode connect`},
		// an unknown option
		{`h haproxy options=splice-al`, `cols:1: column "h": haproxy has no option "splice-al"`},
		// an unknown key
		{`h haproxy binar=/x`, `cols:1: column "h": unknown key "binar"`},
		// not key=value
		{`h haproxy splice`, `cols:1: column "h": "splice" is not key=value`},
		// a bad group
		{`h haproxy group=fast`, `cols:1: column "h": group "fast" is none of copy, splice, baseline`},
		// a quote left open
		{`"devel 3proxy`, "cols:1: unterminated quote"},
		// a key twice
		{`h haproxy group=copy group=splice`, `cols:1: column "h": group given twice`},
	}
	for _, tc := range cases {
		_, err := ParseColumns(strings.NewReader(tc.line), "cols")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseColumns(%q) = %v; want an error containing %q", tc.line, err, tc.want)
		}
	}
}

// TestExampleColumns checks the example file parses, declares the reference results'
// 3proxy columns and an envoy column, and fails Validate only because
// its binaries are not on this machine.
func TestExampleColumns(t *testing.T) {
	f, err := os.Open("../examples/columns.conf")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cols, err := ParseColumns(f, "examples/columns.conf")
	if err != nil {
		t.Fatalf("ParseColumns = %v", err)
	}
	names := map[string]Column{}
	for _, c := range cols {
		names[c.Name] = c
	}
	for _, n := range []string{"devel", "devel -s0", "1.0.1", "devel -s1", "devel -s3", "-s1 -g8000,3,10", "envoy"} {
		if _, ok := names[n]; !ok {
			t.Errorf("examples/columns.conf has no column %q", n)
		}
	}
	if c := names["1.0.1"]; !reflect.DeepEqual(c.Flags, []string{"-ocTCP_NODELAY", "-osTCP_NODELAY"}) {
		t.Errorf("column 1.0.1 flags = %q", c.Flags)
	}
	present := fakeStat(map[string]fs.FileMode{
		"/opt/3proxy/devel/bin/3proxy": 0o755, "/opt/3proxy/1.0.1/bin/3proxy": 0o755,
		"/opt/envoy/bin/envoy": 0o755, "/usr/sbin/haproxy": 0o755,
	})
	if err := Validate(append(DefaultColumns(noneFound), cols...), present); err != nil {
		t.Errorf("Validate(example columns) = %v", err)
	}
}

func noneFound(string) (string, error) { return "", errors.New("not found") }

// fakeStat is os.Stat over a map of paths to modes.
func fakeStat(files map[string]fs.FileMode) func(string) (fs.FileInfo, error) {
	m := fstest.MapFS{}
	for p, mode := range files {
		m[strings.TrimPrefix(p, "/")] = &fstest.MapFile{Mode: mode}
	}
	return func(p string) (fs.FileInfo, error) { return fs.Stat(m, strings.TrimPrefix(p, "/")) }
}

// TestDefaultColumns finds the packaged proxies through lookPath.
func TestDefaultColumns(t *testing.T) {
	found := map[string]string{"nginx": "/usr/sbin/nginx", "haproxy": "/usr/sbin/haproxy", "stunnel4": "/usr/bin/stunnel4", "sockd": "/usr/sbin/sockd"}
	look := func(name string) (string, error) {
		if p, ok := found[name]; ok {
			return p, nil
		}
		return "", errors.New("not found")
	}
	got := DefaultColumns(look)
	var names []string
	for _, c := range got {
		names = append(names, c.Name+"="+c.Binary+"/"+string(c.Group))
	}
	want := []string{"no proxy=/baseline", "nginx=/usr/sbin/nginx/copy", "haproxy=/usr/sbin/haproxy/copy",
		"dante=/usr/sbin/sockd/copy", "stunnel=/usr/bin/stunnel4/copy", "haproxy splice-auto=/usr/sbin/haproxy/splice"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("DefaultColumns = %q; want %q", names, want)
	}
	if got[0].Kind != "direct" {
		t.Errorf("DefaultColumns()[0].Kind = %q; want direct", got[0].Kind)
	}
	if err := Validate(got, fakeStat(map[string]fs.FileMode{
		"/usr/sbin/nginx": 0o755, "/usr/sbin/haproxy": 0o755, "/usr/bin/stunnel4": 0o755, "/usr/sbin/sockd": 0o755,
	})); err != nil {
		t.Errorf("Validate(DefaultColumns) = %v", err)
	}
}

// TestValidate checks each problem is found and named with its place.
func TestValidate(t *testing.T) {
	stat := fakeStat(map[string]fs.FileMode{"/bin/3proxy": 0o755, "/bin/noexec": 0o644, "/bin/dir": fs.ModeDir | 0o755})
	at := func(c Column, line int) Column { c.Source, c.Line = "cols", line; return c }
	cases := []struct {
		cols []Column
		want string
	}{
		// two columns with one name
		{[]Column{at(Column{Name: "a", Kind: "3proxy", Binary: "/bin/3proxy", Group: results.Copy}, 1),
			at(Column{Name: "a", Kind: "3proxy", Binary: "/bin/3proxy", Group: results.Copy}, 2)},
			`cols:2: column "a": declared twice (first at cols:1)`},
		// an unknown kind
		{[]Column{at(Column{Name: "a", Kind: "foo", Group: results.Copy}, 3)}, `cols:3: column "a": unknown kind "foo"`},
		// a missing binary
		{[]Column{at(Column{Name: "a", Kind: "3proxy", Binary: "/bin/nope", Group: results.Copy}, 4)}, `cols:4: column "a": binary /bin/nope:`},
		// not executable
		{[]Column{at(Column{Name: "a", Kind: "3proxy", Binary: "/bin/noexec", Group: results.Copy}, 5)}, `cols:5: column "a": binary /bin/noexec is not executable`},
		// a directory
		{[]Column{at(Column{Name: "a", Kind: "3proxy", Binary: "/bin/dir", Group: results.Copy}, 6)}, `cols:6: column "a": binary /bin/dir is not a file`},
		// envoy has no packaged binary
		{[]Column{at(Column{Name: "e", Kind: "envoy", Group: results.Copy}, 7)}, `cols:7: column "e": envoy needs binary=PATH`},
		// an unknown option
		{[]Column{at(Column{Name: "h", Kind: "haproxy", Options: []string{"fast"}, Group: results.Copy}, 8)}, `cols:8: column "h": haproxy has no option "fast"`},
		// a mode the kind cannot serve
		{[]Column{at(Column{Name: "d", Kind: "dante", Modes: []results.Mode{results.Relay}, Group: results.Copy}, 9)}, `cols:9: column "d": dante cannot serve mode relay`},
		// no group
		{[]Column{at(Column{Name: "s", Kind: "squid"}, 10)}, `cols:10: column "s": group "" is none of copy, splice, baseline`},
	}
	for _, tc := range cases {
		err := Validate(tc.cols, stat)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%+v) = %v; want an error containing %q", tc.cols, err, tc.want)
		}
	}
}

// TestServes checks a column's own modes restrict its kind's, and that
// the mix and handshake scenarios run through the modes they build on,
// and a tunnel through two.
func TestServes(t *testing.T) {
	all, socks := Column{Kind: "3proxy"}, Column{Kind: "3proxy", Modes: []results.Mode{results.Socks}}
	for _, m := range []results.Mode{results.HTTP, results.Socks, results.Relay, results.MixHTTP, results.TLSHandshake} {
		if !Serves(all, m) {
			t.Errorf("Serves(3proxy, %s) = false", m)
		}
		if got := Serves(socks, m); got != (m == results.Socks) {
			t.Errorf("Serves(3proxy with modes socks, %s) = %v", m, got)
		}
	}
	// A tunnel is two ends of one kind: one that both begins and ends TLS.
	for kind, want := range map[string]bool{"3proxy": true, "stunnel": true, "nginx": true, "squid": false, "dante": false} {
		if got := Serves(Column{Kind: kind}, results.TLSTunnel); got != want {
			t.Errorf("Serves(%s, tls-tunnel) = %v; want %v", kind, got, want)
		}
	}
	if Serves(Column{Kind: "gopher"}, results.HTTP) {
		t.Errorf("Serves(unknown kind) = true")
	}
}

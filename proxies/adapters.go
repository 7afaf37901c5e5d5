package proxies

import (
	"bytes"
	"fmt"
	"net"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"bench/results"
	"bench/scenarios"
)

// Lookup returns the adapter of a kind ("nginx"), or false: one of the
// kinds declared (declare).
func Lookup(kind string) (Adapter, bool) {
	for _, d := range declared {
		if d.Adapter.Kind() == kind {
			return d.Adapter, true
		}
	}
	return nil, false
}

// kindServes reports whether a can serve mode m (or, for the mix and
// handshake scenarios, the mode they run through); a tls-tunnel needs a
// kind that both begins TLS (its client end) and ends it (its server end).
func kindServes(a Adapter, m results.Mode) bool {
	if m == results.TLSTunnel {
		return slices.Contains(a.Modes(), results.TLSTerm) && slices.Contains(a.Modes(), results.TLSInit)
	}
	return slices.Contains(a.Modes(), scenarios.BaseMode(m))
}

// optioner is implemented by adapters that take Column.Options.
type optioner interface {
	// Options lists the options the kind knows, each with what it does.
	Options() map[string]string
}

// knownOptions returns the options an adapter accepts, with what each
// does; nil when it takes none.
func knownOptions(a Adapter) map[string]string {
	if o, ok := a.(optioner); ok {
		return o.Options()
	}
	return nil
}

// checkInstance is what every Instance does first: the mode is one the kind
// serves and every option is one it knows. It returns the base mode.
func checkInstance(a Adapter, c Column, m results.Mode) (results.Mode, error) {
	if err := checkMode(a, c, m); err != nil {
		return "", err
	}
	if err := checkOptions(a, c); err != nil {
		return "", err
	}
	return scenarios.BaseMode(m), nil
}

// checkMode fails on a mode the kind cannot serve.
func checkMode(a Adapter, c Column, m results.Mode) error {
	if !kindServes(a, m) {
		return fmt.Errorf("column %q: %s cannot serve mode %s (it serves %s)", c.Name, a.Kind(), m, modeList(a.Modes()))
	}
	return nil
}

// checkOptions fails on an option the kind does not know.
func checkOptions(a Adapter, c Column) error {
	known := knownOptions(a)
	for _, o := range c.Options {
		if _, ok := known[o]; !ok {
			return fmt.Errorf("column %q: %s has no option %q%s", c.Name, a.Kind(), o, optionHint(known))
		}
	}
	return nil
}

func optionHint(known map[string]string) string {
	if len(known) == 0 {
		return " (it takes none)"
	}
	names := make([]string, 0, len(known))
	for n := range known {
		names = append(names, n)
	}
	slices.Sort(names)
	return " (it knows " + strings.Join(names, ", ") + ")"
}

func modeList(ms []results.Mode) string {
	s := make([]string, len(ms))
	for i, m := range ms {
		s[i] = string(m)
	}
	return strings.Join(s, ", ")
}

// Binary is the program a column runs: its own, or the kind's default.
func Binary(a Adapter, c Column) string {
	if c.Binary != "" {
		return c.Binary
	}
	return a.DefaultBinary()
}

// hostPort joins an address and a port.
func hostPort(host string, port int) string {
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// serverName is the name tls-init verifies in the origin's certificate.
func serverName(site Site) string {
	if site.ServerName != "" {
		return site.ServerName
	}
	return site.Origin
}

// hop is one listener of a relay and where it leads.
type hop struct {
	Name   string // a label for configs that name their sections
	Listen string // host:port on the client side
	Host   string // the listener's address
	Port   int
	To     string // host:port of the origin
	ToHost string
	ToPort int
}

// relayHops are the listeners of the relay and TLS modes and where each
// leads (scenarios.Listeners); none for the forward proxies.
func relayHops(m results.Mode, site Site) []hop {
	var hops []hop
	for _, l := range scenarios.Listeners(m) {
		if l.Origin == 0 {
			continue
		}
		hops = append(hops, hop{
			Name:   l.Name,
			Listen: hostPort(site.ClientSide, l.Port),
			Host:   site.ClientSide,
			Port:   l.Port,
			To:     hostPort(site.Origin, l.Origin),
			ToHost: site.Origin,
			ToPort: l.Origin,
		})
	}
	return hops
}

// listeners are the addresses Instance.Ready waits for in mode m.
func listeners(m results.Mode, site Site) []string {
	var out []string
	for _, l := range scenarios.Listeners(m) {
		out = append(out, hostPort(site.ClientSide, l.Port))
	}
	return out
}

// view is what the config templates see.
type view struct {
	Column Column
	Mode   results.Mode
	Site   Site
	Binary string
	Hops   []hop
	Listen string // the single listener of the proxy modes, host:port
	Port   int    // its port
	// OriginHTTP is the origin's HTTP server, host:port, for the HTTP
	// proxies' upstreams; OriginHTTPPort its port.
	OriginHTTP     string
	OriginHTTPPort int
	Name           string // serverName(site)
	NameIsIP       bool   // Name is an address, checked as one
	MaxConns       int
	// FDs is the descriptor limit (Site.Descriptors), for the proxies
	// that are told it.
	FDs  int
	Path func(name string) string // a file in site.Dir
	// Ready are the listeners, which accept TCP once the proxy serves.
	Ready []string
}

// Has reports whether the column has option o.
func (v view) Has(o string) bool { return slices.Contains(v.Column.Options, o) }

// QuotedName is the column's name as the configs' first line, a comment,
// gives it: quoted and escaped as Go quotes a string ("devel \"x\"",
// "a\r\nadmin:"), so that no name, however it got past the label rule,
// ends the comment's line or begins a line of the config's own.
func (v view) QuotedName() string { return strconv.Quote(v.Column.Name) }

// List renders a colon-separated list (OpenSSL's form: "X25519:P-256")
// as a YAML flow sequence: ["X25519", "P-256"].
func (v view) List(colonSeparated string) string {
	items := strings.Split(colonSeparated, ":")
	for i, it := range items {
		items[i] = strconv.Quote(it)
	}
	return "[" + strings.Join(items, ", ") + "]"
}

func newView(a Adapter, c Column, m results.Mode, site Site) view {
	maxConns := site.MaxConns
	if maxConns <= 0 {
		maxConns = 1024
	}
	v := view{
		Column: c, Mode: m, Site: site, Binary: Binary(a, c),
		Hops: relayHops(m, site), Name: serverName(site),
		MaxConns: maxConns, FDs: site.Descriptors,
		Path: func(name string) string { return filepath.Join(site.Dir, name) },
	}
	v.NameIsIP = net.ParseIP(v.Name) != nil
	v.Ready = listeners(m, site)
	if ls := scenarios.Listeners(m); len(ls) == 1 {
		v.Listen, v.Port = v.Ready[0], ls[0].Port
	}
	v.OriginHTTPPort = scenarios.PortHTTP
	v.OriginHTTP = hostPort(site.Origin, v.OriginHTTPPort)
	return v
}

var blankLines = regexp.MustCompile(`\n(\s*\n)+`)

// render executes a config template, folding runs of blank lines that
// the template's conditions leave behind into one.
func render(t *template.Template, v any) ([]byte, error) {
	var b bytes.Buffer
	if err := t.Execute(&b, v); err != nil {
		return nil, fmt.Errorf("render %s config: %w", t.Name(), err)
	}
	out := bytes.TrimLeft(blankLines.ReplaceAll(b.Bytes(), []byte("\n\n")), "\n")
	if !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out, '\n')
	}
	return out, nil
}

// versionLine returns the first match of re's first group in out, or
// the first line of out when nothing matches.
func versionLine(out []byte, re *regexp.Regexp) string {
	if m := re.FindSubmatch(out); m != nil {
		return string(m[1])
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(line)
}

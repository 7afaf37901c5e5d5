package proxies

import (
	"bench/results"
	"regexp"
	"text/template"
)

// Tinyproxy is tinyproxy as a forward proxy: DisableViaHeader Yes,
// critical messages only. It drops to the user nobody, which owns the
// directory it writes (tinyproxy/).
type Tinyproxy struct{}

func init() {
	declare(Declaration{
		Adapter:  Tinyproxy{},
		Place:    60,
		Binaries: []string{"tinyproxy"},
		Packages: Packages{Debian: []string{"tinyproxy"}, RHEL: []string{"tinyproxy@epel"}},
		Columns:  []Column{{Name: "tinyproxy", Kind: "tinyproxy", Group: results.Copy}},
		Colours:  map[string]int{"tinyproxy": 4},
	})
}

var (
	_ Adapter         = Tinyproxy{}
	_ HalfCloseCutter = Tinyproxy{}
)

// tinyproxyUser is the user tinyproxy drops to.
const tinyproxyUser = "nobody"

// Kind is "tinyproxy".
func (Tinyproxy) Kind() string { return "tinyproxy" }

// Modes: a forward proxy.
func (Tinyproxy) Modes() []results.Mode {
	return []results.Mode{results.HTTP, results.Connect}
}

// DefaultBinary is tinyproxy from PATH.
func (Tinyproxy) DefaultBinary() string { return "tinyproxy" }

// VersionArgv is tinyproxy -v.
func (Tinyproxy) VersionArgv(bin string) []string { return []string{bin, "-v"} }

var tinyproxyVersion = regexp.MustCompile(`tinyproxy (\S+)`)

// ParseVersion picks "1.11.1" out of "tinyproxy 1.11.1".
func (Tinyproxy) ParseVersion(out []byte) string { return versionLine(out, tinyproxyVersion) }

// HalfCloseCut: tinyproxy stops relaying at its client's end of stream.
// Its relay loop (reqs.c, relay_connection) ends as soon as a read from
// the client returns nothing (read_buffer takes the end of stream for an
// error), sends the client what it holds of the answer already, and shuts
// the connection down. An HTTP exchange gets the answer's head and the
// part of its body read with it, a short answer (2123 bytes of a 256 KB
// answer delayed by 50 ms at the origin); through a CONNECT tunnel, relayed
// from its opening, the client gets none of the answer. In a 5 s run over
// 50 connections 55 of mix-http's 77 half-closed exchanges failed (those
// whose answer had not come whole with its head) and no other, 125 of
// mix-connect's 128. No directive of tinyproxy.conf changes it (tinyproxy
// 1.11.1; the loop is the same in its later source).
func (Tinyproxy) HalfCloseCut() string {
	return "tinyproxy stops relaying at its client's end of stream, whatever its config: it sends what it " +
		"holds of the answer (over HTTP its head and a first part, through CONNECT nothing) and closes"
}

// Instance renders tinyproxy/tinyproxy.conf. tinyproxy has no config check
// of its own: Validate is nil.
func (t Tinyproxy) Instance(c Column, m results.Mode, site Site) (Instance, error) {
	base, err := checkInstance(t, c, m)
	if err != nil {
		return Instance{}, err
	}
	v := newView(t, c, base, site)
	conf, err := render(tinyproxyConf, v)
	if err != nil {
		return Instance{}, err
	}
	return Instance{
		Files: []File{{Path: "tinyproxy/tinyproxy.conf", Data: conf, Owner: tinyproxyUser}},
		// -d: foreground, no daemon.
		Argv:  append([]string{v.Binary, "-d", "-c", v.Path("tinyproxy/tinyproxy.conf")}, c.Flags...),
		Ready: v.Ready,
	}, nil
}

var tinyproxyConf = template.Must(template.New("tinyproxy").Parse(`# tinyproxy for column {{.QuotedName}}, mode {{.Mode}}; rendered by bench.
User ` + tinyproxyUser + `
Listen {{.Site.ClientSide}}
Port {{.Port}}
Bind {{.Site.OriginSide}}
Timeout 600
MaxClients {{.MaxConns}}
DisableViaHeader Yes
LogLevel Critical
LogFile "{{call .Path "tinyproxy/tinyproxy.log"}}"
`))

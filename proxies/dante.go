package proxies

import (
	"bench/results"
	"regexp"
	"text/template"
)

// Dante is dante's SOCKS server: no authentication, one sockd process
// tree (-N 1), connecting out from the proxy's origin-side address.
type Dante struct{}

func init() {
	declare(Declaration{
		Adapter:  Dante{},
		Place:    70,
		Binaries: []string{"danted", "sockd"},
		Packages: Packages{Debian: []string{"dante-server"}, RHEL: []string{"dante-server@epel"}},
		Columns:  []Column{{Name: "dante", Kind: "dante", Group: results.Copy}},
		Colours:  map[string]int{"dante": 5},
	})
}

var _ Adapter = Dante{}

// Kind is "dante".
func (Dante) Kind() string { return "dante" }

// Modes: SOCKS only.
func (Dante) Modes() []results.Mode { return []results.Mode{results.Socks} }

// DefaultBinary is danted, as Debian names sockd.
func (Dante) DefaultBinary() string { return "danted" }

// VersionArgv is danted -v.
func (Dante) VersionArgv(bin string) []string { return []string{bin, "-v"} }

var danteVersion = regexp.MustCompile(`Dante v(\S+?)\.?\s`)

// ParseVersion picks "1.4.2" out of "Dante v1.4.2.  Copyright ...".
func (Dante) ParseVersion(out []byte) string { return versionLine(out, danteVersion) }

// Instance renders danted.conf; Validate is danted -V (check the config and
// exit) on it.
func (d Dante) Instance(c Column, m results.Mode, site Site) (Instance, error) {
	base, err := checkInstance(d, c, m)
	if err != nil {
		return Instance{}, err
	}
	v := newView(d, c, base, site)
	conf, err := render(danteConf, v)
	if err != nil {
		return Instance{}, err
	}
	bin := v.Binary
	cfg := v.Path("danted.conf")
	return Instance{
		Files:    []File{{Path: "danted.conf", Data: conf}},
		Validate: append([]string{bin, "-V", "-f", cfg}, c.Flags...),
		// danted stays in the foreground unless given -D.
		Argv:  append([]string{bin, "-N", "1", "-f", cfg, "-p", v.Path("danted.pid")}, c.Flags...),
		Ready: v.Ready,
	}, nil
}

var danteConf = template.Must(template.New("dante").Parse(`# danted for column {{.QuotedName}}, mode {{.Mode}}; rendered by bench.
logoutput: {{call .Path "danted.log"}}
debug: 0
internal: {{.Site.ClientSide}} port = {{.Port}}
external: {{.Site.OriginSide}}
# no authentication
clientmethod: none
socksmethod: none
user.privileged: root
user.unprivileged: nobody

client pass {
    from: 0.0.0.0/0 to: {{.Site.ClientSide}}/32
    log: error
}

# the origin only
socks pass {
    from: 0.0.0.0/0 to: {{.Site.Origin}}/32
    command: connect
    log: error
}
`))

package proxies

import (
	"bench/report/results"
	"regexp"
	"text/template"
)

// Tinyproxy is tinyproxy as a forward proxy: DisableViaHeader Yes,
// critical messages only. It drops to the user nobody, which owns the
// directory it writes (tinyproxy/).
type Tinyproxy struct{}

var _ Adapter = Tinyproxy{}

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

// Plan renders tinyproxy/tinyproxy.conf. tinyproxy has no config check
// of its own: Validate is nil.
func (t Tinyproxy) Plan(c Column, m results.Mode, env Env) (Plan, error) {
	base, err := checkPlan(t, c, m)
	if err != nil {
		return Plan{}, err
	}
	v := newView(t, c, base, env)
	conf, err := render(tinyproxyConf, v)
	if err != nil {
		return Plan{}, err
	}
	return Plan{
		Files: []File{{Path: "tinyproxy/tinyproxy.conf", Data: conf, Owner: tinyproxyUser}},
		// -d: foreground, no daemon.
		Argv:  append([]string{v.Binary, "-d", "-c", v.Path("tinyproxy/tinyproxy.conf")}, c.Flags...),
		Ready: v.Ready,
	}, nil
}

var tinyproxyConf = template.Must(template.New("tinyproxy").Parse(`# tinyproxy for column "{{.Column.Name}}", mode {{.Mode}}; rendered by bench.
User ` + tinyproxyUser + `
Listen {{.Env.ClientSide}}
Port {{.Port}}
Bind {{.Env.OriginSide}}
Timeout 600
MaxClients {{.MaxConns}}
DisableViaHeader Yes
LogLevel Critical
LogFile "{{call .Path "tinyproxy/tinyproxy.log"}}"
`))

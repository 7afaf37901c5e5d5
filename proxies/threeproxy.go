package proxies

import (
	"bench/results"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"
	"time"
)

// ThreeProxy is 3proxy, any build: proxy (absolute URIs and CONNECT),
// socks, tcppm for the relay, under ssl_serv or ssl_cli for TLS (the
// suites asked set with ssl_server_ciphersuites or
// ssl_client_ciphersuites; it has no setting of groups or signature
// algorithms, which the checks of what was negotiated catch). A
// column's Flags go on every service line ("-s0", "-g8000,3,10",
// "-ocTCP_NODELAY -osTCP_NODELAY"), so one binary gives several columns.
type ThreeProxy struct{}

func init() {
	declare(Declaration{
		Adapter: ThreeProxy{},
		Place:   10,
		Colours: map[string]int{"3proxy": 8},
	})
}

var (
	_ Adapter  = ThreeProxy{}
	_ optioner = ThreeProxy{}
)

// Kind is "3proxy".
func (ThreeProxy) Kind() string { return "3proxy" }

// Modes: all of the reference results'.
func (ThreeProxy) Modes() []results.Mode {
	return []results.Mode{results.HTTP, results.Connect, results.Socks,
		results.Relay, results.TLSTerm, results.TLSInit}
}

// Options: builds before 0.9.7 have TLS in a plugin.
func (ThreeProxy) Options() map[string]string {
	return map[string]string{
		"ssl-plugin": "load SSLPlugin.ld.so from the binary's directory for TLS (builds before 0.9.7)",
	}
}

// DefaultBinary is empty: every 3proxy column names its build.
func (ThreeProxy) DefaultBinary() string { return "" }

// VersionArgv reads the version string out of the binary itself:
// 3proxy has no version flag (the services print it only in their usage
// text, and the binary without arguments reads a config from standard
// input).
func (ThreeProxy) VersionArgv(bin string) []string {
	return []string{"grep", "-a", "-o", "-m", "1", "3proxy-[0-9][0-9A-Za-z.-]*", bin}
}

var threeProxyVersion = regexp.MustCompile(`3proxy-(\d[\w.\-]*)`)

// ParseVersion picks "1.0.0" out of "3proxy-1.0.0", or returns the first
// line of the output when there is no such string.
func (ThreeProxy) ParseVersion(out []byte) string { return versionLine(out, threeProxyVersion) }

// Instance renders 3proxy.cfg. 3proxy has no config check: Validate is nil.
func (t ThreeProxy) Instance(c Column, m results.Mode, site Site) (Instance, error) {
	base, err := checkInstance(t, c, m)
	if err != nil {
		return Instance{}, err
	}
	v := newView(t, c, base, site)
	conf, err := render(threeProxyConf, threeProxyView{view: v,
		Flags:  strings.Join(c.Flags, " "),
		Plugin: filepath.Join(filepath.Dir(v.Binary), "SSLPlugin.ld.so"),
	})
	if err != nil {
		return Instance{}, err
	}
	return Instance{
		Files: []File{{Path: "3proxy.cfg", Data: conf}},
		// 3proxy stays in the foreground unless the config says daemon.
		Argv:  []string{v.Binary, v.Path("3proxy.cfg")},
		Ready: v.Ready,
		// 3proxy looks at its exit flag once a second and then waits
		// for its services: it exits 3 s after SIGTERM (measured with
		// 1.0.0), and keeps nothing that a kill would leave behind.
		StopGrace: 300 * time.Millisecond,
	}, nil
}

type threeProxyView struct {
	view
	Flags  string // the column's flags, on every service line
	Plugin string // SSLPlugin for builds that need it
}

var threeProxyConf = template.Must(template.New("3proxy").Parse(`# 3proxy for column {{.QuotedName}}, mode {{.Mode}}; rendered by bench.
maxconn {{.MaxConns}}
timeouts 1 5 30 60 180 1800 15 60
auth none
allow *
{{- if eq .Mode "tls-term" "tls-init"}}
{{- if .Has "ssl-plugin"}}
plugin {{.Plugin}} ssl_plugin
{{- end}}
{{- end}}
{{- if eq .Mode "tls-term"}}
ssl_server_cert {{.Site.CertFile}}
ssl_server_key {{.Site.KeyFile}}
ssl_server_min_proto_version TLSv1.3
{{- with .Site.TLS.Suites}}
ssl_server_ciphersuites {{.}}
{{- end}}
ssl_serv
{{- end}}
{{- if eq .Mode "tls-init"}}
ssl_client_verify
ssl_client_ca_file {{.Site.CAFile}}
ssl_client_min_proto_version TLSv1.3
{{- if not .NameIsIP}}
ssl_client_sni {{.Name}}
{{- end}}
{{- with .Site.TLS.Suites}}
ssl_client_ciphersuites {{.}}
{{- end}}
ssl_cli
{{- end}}
{{- if eq .Mode "http" "connect"}}
proxy -p{{.Port}} -i{{.Site.ClientSide}} -e{{.Site.OriginSide}}{{with .Flags}} {{.}}{{end}}
{{- else if eq .Mode "socks"}}
socks -p{{.Port}} -i{{.Site.ClientSide}} -e{{.Site.OriginSide}}{{with .Flags}} {{.}}{{end}}
{{- else}}
{{- range .Hops}}
tcppm -i{{.Host}} -e{{$.Site.OriginSide}}{{with $.Flags}} {{.}}{{end}} {{.Port}} {{.ToHost}} {{.ToPort}}
{{- end}}
{{- end}}
`))

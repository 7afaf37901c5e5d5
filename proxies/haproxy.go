package proxies

import (
	"bench/results"
	"regexp"
	"text/template"
)

// HAProxy is haproxy measured as an HTTP proxy for the origin (mode http
// with http-reuse always) and as a TCP relay (mode tcp), ending TLS with
// ssl crt and beginning it with server ... ssl; one thread. haproxy 2.6
// has no setting of the signature algorithms (bind's sigalgs came in
// 2.8): with an RSA key TLS 1.3 signs with RSA-PSS all the same. Its splice
// columns take the option "splice-auto" or "splice".
type HAProxy struct{}

func init() {
	declare(Declaration{
		Adapter:  HAProxy{},
		Place:    30,
		Binaries: []string{"haproxy"},
		Packages: Packages{Debian: []string{"haproxy"}, RHEL: []string{"haproxy"}},
		Columns: []Column{
			{Name: "haproxy", Kind: "haproxy", Group: results.Copy},
			// haproxy splices only where neither side is TLS: the
			// reference results' splice column is in the plain tables
			// alone.
			{Name: "haproxy splice-auto", Kind: "haproxy", Group: results.Splice, Options: []string{"splice-auto"},
				Modes: []results.Mode{results.HTTP, results.Relay, results.MixHTTP, results.MixRelay}},
		},
		Colours: map[string]int{"haproxy": 1, "haproxy splice-auto": 2},
	})
}

var (
	_ Adapter  = HAProxy{}
	_ optioner = HAProxy{}
)

// Kind is "haproxy".
func (HAProxy) Kind() string { return "haproxy" }

// Modes: no CONNECT nor SOCKS in haproxy.
func (HAProxy) Modes() []results.Mode {
	return []results.Mode{results.HTTP, results.Relay, results.TLSTerm, results.TLSInit}
}

// Options are the reference results' two ways of splicing.
func (HAProxy) Options() map[string]string {
	return map[string]string{
		"splice-auto": "option splice-auto: splice a direction once reads fill the buffer",
		"splice":      "option splice-request and option splice-response: splice both directions always",
	}
}

// DefaultBinary is haproxy from PATH.
func (HAProxy) DefaultBinary() string { return "haproxy" }

// VersionArgv is haproxy -v.
func (HAProxy) VersionArgv(bin string) []string { return []string{bin, "-v"} }

var haproxyVersion = regexp.MustCompile(`(?i)HA-?Proxy version (\S+)`)

// ParseVersion picks "2.6.12-1+deb12u4" out of haproxy -v.
func (HAProxy) ParseVersion(out []byte) string { return versionLine(out, haproxyVersion) }

// Instance renders haproxy.cfg for mode m; Validate is haproxy -c on it.
func (h HAProxy) Instance(c Column, m results.Mode, site Site) (Instance, error) {
	base, err := checkInstance(h, c, m)
	if err != nil {
		return Instance{}, err
	}
	v := newView(h, c, base, site)
	conf, err := render(haproxyConf, v)
	if err != nil {
		return Instance{}, err
	}
	bin := v.Binary
	cfg := v.Path("haproxy.cfg")
	return Instance{
		Files:    []File{{Path: "haproxy.cfg", Data: conf}},
		Validate: append([]string{bin, "-c", "-f", cfg}, c.Flags...),
		// -db: foreground, no daemon; alerts go to standard error.
		Argv:  append([]string{bin, "-db", "-f", cfg}, c.Flags...),
		Ready: v.Ready,
	}, nil
}

var haproxyConf = template.Must(template.New("haproxy").Parse(`# haproxy for column {{.QuotedName}}, mode {{.Mode}}; rendered by bench.
global
    nbthread 1
    maxconn {{.MaxConns}}
{{- if eq .Mode "tls-term" "tls-init"}}
    # the key beside the certificate: server.pem, server.key
    ssl-load-extra-del-ext
    ssl-default-bind-options ssl-min-ver TLSv1.3
    ssl-default-server-options ssl-min-ver TLSv1.3
{{- end}}
    # no log lines: alerts only, to standard error

defaults
    mode {{if eq .Mode "http"}}http{{else}}tcp{{end}}
    maxconn {{.MaxConns}}
    timeout connect 10s
    timeout client 120s
    timeout server 120s
    timeout client-fin 10s
    timeout server-fin 10s
{{- if eq .Mode "http"}}
    timeout http-keep-alive 120s
    timeout http-request 30s
{{- end}}
{{- if .Has "splice-auto"}}
    option splice-auto
{{- end}}
{{- if .Has "splice"}}
    option splice-request
    option splice-response
{{- end}}
{{if eq .Mode "http"}}
frontend proxy
    bind {{.Listen}}
    default_backend origin

backend origin
    http-reuse always
    source {{.Site.OriginSide}}
    server origin {{.OriginHTTP}}
{{- else}}
{{- range .Hops}}
frontend {{.Name}}
    bind {{.Listen}}{{if eq $.Mode "tls-term"}} ssl crt {{$.Site.CertFile}}{{with $.Site.TLS.Suites}} ciphersuites {{.}}{{end}}{{with $.Site.TLS.Groups}} curves {{.}}{{end}}{{end}}
    default_backend {{.Name}}

backend {{.Name}}
    source {{$.Site.OriginSide}}
    server origin {{.To}}{{if eq $.Mode "tls-init"}} ssl verify required ca-file {{$.Site.CAFile}}{{with $.Site.TLS.Suites}} ciphersuites {{.}}{{end}}{{if not $.NameIsIP}} sni str({{$.Name}}) verifyhost {{$.Name}}{{end}}{{end}}
{{end}}
{{- end}}
`))

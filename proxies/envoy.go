package proxies

import (
	"bench/results"
	"regexp"
	"strings"
	"text/template"
)

// Envoy is envoy from a binary the user names: one worker
// (--concurrency 1), http_connection_manager with the router filter as
// an HTTP proxy for the origin, tcp_proxy for the relay, TLS transport
// sockets to end or begin TLS. Its BoringSSL takes groups and signature
// algorithms but has no setting of the TLS 1.3 cipher suites: a run
// asking for one gets what envoy chose, which the session's check of the
// negotiated suite refuses.
type Envoy struct{}

func init() {
	declare(Declaration{
		Adapter: Envoy{},
		Place:   40,
		Colours: map[string]int{"envoy": 7},
	})
}

var _ Adapter = Envoy{}

// Kind is "envoy".
func (Envoy) Kind() string { return "envoy" }

// Modes: no CONNECT nor SOCKS as the reference results measure envoy.
func (Envoy) Modes() []results.Mode {
	return []results.Mode{results.HTTP, results.Relay, results.TLSTerm, results.TLSInit}
}

// DefaultBinary is empty: envoy is not packaged, a column names it.
func (Envoy) DefaultBinary() string { return "" }

// VersionArgv is envoy --version.
func (Envoy) VersionArgv(bin string) []string { return []string{bin, "--version"} }

var envoyVersion = regexp.MustCompile(`version: \S*?/(\d[^/\s]*(?:/[^/\s]+){0,3})`)

// ParseVersion picks "1.34.1/Clean/RELEASE/BoringSSL" out of envoy's
// "envoy  version: <commit>/1.34.1/Clean/RELEASE/BoringSSL".
func (Envoy) ParseVersion(out []byte) string { return versionLine(out, envoyVersion) }

// Instance renders envoy.yaml; Validate is envoy --mode validate on it.
func (e Envoy) Instance(c Column, m results.Mode, site Site) (Instance, error) {
	base, err := checkInstance(e, c, m)
	if err != nil {
		return Instance{}, err
	}
	v := newView(e, c, base, site)
	conf, err := render(envoyConf, v)
	if err != nil {
		return Instance{}, err
	}
	cfg := v.Path("envoy.yaml")
	common := []string{"-c", cfg, "--concurrency", "1", "--log-level", "error"}
	return Instance{
		Files:    []File{{Path: "envoy.yaml", Data: conf}},
		Validate: append(append([]string{v.Binary, "--mode", "validate"}, common...), c.Flags...),
		// --disable-hot-restart: no shared memory region, which would
		// outlive the namespace and clash between instances.
		Argv: append(append(append([]string{v.Binary}, common...),
			"--log-path", v.Path("envoy.log"), "--disable-hot-restart"), c.Flags...),
		Ready: v.Ready,
	}, nil
}

// envoyYAML keeps the template readable: tabs become the YAML's indent.
func envoyYAML(s string) string { return strings.ReplaceAll(s, "\t", "  ") }

var envoyConf = template.Must(template.New("envoy").Parse(envoyYAML(`# envoy for column {{.QuotedName}}, mode {{.Mode}}; rendered by bench.
layered_runtime:
	layers:
	- name: limits
		static_layer:
			overload.global_downstream_max_connections: {{.MaxConns}}
static_resources:
	listeners:
{{- if eq .Mode "http"}}
	- name: proxy
		address:
			socket_address: { address: {{.Site.ClientSide}}, port_value: {{.Port}} }
		filter_chains:
		- filters:
			- name: envoy.filters.network.http_connection_manager
				typed_config:
					"@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
					stat_prefix: proxy
					codec_type: HTTP1
					http_protocol_options: { allow_absolute_url: true }
					route_config:
						virtual_hosts:
						- name: origin
							domains: ["*"]
							routes:
							- match: { prefix: "/" }
								route: { cluster: origin, timeout: 120s }
					http_filters:
					- name: envoy.filters.http.router
						typed_config:
							"@type": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router
{{- else}}
{{- range .Hops}}
	- name: {{.Name}}
		address:
			socket_address: { address: {{.Host}}, port_value: {{.Port}} }
		filter_chains:
		- filters:
			- name: envoy.filters.network.tcp_proxy
				typed_config:
					"@type": type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy
					stat_prefix: {{.Name}}
					cluster: {{.Name}}
{{- if eq $.Mode "tls-term"}}
			transport_socket:
				name: envoy.transport_sockets.tls
				typed_config:
					"@type": type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext
					common_tls_context:
						tls_params: { tls_minimum_protocol_version: TLSv1_3{{with $.Site.TLS.Groups}}, ecdh_curves: {{$.List .}}{{end}}{{with $.Site.TLS.SigAlgs}}, signature_algorithms: {{$.List .}}{{end}} }
						tls_certificates:
						- certificate_chain: { filename: {{$.Site.CertFile}} }
							private_key: { filename: {{$.Site.KeyFile}} }
{{- end}}
{{- end}}
{{- end}}
	clusters:
{{- if eq .Mode "http"}}
	- name: origin
		connect_timeout: 10s
		type: STATIC
		upstream_bind_config: { source_address: { address: {{.Site.OriginSide}}, port_value: 0 } }
		circuit_breakers:
			thresholds:
			- { max_connections: {{.MaxConns}}, max_pending_requests: {{.MaxConns}}, max_requests: {{.MaxConns}} }
		load_assignment:
			cluster_name: origin
			endpoints:
			- lb_endpoints:
				- endpoint: { address: { socket_address: { address: {{.Site.Origin}}, port_value: {{.OriginHTTPPort}} } } }
{{- else}}
{{- range .Hops}}
	- name: {{.Name}}
		connect_timeout: 10s
		type: STATIC
		upstream_bind_config: { source_address: { address: {{$.Site.OriginSide}}, port_value: 0 } }
		circuit_breakers:
			thresholds:
			- { max_connections: {{$.MaxConns}}, max_pending_requests: {{$.MaxConns}}, max_requests: {{$.MaxConns}} }
		load_assignment:
			cluster_name: {{.Name}}
			endpoints:
			- lb_endpoints:
				- endpoint: { address: { socket_address: { address: {{.ToHost}}, port_value: {{.ToPort}} } } }
{{- if eq $.Mode "tls-init"}}
		transport_socket:
			name: envoy.transport_sockets.tls
			typed_config:
				"@type": type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext
{{- if not $.NameIsIP}}
				sni: {{$.Name}}
{{- end}}
				common_tls_context:
					tls_params: { tls_minimum_protocol_version: TLSv1_3{{with $.Site.TLS.Groups}}, ecdh_curves: {{$.List .}}{{end}} }
					validation_context:
						trusted_ca: { filename: {{$.Site.CAFile}} }
						match_typed_subject_alt_names:
						- san_type: {{if $.NameIsIP}}IP_ADDRESS{{else}}DNS{{end}}
							matcher: { exact: "{{$.Name}}" }
{{- end}}
{{- end}}
{{- end}}
`)))

package proxies

import (
	"bench/results"
	"regexp"
	"text/template"
)

// Nginx is nginx measured as an HTTP proxy for the origin (proxy_pass to
// an upstream with keepalive 1024) and as a TCP relay (stream with
// proxy_half_close on, but where it ends TLS other than the mix's),
// ending TLS with ssl and beginning it with
// proxy_ssl: the reference results' configuration, one worker.
type Nginx struct{}

func init() {
	declare(Declaration{
		Adapter:  Nginx{},
		Place:    20,
		Binaries: []string{"nginx"},
		// The stream module for the relay and TLS modes; the origin is
		// this nginx too.
		Packages: Packages{
			Debian: []string{"nginx-light", "libnginx-mod-stream"},
			RHEL:   []string{"nginx", "nginx-mod-stream"},
		},
		Columns: []Column{{Name: "nginx", Kind: "nginx", Group: results.Copy}},
		Colours: map[string]int{"nginx": 0},
	})
}

var _ Adapter = Nginx{}

// Kind is "nginx".
func (Nginx) Kind() string { return "nginx" }

// Modes: no CONNECT nor SOCKS in nginx.
func (Nginx) Modes() []results.Mode {
	return []results.Mode{results.HTTP, results.Relay, results.TLSTerm, results.TLSInit}
}

// DefaultBinary is nginx from PATH.
func (Nginx) DefaultBinary() string { return "nginx" }

// VersionArgv is nginx -v (it prints to stderr).
func (Nginx) VersionArgv(bin string) []string { return []string{bin, "-v"} }

var nginxVersion = regexp.MustCompile(`nginx/(\S+)`)

// ParseVersion picks "1.22.1" out of "nginx version: nginx/1.22.1".
func (Nginx) ParseVersion(out []byte) string { return versionLine(out, nginxVersion) }

// Instance renders nginx.conf for mode m. Validate is nginx -t on it, run in
// the proxy namespace so that the listen addresses resolve.
func (n Nginx) Instance(c Column, m results.Mode, site Site) (Instance, error) {
	base, err := checkInstance(n, c, m)
	if err != nil {
		return Instance{}, err
	}
	v := newView(n, c, base, site)
	conf, err := render(nginxConf, v)
	if err != nil {
		return Instance{}, err
	}
	// The prefix stays the distribution's, where its module configs
	// (load_module modules/...) point; every path here is absolute.
	args := []string{"-e", v.Path("nginx-error.log"), "-c", v.Path("nginx.conf")}
	bin := v.Binary
	return Instance{
		Files:    []File{{Path: "nginx.conf", Data: conf}},
		Validate: append(append([]string{bin}, args...), append([]string{"-t", "-q"}, c.Flags...)...),
		Argv:     append(append([]string{bin}, args...), c.Flags...),
		Ready:    v.Ready,
	}, nil
}

var nginxConf = template.Must(template.New("nginx").Parse(`# nginx for column {{.QuotedName}}, mode {{.Mode}}; rendered by bench.
{{- if ne .Mode "http"}}
# The stream module, where the distribution builds it as a module.
include /etc/nginx/modules-enabled/*stream*.conf;
include /usr/share/nginx/modules/*stream*.conf;
{{- end}}
daemon off;
master_process on;
worker_processes 1;
worker_rlimit_nofile {{.FDs}};
pid {{call .Path "nginx.pid"}};
error_log {{call .Path "nginx-error.log"}} error;

events {
    # a relayed connection takes two: the client's and the origin's
    worker_connections {{.FDs}};
    multi_accept on;
}
{{if eq .Mode "http"}}
http {
    access_log off;
    client_body_temp_path {{call .Path "nginx-body-temp"}};
    proxy_temp_path {{call .Path "nginx-proxy-temp"}};
    fastcgi_temp_path {{call .Path "nginx-fastcgi-temp"}};
    uwsgi_temp_path {{call .Path "nginx-uwsgi-temp"}};
    scgi_temp_path {{call .Path "nginx-scgi-temp"}};
    keepalive_requests 1000000;
    keepalive_timeout 120s;

    upstream origin {
        server {{.OriginHTTP}};
        keepalive 1024;
        keepalive_requests 1000000;
    }

    server {
        listen {{.Listen}} reuseport backlog=4096;
        location / {
            proxy_pass http://origin;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_bind {{.Site.OriginSide}};
            # large answers stay in memory: no temp files
            proxy_max_temp_file_size 0;
            # a client that shuts its sending side after the request
            # still gets the answer (the mix's half-closed exchanges)
            proxy_ignore_client_abort on;
        }
    }
}
{{- else}}
stream {
{{- range .Hops}}
    server {
        listen {{.Listen}} reuseport backlog=4096{{if eq $.Mode "tls-term"}} ssl{{end}};
        proxy_pass {{.To}};
        proxy_bind {{$.Site.OriginSide}};
{{- if and (eq $.Mode "tls-term") (ne .Name "mix")}}
        # no proxy_half_close: nginx would shut the client's socket
        # without close_notify, which OpenSSL's clients take for a
        # truncation, and then drop the session (no resumption)
{{- else}}
{{- if eq $.Mode "tls-term"}}
        # the mix's half-closed exchanges get their answers: bench mix
        # takes the FIN nginx then sends without close_notify, at a
        # record's end, for the answer's end
{{- end}}
        proxy_half_close on;
{{- end}}
{{- if eq $.Mode "tls-term"}}
        ssl_certificate {{$.Site.CertFile}};
        ssl_certificate_key {{$.Site.KeyFile}};
        ssl_protocols TLSv1.3;
        ssl_session_cache shared:tls:10m;
{{- with $.Site.TLS.Suites}}
        ssl_conf_command Ciphersuites {{.}};
{{- end}}
{{- with $.Site.TLS.Groups}}
        ssl_ecdh_curve {{.}};
{{- end}}
{{- with $.Site.TLS.SigAlgs}}
        ssl_conf_command SignatureAlgorithms {{.}};
{{- end}}
{{- end}}
{{- if eq $.Mode "tls-init"}}
        proxy_ssl on;
        proxy_ssl_protocols TLSv1.3;
        proxy_ssl_server_name on;
        proxy_ssl_name {{$.Name}};
        proxy_ssl_verify on;
        proxy_ssl_trusted_certificate {{$.Site.CAFile}};
        proxy_ssl_session_reuse on;
{{- with $.Site.TLS.Suites}}
        proxy_ssl_conf_command Ciphersuites {{.}};
{{- end}}
{{- with $.Site.TLS.Groups}}
        proxy_ssl_conf_command Groups {{.}};
{{- end}}
{{- end}}
    }
{{- end}}
}
{{- end}}
`))

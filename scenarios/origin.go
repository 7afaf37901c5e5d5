package scenarios

import (
	"bytes"
	_ "embed"
	"net"
	"path/filepath"
	"strconv"
	"text/template"
)

// OriginFile is a file of the origin, written before it starts.
type OriginFile struct {
	Path string // relative to the origin's directory
	Data []byte
}

// OriginSetup is everything the harness needs to run the origin: nginx
// serving the answers' files over HTTP (and HTTPS for the TLS modes),
// and iperf3's server for the streams.
type OriginSetup struct {
	Files []OriginFile
	// Validate is nginx's check of its config, run before it starts.
	Validate []string
	// Servers are the origin's programs, each run in the foreground.
	Servers [][]string
	// Ready lists host:port addresses that accept TCP once the origin
	// serves.
	Ready []string
	// CA is the PEM certificate a client or proxy verifies the origin's
	// TLS with (tls-init).
	CA []byte
}

// The origin's files and their sizes: the answers of the loads.
var originAnswers = []struct {
	Path string
	Size int
}{
	{"/1k", 1 << 10},
	{"/50k", 50 << 10},
	{"/1m", 1 << 20},
}

// Paths of the origin's files relative to its directory.
const (
	OriginConf = "nginx.conf"
	originWWW  = "www"
	originCert = "tls/origin.crt"
	originKey  = "tls/origin.key"
)

// originCertPEM and originKeyPEM are a published, self-signed ECDSA
// P-256 certificate and its key, valid for 10.0.2.2, 127.0.0.1, origin
// and localhost until 2126. They secure nothing: they give the TLS modes
// a stable origin to handshake with, as net/http/httptest's do.
var (
	//go:embed origin.crt
	originCertPEM []byte
	//go:embed origin.key
	originKeyPEM []byte
)

var originNginx = template.Must(template.New(OriginConf).Parse(`# The origin, written by bench: nginx serving the loads' answers from
# files in tmpfs, one worker per origin CPU.
daemon off;
master_process on;
worker_processes {{.Workers}};
user root;
pid {{.Dir}}/nginx.pid;
error_log {{.Dir}}/error.log error;

events {
    worker_connections 65536;
    multi_accept on;
}

http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_requests 100000000;
    keepalive_timeout 300s;
    default_type application/octet-stream;
    types {}
    etag off;
    server_tokens off;
    client_body_buffer_size 64k;
    client_body_temp_path {{.Dir}}/body-temp;
    proxy_temp_path {{.Dir}}/proxy-temp;
    fastcgi_temp_path {{.Dir}}/fastcgi-temp;
    uwsgi_temp_path {{.Dir}}/uwsgi-temp;
    scgi_temp_path {{.Dir}}/scgi-temp;

    server {
        listen {{.HTTP}} reuseport backlog=65535;
        listen {{.HTTPS}} ssl reuseport backlog=65535;
        ssl_certificate {{.Dir}}/` + originCert + `;
        ssl_certificate_key {{.Dir}}/` + originKey + `;
        ssl_protocols TLSv1.3;
        root {{.Dir}}/` + originWWW + `;

        location / {
            # A POST to a static file is answered 405; the POST loads get
            # the file, as a GET would.
            error_page 405 =200 $uri;
        }
    }
}
`))

// OriginTLS is the certificate (PEM, its chain) and the key the origin
// presents over TLS, and the CA that signed it. The zero value stands
// for the published, self-signed one; a session gives the one it made.
type OriginTLS struct{ Cert, Key, CA []byte }

// Origin plans the origin in dir (a tmpfs the harness mounts) listening
// on addr with cpus nginx workers, presenting cert over TLS: nginx on ports 80 and 443 serving
// /1k, /50k, /1m and the mix's answers (MixAnswers), answering a POST to them as a GET, and iperf3's
// server on port 5201, and bench mix's origin on port 8080, and TLS
// wrappers in front of iperf3 on port 5202 and of bench mix's origin on
// port 8443 (the session's own executable: the harness runs ToolBench as
// itself).
// iperf3 -s serves one test at a time, which is all a session runs.
func Origin(dir, addr string, cpus int, cert OriginTLS) OriginSetup {
	if cert.Cert == nil {
		cert = OriginTLS{originCertPEM, originKeyPEM, originCertPEM}
	}
	dir = filepath.Clean(dir)
	port := func(p int) string { return net.JoinHostPort(addr, strconv.Itoa(p)) }
	var conf bytes.Buffer
	err := originNginx.Execute(&conf, struct {
		Dir, HTTP, HTTPS string
		Workers          int
	}{dir, port(PortHTTP), port(PortHTTPS), max(1, cpus)})
	if err != nil {
		panic(err) // the template is fixed and its data plain strings
	}
	files := []OriginFile{
		{OriginConf, conf.Bytes()},
		{originCert, cert.Cert},
		{originKey, cert.Key},
	}
	for _, a := range originAnswers {
		files = append(files, OriginFile{originWWW + a.Path, OriginAnswer(a.Size)})
	}
	for _, a := range mixAnswers {
		files = append(files, OriginFile{originWWW + a.Path, OriginAnswer(a.Size)})
	}
	nginx := []string{ToolNginx, "-p", dir + "/", "-e", filepath.Join(dir, "error.log"), "-c", filepath.Join(dir, OriginConf)}
	return OriginSetup{
		Files:    files,
		Validate: append(nginx[:len(nginx):len(nginx)], "-t", "-q"),
		Servers: [][]string{
			nginx,
			{ToolIperf3, "-s", "-B", addr, "-p", strconv.Itoa(PortIperf)},
			{ToolBench, "mix", "--serve", port(PortMix)},
			// iperf3's server in TLS, for the TLS modes' streams.
			{ToolBench, "mix", "tls", "server", "--listen", port(PortIperfTLS), "--connect", port(PortIperf),
				"--cert", filepath.Join(dir, originCert), "--key", filepath.Join(dir, originKey)},
			// bench mix's origin in TLS, for mix-tls's baseline.
			{ToolBench, "mix", "tls", "server", "--listen", port(PortMixTLS), "--connect", port(PortMix),
				"--cert", filepath.Join(dir, originCert), "--key", filepath.Join(dir, originKey)},
		},
		Ready: []string{port(PortHTTP), port(PortHTTPS), port(PortIperf), port(PortMix), port(PortIperfTLS), port(PortMixTLS)},
		CA:    cert.CA,
	}
}

// OriginAnswer returns the origin's answer of size bytes: printable
// lines of 64 bytes, the same on every machine.
func OriginAnswer(size int) []byte {
	b := make([]byte, size)
	for i := range b {
		if i%64 == 63 {
			b[i] = '\n'
		} else {
			b[i] = 'a' + byte(i/64%26)
		}
	}
	return b
}

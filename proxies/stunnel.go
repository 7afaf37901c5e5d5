package proxies

import (
	"bench/results"
	"regexp"
	"text/template"
)

// Stunnel is stunnel ending or beginning TLS 1.3 in front of the origin's
// HTTP and iperf3 ports; TLS scenarios only.
type Stunnel struct{}

func init() {
	declare(Declaration{
		Adapter:  Stunnel{},
		Place:    80,
		Binaries: []string{"stunnel", "stunnel4", "stunnel5"},
		Packages: Packages{Debian: []string{"stunnel4"}, RHEL: []string{"stunnel"}},
		Columns:  []Column{{Name: "stunnel", Kind: "stunnel", Group: results.Copy}},
		Colours:  map[string]int{"stunnel": 6},
	})
}

var (
	_ Adapter         = Stunnel{}
	_ HalfCloseCutter = Stunnel{}
)

// Kind is "stunnel".
func (Stunnel) Kind() string { return "stunnel" }

// Modes: the TLS ones.
func (Stunnel) Modes() []results.Mode {
	return []results.Mode{results.TLSTerm, results.TLSInit}
}

// DefaultBinary is stunnel from PATH.
func (Stunnel) DefaultBinary() string { return "stunnel" }

// VersionArgv is stunnel -version (it prints to stderr).
func (Stunnel) VersionArgv(bin string) []string { return []string{bin, "-version"} }

var stunnelVersion = regexp.MustCompile(`stunnel (\d\S*)`)

// ParseVersion picks "5.68" out of "stunnel 5.68 on x86_64-pc-linux-gnu".
func (Stunnel) ParseVersion(out []byte) string { return versionLine(out, stunnelVersion) }

// HalfCloseCut: stunnel cuts the answer of a half-closed exchange when
// its origin has sent the end of it while stunnel's client is behind.
// Once the client's close_notify has come, stunnel shuts its origin
// socket's sending side; the origin's FIN then makes that socket hang up
// (POLLHUP: both sides shut). stunnel's transfer loop polls that socket
// for reading only while its 18 KB buffer toward the client has room;
// when the buffer is full and the client's socket takes no more, the
// hangup wakes it with nothing to read or write, and it takes it for the
// end of the socket ("Read socket closed (HUP)") without reading what the
// kernel still holds: it sends the client its buffer, close_notify and a
// FIN. The kernel's part of the answer is lost (135786 of 1048576 bytes
// in one capture, stunnel logging 912790 bytes sent to TLS and 1048576
// to the socket). The loop (client.c, "hangups without read or write")
// is the same in stunnel 5.68 and 5.75, and no option of stunnel's
// changes it: the client's order of close_notify and FIN has no part in
// it, nor has TIMEOUTclose, which bounds the wait for the client's
// close_notify after stunnel's own.
func (Stunnel) HalfCloseCut() string {
	return "stunnel cuts a half-closed exchange's answer when its origin ends it while its client is behind: " +
		"it takes the origin socket's hangup for the answer's end and drops what the kernel still holds"
}

// Instance renders stunnel.conf. stunnel has no config check that leaves it
// idle: Validate is nil, and a bad config fails at start.
func (s Stunnel) Instance(c Column, m results.Mode, site Site) (Instance, error) {
	base, err := checkInstance(s, c, m)
	if err != nil {
		return Instance{}, err
	}
	v := newView(s, c, base, site)
	conf, err := render(stunnelConf, v)
	if err != nil {
		return Instance{}, err
	}
	return Instance{
		Files: []File{{Path: "stunnel.conf", Data: conf}},
		Argv:  append([]string{v.Binary, v.Path("stunnel.conf")}, c.Flags...),
		Ready: v.Ready,
	}, nil
}

var stunnelConf = template.Must(template.New("stunnel").Parse(`; stunnel for column {{.QuotedName}}, mode {{.Mode}}; rendered by bench.
foreground = yes
pid =
syslog = no
output = {{call .Path "stunnel.log"}}
debug = err

{{- range .Hops}}

[{{.Name}}]
accept = {{.Listen}}
connect = {{.To}}
local = {{$.Site.OriginSide}}
sslVersionMin = TLSv1.3
{{- with $.Site.TLS.Suites}}
ciphersuites = {{.}}
{{- end}}
{{- with $.Site.TLS.Groups}}
curves = {{.}}
{{- end}}
{{- with $.Site.TLS.SigAlgs}}
config = SignatureAlgorithms:{{.}}
{{- end}}
{{- if eq $.Mode "tls-term"}}
cert = {{$.Site.CertFile}}
key = {{$.Site.KeyFile}}
{{- else}}
client = yes
verifyChain = yes
CAfile = {{$.Site.CAFile}}
{{- if $.NameIsIP}}
checkIP = {{$.Name}}
{{- else}}
sni = {{$.Name}}
checkHost = {{$.Name}}
{{- end}}
{{- end}}
{{- end}}
`))

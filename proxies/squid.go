package proxies

import (
	"bench/results"
	"regexp"
	"text/template"
)

// Squid is squid as a forward proxy (absolute URIs and CONNECT): no
// cache, no logs, via off. It runs as the user proxy, so the directory it
// writes (squid/ in the instance's directory) is that user's.
type Squid struct{}

func init() {
	declare(Declaration{
		Adapter:  Squid{},
		Place:    50,
		Binaries: []string{"squid"},
		Packages: Packages{Debian: []string{"squid"}, RHEL: []string{"squid"}},
		Columns:  []Column{{Name: "squid", Kind: "squid", Group: results.Copy}},
		Colours:  map[string]int{"squid": 3},
	})
}

var (
	_ Adapter         = Squid{}
	_ HalfCloseCutter = Squid{}
)

// squidUser is the user squid drops to, as Debian packages it.
const squidUser = "proxy"

// Kind is "squid".
func (Squid) Kind() string { return "squid" }

// Modes: a forward proxy.
func (Squid) Modes() []results.Mode {
	return []results.Mode{results.HTTP, results.Connect}
}

// DefaultBinary is squid from PATH.
func (Squid) DefaultBinary() string { return "squid" }

// VersionArgv is squid -v.
func (Squid) VersionArgv(bin string) []string { return []string{bin, "-v"} }

var squidVersion = regexp.MustCompile(`Squid Cache: Version (\S+)`)

// ParseVersion picks "5.7" out of "Squid Cache: Version 5.7".
func (Squid) ParseVersion(out []byte) string { return versionLine(out, squidVersion) }

// HalfCloseCut: squid sends nothing of the answer of an exchange whose
// client shuts down its sending side after the request. On its HTTP port
// the client's end of stream, reaching squid before the answer, makes it
// abort the request and close the connection (client_side.cc,
// shouldCloseOnEof: "yes, without half_closed_clients"). The config leaves
// half_closed_clients at its default, off: on, squid 5.7 aborts at the
// first half-closed request (comm.cc assertion "isOpen(fd) &&
// !commHasHalfClosedMonitor(fd)", squid's bug 4156, fixed in squid 7 and
// in no 5.x or 6.x release). Through a CONNECT tunnel squid ends both
// sides as soon as either side's end of stream comes (tunnel.cc: "Nothing
// to write or client gone. Terminate the tunnel."), whatever
// half_closed_clients says, in squid 7 as in 5.7. In a 5 s mix-http run
// over 50 connections every half-closed exchange failed, 172 of 172, and
// no other; in mix-connect 215 of 215.
func (Squid) HalfCloseCut() string {
	return "squid closes a connection whose client half-closed before answering: over HTTP as " +
		"half_closed_clients is off (on, squid before 7 aborts on an assertion, its bug 4156), " +
		"through CONNECT whatever the setting"
}

// Instance renders squid/squid.conf; Validate is squid -k parse on it.
func (s Squid) Instance(c Column, m results.Mode, site Site) (Instance, error) {
	base, err := checkInstance(s, c, m)
	if err != nil {
		return Instance{}, err
	}
	v := newView(s, c, base, site)
	conf, err := render(squidConf, v)
	if err != nil {
		return Instance{}, err
	}
	bin := v.Binary
	cfg := v.Path("squid/squid.conf")
	return Instance{
		Files:    []File{{Path: "squid/squid.conf", Data: conf, Owner: squidUser}},
		Validate: append([]string{bin, "-k", "parse", "-f", cfg}, c.Flags...),
		// -N: foreground, no daemon and no kid processes.
		Argv:  append([]string{bin, "-N", "-f", cfg}, c.Flags...),
		Ready: v.Ready,
	}, nil
}

var squidConf = template.Must(template.New("squid").Parse(`# squid for column {{.QuotedName}}, mode {{.Mode}}; rendered by bench.
http_port {{.Listen}}
# one process: -N runs no kids, as workers 1 (the default) would
workers 1
cache_effective_user ` + squidUser + `
pid_filename {{call .Path "squid/squid.pid"}}
coredump_dir {{call .Path "squid"}}
max_filedescriptors {{.FDs}}
shutdown_lifetime 0 seconds

# no cache
cache deny all
cache_mem 0 MB
memory_pools off

# no logs but errors
access_log none
cache_store_log none
logfile_rotate 0
cache_log {{call .Path "squid/cache.log"}}
debug_options ALL,0

# pass requests as they are
via off
forwarded_for delete
httpd_suppress_version_string on
client_db off
pinger_enable off
netdb_filename none
tcp_outgoing_address {{.Site.OriginSide}}

# the origin only
acl origin dst {{.Site.Origin}}/32
http_access allow origin
http_access deny all
`))

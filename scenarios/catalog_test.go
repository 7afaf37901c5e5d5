package scenarios

import (
	"bench/internal/text"
	"bench/results"
	"fmt"
	"strings"
	"testing"
)

func TestCatalog(t *testing.T) {
	// The loads each mode's table has rows for in the seeds.
	want := map[results.Mode][]string{
		results.HTTP:    {"ka-1k", "ka-1m", "ka-50k-2000", "ka-2k-50k-2000", "close-1k"},
		results.Connect: {"stream1-down", "stream16", "ka-1k", "ka-50k-2000", "ka-2k-50k-2000", "close-1k"},
		results.Socks:   {"stream1-down", "stream16", "ka-1k", "ka-50k-2000", "ka-2k-50k-2000", "close-1k"},
		results.Relay:   {"stream1", "stream1-down", "stream16", "ka-1k", "ka-50k-2000", "ka-2k-50k-2000", "close-1k"},
		// the mix tables' rows: mix-http and mix-http-3k, ...
		results.TLSTerm: {"ka-1k", "ka-1m", "close-1k", "stream1-down", "stream16"},
		results.TLSInit: {"ka-1k", "ka-1m", "close-1k", "stream1-down", "stream16"},
		results.TLSTunnel: {"TLS_AES_128_GCM_SHA256-up", "TLS_AES_128_GCM_SHA256-down",
			"TLS_AES_256_GCM_SHA384-up", "TLS_AES_256_GCM_SHA384-down",
			"TLS_CHACHA20_POLY1305_SHA256-up", "TLS_CHACHA20_POLY1305_SHA256-down",
			"plaintext-up", "plaintext-down"},
		results.TLSHandshake: {"full", "resumed"},
		// and each mode's sweep, which no seed has: mix-http-sweep, ...
		results.MixHTTP:    {"mix", "mix-3k", "sweep"},
		results.MixConnect: {"mix", "mix-3k", "sweep"},
		results.MixSocks:   {"mix", "mix-3k", "sweep"},
		results.MixRelay:   {"mix", "mix-3k", "sweep"},
		results.MixTLS:     {"sweep"},
	}
	got := make(map[results.Mode][]string)
	names := make(map[string]bool)
	for _, s := range Catalog() {
		got[s.Mode] = append(got[s.Mode], s.Load.Name)
		wantName := string(s.Mode) + "-" + s.Load.Name
		if strings.HasPrefix(string(s.Mode), "mix-") && strings.HasPrefix(s.Load.Name, "mix") { // as the reference tables name their rows
			wantName = string(s.Mode) + strings.TrimPrefix(s.Load.Name, "mix")
		}
		if s.Name != wantName {
			t.Errorf("scenario %q: want the name %s", s.Name, wantName)
		}
		if names[s.Name] {
			t.Errorf("scenario %q twice", s.Name)
		}
		names[s.Name] = true
		if DriverFor(s) == nil {
			t.Errorf("scenario %q: no driver for %q", s.Name, s.Load.Tool)
		}
	}
	for m, loads := range want {
		if strings.Join(got[m], " ") != strings.Join(loads, " ") {
			t.Errorf("mode %s loads = %v; want %v", m, got[m], loads)
		}
	}
	if len(got) != len(want) {
		t.Errorf("catalog modes = %d; want %d", len(got), len(want))
	}
}

func TestLoads(t *testing.T) {
	// The Scenarios table of the seeds, load by load.
	cases := []struct {
		name  string
		tool  string
		conns int
		path  string
		post  int
		close bool
		rev   bool
	}{
		{"relay-stream1", ToolIperf3, 1, "", 0, false, false},
		{"relay-stream1-down", ToolIperf3, 1, "", 0, false, true},
		{"relay-stream16", ToolIperf3, 16, "", 0, false, false},
		{"http-ka-1k", ToolWrk, 64, "/1k", 0, false, false},
		{"http-ka-1m", ToolWrk, 16, "/1m", 0, false, false},
		{"http-ka-50k-2000", ToolWrk, 2000, "/50k", 0, false, false},
		{"http-ka-2k-50k-2000", ToolWrk, 2000, "/50k", 2048, false, false},
		{"http-close-1k", ToolWrk, 64, "/1k", 0, true, false},
	}
	for _, c := range cases {
		s, ok := byName(c.name)
		if !ok {
			t.Errorf("ByName(%q) not found", c.name)
			continue
		}
		l := s.Load
		if l.Tool != c.tool || l.Conns != c.conns || l.Path != c.path || l.PostBytes != c.post || l.Close != c.close || l.Reverse != c.rev {
			t.Errorf("ByName(%q).Load = %+v; want tool %s, %d conns, path %q, post %d, close %v, reverse %v",
				c.name, l, c.tool, c.conns, c.path, c.post, c.close, c.rev)
		}
	}
	if s, ok := byName("http-stream1"); ok {
		t.Errorf("ByName(http-stream1) = %+v; the seeds measure no streams through the HTTP proxy", s)
	}
}

func TestSelect(t *testing.T) {
	cases := []struct {
		spec    string
		want    string // names, space-separated
		wantN   int    // when want is empty: how many
		wantErr string
	}{
		// A name.
		{spec: "http-ka-1k", want: "http-ka-1k"},
		// A list, kept in its order, spaces allowed.
		{spec: "relay-close-1k, http-ka-1k", want: "relay-close-1k http-ka-1k"},
		// A glob over a mode.
		{spec: "socks-*", want: "socks-stream1-down socks-stream16 socks-ka-1k socks-ka-50k-2000 socks-ka-2k-50k-2000 socks-close-1k"},
		// A glob over a load, across modes.
		{spec: "*-stream16", want: "connect-stream16 socks-stream16 relay-stream16 tls-term-stream16 tls-init-stream16"},
		// Overlaps appear once.
		{spec: "http-ka-1k,http-*", want: "http-ka-1k http-ka-1m http-ka-50k-2000 http-ka-2k-50k-2000 http-close-1k"},
		// Everything but the sweeps.
		{spec: "all", wantN: 52},
		// A sweep by its name; not by a glob.
		{spec: "mix-http-sweep", want: "mix-http-sweep"},
		{spec: "mix-http*", want: "mix-http mix-http-3k"},
		{spec: "*-sweep", wantErr: `glob "*-sweep" matches none`},
		// A typo names the close ones.
		{spec: "http-ka-1kb", wantErr: `no such scenario "http-ka-1kb": did you mean http-ka-1k`},
		{spec: "sock-stream16", wantErr: "socks-stream16"},
		// A glob that matches nothing.
		{spec: "quic-*", wantErr: `no such scenario: glob "quic-*" matches none`},
		// TLS ended and begun.
		{spec: "tls-*-ka-1k", want: "tls-term-ka-1k tls-init-ka-1k"},
		// A bad glob.
		{spec: "http-[", wantErr: "bad glob"},
		// Empty entries.
		{spec: "", wantErr: "empty name"},
		{spec: "http-ka-1k,,", wantErr: "empty name"},
	}
	for _, c := range cases {
		got, err := Select(c.spec)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("Select(%q) error = %v; want one containing %q", c.spec, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("Select(%q) error: %v", c.spec, err)
			continue
		}
		var names []string
		for _, s := range got {
			names = append(names, s.Name)
		}
		if c.want != "" && strings.Join(names, " ") != c.want {
			t.Errorf("Select(%q) = %v; want %v", c.spec, names, c.want)
		}
		if c.want == "" && len(names) != c.wantN {
			t.Errorf("Select(%q) = %d scenarios; want %d", c.spec, len(names), c.wantN)
		}
	}
}

func TestSweeps(t *testing.T) {
	cases := []struct {
		spec    string
		want    string // names, space-separated
		wantErr string
	}{
		// a mix scenario gives its mode's sweep, of whichever load
		{spec: "mix-http", want: "mix-http-sweep"},
		{spec: "mix-connect-3k", want: "mix-connect-sweep"},
		{spec: "mix-socks-sweep", want: "mix-socks-sweep"},
		// a mode once, in the order first named
		{spec: "mix-relay,mix-http-3k,mix-relay-3k", want: "mix-relay-sweep mix-http-sweep"},
		// every mix mode, by a glob or all (the closed loops of all left out)
		{spec: "mix-*", want: "mix-http-sweep mix-connect-sweep mix-socks-sweep mix-relay-sweep mix-tls-sweep"},
		{spec: "all", want: "mix-http-sweep mix-connect-sweep mix-socks-sweep mix-relay-sweep mix-tls-sweep"},
		{spec: "*-3k", want: "mix-http-sweep mix-connect-sweep mix-socks-sweep mix-relay-sweep"},
		// a mode whose search is its only scenario, by its name or the search's
		{spec: "mix-tls", want: "mix-tls-sweep"},
		{spec: "mix-tls-sweep,mix-tls", want: "mix-tls-sweep"},
		{spec: "mix-tls*", want: "mix-tls-sweep"},
		// a closed loop has no rate to step: refused, named
		{spec: "http-ka-1k", wantErr: `no sweep of "http-ka-1k": http-ka-1k is wrk, 64 connections, GET /1k kept alive, a closed loop`},
		{spec: "mix-http,*-stream16", wantErr: `no sweep of "*-stream16"`},
		// what Select refuses
		{spec: "mix-htp", wantErr: "did you mean mix-http"},
	}
	for _, c := range cases {
		got, err := Sweeps(c.spec)
		var names []string
		for _, s := range got {
			names = append(names, s.Name)
			if !s.Load.Sweep || s.Load.Name != results.LoadSweep {
				t.Errorf("Sweeps(%q) gave %s of load %+v; want a sweep", c.spec, s.Name, s.Load)
			}
		}
		switch {
		case c.wantErr == "" && (err != nil || strings.Join(names, " ") != c.want):
			t.Errorf("Sweeps(%q) = %v, %v; want %v", c.spec, names, err, c.want)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("Sweeps(%q) = %v, %v; want an error with %q", c.spec, names, err, c.wantErr)
		}
	}
}

func TestLoadString(t *testing.T) {
	cases := []struct{ name, want string }{
		{"http-ka-2k-50k-2000", "wrk, 2000 connections, POST /50k with 2048 bytes kept alive"},
		{"relay-close-1k", "wrk, 64 connections, GET /1k a new connection each"},
		{"socks-stream1-down", "iperf3, 1 stream, download"},
		{"relay-stream16", "iperf3, 16 streams, upload"},
		{"mix-http", "bench mix, 20000 connections, 2000 exchanges at a time, one in 10 half-closed"},
		{"mix-relay-3k", "bench mix, 20000 connections, 3000 exchanges a second, one in 10 half-closed"},
		{"tls-tunnel-TLS_AES_256_GCM_SHA384-down", "iperf3, 1 stream, download through a TLS tunnel, TLS_AES_256_GCM_SHA384"},
		{"tls-handshake-resumed", "openssl s_time, sequential connections, resumed sessions"},
	}
	for _, c := range cases {
		s, _ := byName(c.name)
		if got := s.Load.String(); got != c.want {
			t.Errorf("%s: Load.String() = %q; want %q", c.name, got, c.want)
		}
	}
}

// Every catalog load's description begins with the tool that runs it,
// says what of the load tells it apart (its connections or streams, their
// direction, path, body, pace, suite, resumption), and no two loads of a
// mode read alike.
func TestLoadStringCatalog(t *testing.T) {
	seen := map[string]string{}
	for _, s := range Catalog() {
		l, got := s.Load, s.Load.String()
		var want []string
		switch l.Tool {
		case ToolIperf3:
			want = append(want, text.Plural(l.Conns, "stream"), map[bool]string{false: "upload", true: "download"}[l.Reverse], l.Suite)
		case ToolWrk:
			want = append(want, text.Plural(l.Conns, "connection"), l.Path+" ", map[bool]string{false: "kept alive", true: "a new connection each"}[l.Close])
			if l.PostBytes > 0 {
				want = append(want, fmt.Sprintf("POST %s with %d bytes", l.Path, l.PostBytes))
			}
		case ToolBench:
			want = append(want, text.Plural(l.Conns, "connection"), "half-closed")
			switch {
			case l.Sweep:
				want = append(want, "the highest rate", "--sweep")
			case l.Rate > 0:
				want = append(want, text.Plural(l.Rate, "exchange")+" a second")
			default:
				want = append(want, text.Plural(l.Active, "exchange")+" at a time")
			}
		case ToolOpenSSL:
			want = append(want, map[bool]string{false: "full handshakes", true: "resumed sessions"}[l.Resume])
		default:
			t.Errorf("%s: a load of tool %q that String does not describe", s.Name, l.Tool)
		}
		tool := DriverFor(s).Tool()
		if tool == ToolBench {
			tool = "bench mix"
		}
		if tool == ToolOpenSSL {
			tool = "openssl s_time"
		}
		if !strings.HasPrefix(got, tool+", ") {
			t.Errorf("%s: %q does not begin with its tool, %s", s.Name, got, tool)
		}
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q does not say %q", s.Name, got, w)
			}
		}
		key := string(s.Mode) + " " + got
		if other, ok := seen[key]; ok {
			t.Errorf("%s and %s: both %q", other, s.Name, got)
		}
		seen[key] = s.Name
	}
}

// byName returns the scenario of the catalog called name.
func byName(name string) (Scenario, bool) {
	for _, s := range Catalog() {
		if s.Name == name {
			return s, true
		}
	}
	return Scenario{}, false
}

// TestFixedRateCatalog: the report's reading of a load's name as
// fixed-rate (results.FixedRate, which the headlines rank by latency)
// holds for every load of the catalog: those with a rate asked and no
// sweep, and no other.
func TestFixedRateCatalog(t *testing.T) {
	for _, s := range Catalog() {
		l := s.Load
		if got, want := results.FixedRate(l.Name), l.Rate > 0 && !l.Sweep; got != want {
			t.Errorf("results.FixedRate(%q) = %v; want %v (rate %d)", l.Name, got, want, l.Rate)
		}
	}
}

package scenarios

import (
	"bench/internal/text"
	"bench/results"
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"time"
)

// wrkTimeout is wrk's per-request limit; the reference results count requests over it
// as timeouts ("wrk's 2 second limit").
const wrkTimeout = 2 * time.Second

// The loads of the reference results' Scenarios table, by name.
var (
	loadStream1     = Load{Name: "stream1", Tool: ToolIperf3, Conns: 1}
	loadStream1Down = Load{Name: "stream1-down", Tool: ToolIperf3, Conns: 1, Reverse: true}
	loadStream16    = Load{Name: "stream16", Tool: ToolIperf3, Conns: 16}
	// 1 KB answers over 64 kept-alive connections.
	loadKa1k = Load{Name: "ka-1k", Tool: ToolWrk, Conns: 64, Path: "/1k", Timeout: wrkTimeout}
	// 1 MB answers over 16 kept-alive connections.
	loadKa1m = Load{Name: "ka-1m", Tool: ToolWrk, Conns: 16, Path: "/1m", Timeout: wrkTimeout}
	// 2000 kept-alive connections, 50 KB answers.
	loadKa50k2000 = Load{Name: "ka-50k-2000", Tool: ToolWrk, Conns: 2000, Path: "/50k", Timeout: wrkTimeout}
	// The same, each request a POST with a 2 KB body.
	loadKa2k50k2000 = Load{Name: "ka-2k-50k-2000", Tool: ToolWrk, Conns: 2000, Path: "/50k", PostBytes: 2048, Timeout: wrkTimeout}
	// 64 connections, a new one for every request.
	loadClose1k = Load{Name: "close-1k", Tool: ToolWrk, Conns: 64, Path: "/1k", Close: true, Timeout: wrkTimeout}
	// 20000 connections open, 2000 exchanges in flight over them, answers
	// of the mix's sizes (MixAnswers).
	loadMix = Load{Name: "mix", Tool: ToolBench, Conns: 20000, Active: 2000, Timeout: wrkTimeout}
	// The same connections, 3000 exchanges a second.
	loadMix3k = Load{Name: "mix-3k", Tool: ToolBench, Conns: 20000, Rate: 3000, Timeout: wrkTimeout}
	// The same connections, the search for the highest rate a column
	// sustains: fixed-rate steps over them (harness/sweep).
	loadSweep = Load{Name: results.LoadSweep, Tool: ToolBench, Conns: 20000, Sweep: true, Timeout: wrkTimeout}
)

// The TLS 1.3 cipher suites of stunnel's performance page, in its
// table's order.
var TunnelSuites = []string{"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"}

// tunnelLoads are the tls-tunnel loads: one iperf3 stream through the
// tunnel per suite, client to server ("-up") and server to client
// ("-down"), and the same without the tunnel ("plaintext-up", "-down").
func tunnelLoads() []Load {
	var out []Load
	for _, suite := range append(slices.Clone(TunnelSuites), "") {
		name := suite
		if suite == "" {
			name = "plaintext"
		}
		out = append(out,
			Load{Name: name + "-up", Tool: ToolIperf3, Conns: 1, Suite: suite},
			Load{Name: name + "-down", Tool: ToolIperf3, Conns: 1, Suite: suite, Reverse: true})
	}
	return out
}

// The tls-handshake loads: openssl s_time's sequential connections, each
// a full handshake, or each resuming the session of the first.
var (
	loadFull    = Load{Name: "full", Tool: ToolOpenSSL, Conns: 1}
	loadResumed = Load{Name: "resumed", Tool: ToolOpenSSL, Conns: 1, Resume: true}
)

// PageMethod is stunnel's performance page's method, the tunnel and
// handshake scenarios' own: 5 samples of 10 s, each after a 1 s warm-up,
// the figures their medians.
var PageMethod = results.Method{Reps: 5, Window: results.Span(10 * time.Second), Warmup: results.Span(time.Second)}

// catalog lists, per mode, the loads the reference results measure in it, in the
// order of their tables' rows, and the method of its runs where the
// mode's family has one of its own (method: the session's otherwise).
var catalog = []struct {
	mode   results.Mode
	loads  []Load
	method *results.Method
}{
	{results.HTTP, []Load{loadKa1k, loadKa1m, loadKa50k2000, loadKa2k50k2000, loadClose1k}, nil},
	{results.Connect, []Load{loadStream1Down, loadStream16, loadKa1k, loadKa50k2000, loadKa2k50k2000, loadClose1k}, nil},
	{results.Socks, []Load{loadStream1Down, loadStream16, loadKa1k, loadKa50k2000, loadKa2k50k2000, loadClose1k}, nil},
	{results.Relay, []Load{loadStream1, loadStream1Down, loadStream16, loadKa1k, loadKa50k2000, loadKa2k50k2000, loadClose1k}, nil},
	{results.TLSTerm, []Load{loadKa1k, loadKa1m, loadClose1k, loadStream1Down, loadStream16}, nil},
	{results.TLSInit, []Load{loadKa1k, loadKa1m, loadClose1k, loadStream1Down, loadStream16}, nil},
	{results.MixHTTP, []Load{loadMix, loadMix3k, loadSweep}, nil},
	{results.MixConnect, []Load{loadMix, loadMix3k, loadSweep}, nil},
	{results.MixSocks, []Load{loadMix, loadMix3k, loadSweep}, nil},
	{results.MixRelay, []Load{loadMix, loadMix3k, loadSweep}, nil},
	// mix-relay through a proxy that ends TLS: its search alone.
	{results.MixTLS, []Load{loadSweep}, nil},
	{results.TLSTunnel, tunnelLoads(), &PageMethod},
	{results.TLSHandshake, []Load{loadFull, loadResumed}, &PageMethod},
}

// OwnMethod returns the method of mode m's runs where its family has one
// of its own.
func OwnMethod(m results.Mode) (results.Method, bool) {
	for _, e := range catalog {
		if e.mode == m && e.method != nil {
			return *e.method, true
		}
	}
	return results.Method{}, false
}

// Catalog returns every scenario a session can run, grouped by mode in
// the order of the reference tables. The slice is the caller's.
func Catalog() []Scenario {
	var out []Scenario
	for _, m := range catalog {
		for _, l := range m.loads {
			out = append(out, Scenario{Name: results.ScenarioName(m.mode, l.Name), Mode: m.mode, Load: l})
		}
	}
	return out
}

// Select picks scenarios from the catalog by spec: "all", a name, a glob
// ("socks-*", "*-ka-1k") or a comma-separated list of these. Each
// scenario appears once, in the order the spec first names it. A name or
// glob that matches nothing is an error that lists the names closest to
// it. The sweeps (load sweep, mix-http-sweep, ...) are picked by their
// names alone, not by "all" or a glob: a search takes many windows, and
// a session runs them when asked (bench run --sweep, Sweeps).
func Select(spec string) ([]Scenario, error) {
	all := Catalog()
	var out []Scenario
	seen := make(map[string]bool)
	add := func(s Scenario) {
		if !seen[s.Name] {
			seen[s.Name] = true
			out = append(out, s)
		}
	}
	for _, term := range strings.Split(spec, ",") {
		term = strings.TrimSpace(term)
		if term == "" {
			return nil, fmt.Errorf("scenario list %q: empty name; give \"all\", names or globs separated by commas", spec)
		}
		if term == "all" {
			for _, s := range all {
				if !s.Load.Sweep {
					add(s)
				}
			}
			continue
		}
		if _, err := path.Match(term, ""); err != nil {
			return nil, fmt.Errorf("scenario %q: bad glob: %w", term, err)
		}
		n := len(seen)
		for _, s := range all {
			if ok, _ := path.Match(term, s.Name); ok && (!s.Load.Sweep || term == s.Name) {
				add(s)
			}
		}
		if len(seen) == n && !matchesAny(term, out) {
			if strings.ContainsAny(term, "*?[") {
				return nil, fmt.Errorf("%w: glob %q matches none", ErrNoScenario, term)
			}
			return nil, unknownScenario(term, all)
		}
	}
	return out, nil
}

// ErrNoScenario is the error of a selection term that names no scenario.
var ErrNoScenario = errors.New("no such scenario")

// ErrNoSweep is the error of a sweep asked of a scenario whose load has
// no rate to step: wrk's, iperf3's and openssl s_time's closed loops.
var ErrNoSweep = errors.New("no sweep")

// Sweeps picks the sweeps of the mix modes spec selects: each term of it
// must pick a scenario of a mix mode (any of its loads: mix, mix-3k,
// sweep; a glob picks the sweeps too), or name a mix mode (mix-tls, whose
// search is its only scenario), and each mix mode picked gives its
// sweep, once, in the order first picked; "all" gives every mix mode's.
// A term that picks only other scenarios, whose loads are closed loops
// without a rate, is refused (ErrNoSweep); one that picks none, as
// Select refuses it.
func Sweeps(spec string) ([]Scenario, error) {
	var out []Scenario
	seen := map[results.Mode]bool{}
	for _, term := range strings.Split(spec, ",") {
		term = strings.TrimSpace(term)
		var picked []Scenario
		if _, named := sweepOf(results.Mode(term)); term == "all" || named || strings.ContainsAny(term, "*?[") {
			for _, sc := range Catalog() {
				if ok, _ := path.Match(term, sc.Name); term == "all" || ok || string(sc.Mode) == term {
					picked = append(picked, sc)
				}
			}
		}
		if len(picked) == 0 {
			var err error
			if picked, err = Select(term); err != nil {
				return nil, err
			}
		}
		found := false
		for _, sc := range picked {
			sw, ok := sweepOf(sc.Mode)
			if !ok {
				continue
			}
			found = true
			if !seen[sc.Mode] {
				seen[sc.Mode] = true
				out = append(out, sw)
			}
		}
		if !found {
			return nil, fmt.Errorf("%w of %q: %s is %s, a closed loop with no rate to step; a sweep runs the mix modes' load (%s)",
				ErrNoSweep, term, picked[0].Name, picked[0].Load, strings.Join(sweepModes(), ", "))
		}
	}
	return out, nil
}

// sweepOf is the sweep of mode m, if it has one.
func sweepOf(m results.Mode) (Scenario, bool) {
	for _, sc := range Catalog() {
		if sc.Mode == m && sc.Load.Sweep {
			return sc, true
		}
	}
	return Scenario{}, false
}

// sweepModes are the modes that have a sweep.
func sweepModes() []string {
	var out []string
	for _, sc := range Catalog() {
		if sc.Load.Sweep {
			out = append(out, string(sc.Mode))
		}
	}
	return out
}

// matchesAny reports whether term matches a scenario already selected, so
// that "http-ka-1k,http-*" is not an error.
func matchesAny(term string, picked []Scenario) bool {
	for _, s := range picked {
		if ok, _ := path.Match(term, s.Name); ok {
			return true
		}
	}
	return false
}

// unknownScenario is the error for a term that matches no scenario: it
// names the closest scenarios so that a typo is a glance away.
func unknownScenario(term string, all []Scenario) error {
	type scored struct {
		name string
		d    int
	}
	var c []scored
	for _, s := range all {
		c = append(c, scored{s.Name, distance(term, s.Name)})
	}
	sort.SliceStable(c, func(i, j int) bool { return c[i].d < c[j].d })
	var names []string
	for _, x := range c {
		if len(names) == 3 || (len(names) > 0 && x.d > c[0].d+2) {
			break
		}
		names = append(names, x.name)
	}
	return fmt.Errorf("%w %q: did you mean %s?", ErrNoScenario, term, strings.Join(names, ", "))
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// String describes the load for people, its tool first: "wrk, 64
// connections, GET /1k kept alive", "iperf3, 16 streams, upload", "bench
// mix, 20000 connections, 2000 exchanges at a time", "openssl s_time,
// sequential connections, full handshakes". bench list prints it.
func (l Load) String() string {
	switch l.Tool {
	case ToolIperf3:
		dir := "upload"
		if l.Reverse {
			dir = "download"
		}
		s := fmt.Sprintf("iperf3, %s, %s", text.Plural(l.Conns, "stream"), dir)
		if l.Suite != "" {
			s += " through a TLS tunnel, " + l.Suite
		}
		return s
	case ToolWrk:
		req := "GET " + l.Path
		if l.PostBytes > 0 {
			req = fmt.Sprintf("POST %s with %d bytes", l.Path, l.PostBytes)
		}
		conn := "kept alive"
		if l.Close {
			conn = "a new connection each"
		}
		return fmt.Sprintf("wrk, %s, %s %s", text.Plural(l.Conns, "connection"), req, conn)
	case ToolBench:
		pace := fmt.Sprintf("%s at a time", text.Plural(l.Active, "exchange"))
		switch {
		case l.Sweep:
			pace = "the highest rate that meets the bounds, searched for (bench run --sweep)"
		case l.Rate > 0:
			pace = fmt.Sprintf("%s a second", text.Plural(l.Rate, "exchange"))
		}
		return fmt.Sprintf("bench mix, %s, %s, one in 10 half-closed", text.Plural(l.Conns, "connection"), pace)
	case ToolOpenSSL:
		what := "full handshakes"
		if l.Resume {
			what = "resumed sessions"
		}
		return "openssl s_time, sequential connections, " + what
	}
	return fmt.Sprintf("%s, %s", l.Tool, text.Plural(l.Conns, "connection"))
}

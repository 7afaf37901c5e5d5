package scenarios

import (
	"bench/results"
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMixAnswers: the weights add up, the mean is the seeds' 45 KB, and
// the origin serves every answer with its content.
func TestMixAnswers(t *testing.T) {
	sum := 0
	for _, a := range MixAnswers() {
		sum += a.Weight
	}
	if sum != MixWeights {
		t.Errorf("weights add up to %d; want %d", sum, MixWeights)
	}
	// 1.72 Gbit/s at 4.7k exchanges a second, 1.08 at 3.0k.
	for _, seed := range []struct{ gbits, rate float64 }{{1.72, 4700}, {1.08, 3000}} {
		implied := seed.gbits * 1e9 / 8 / seed.rate
		if m := MixMeanSize(); m < implied*0.9 || m > implied*1.1 {
			t.Errorf("mean answer %.0f bytes; the seeds' %.2f Gbit/s at %.0f/s imply %.0f", m, seed.gbits, seed.rate, implied)
		}
	}
	files := map[string][]byte{}
	for _, f := range Origin("/o", "10.0.2.2", 1, OriginTLS{}).Files {
		files[f.Path] = f.Data
	}
	for _, a := range MixAnswers() {
		if !bytes.Equal(files[originWWW+a.Path], OriginAnswer(a.Size)) {
			t.Errorf("the origin does not serve %s as OriginAnswer(%d)", a.Path, a.Size)
		}
	}
}

// mixScenario is a mix scenario with load l, named as the catalog names
// them.
func mixScenario(m results.Mode, l Load) Scenario {
	return Scenario{Name: results.ScenarioName(m, l.Name), Mode: m, Load: l}
}

// mix-tls runs bench mix in TLS to the proxy's TLS listener in front of
// the mix's origin, or to the origin's own TLS wrapper for the baseline,
// verifying them with the target's CA; a target without a CA is refused.
func TestMixTLSInvocation(t *testing.T) {
	s := mixScenario(results.MixTLS, loadSweep)
	for _, c := range []struct {
		name   string
		target Target
		proxy  string
	}{
		{"proxy", topoProxy(results.TLSTerm), "10.0.1.1:8443"},
		{"no proxy", topoDirect, "10.0.2.2:8443"},
	} {
		c.target.CA = "/run/bench/tls/ca.pem"
		inv, err := Mix{}.Invocation(s, c.target, 10*time.Second, "/run/bench/run-1")
		if err != nil {
			t.Fatalf("%s: Invocation: %v", c.name, err)
		}
		argv := strings.Join(inv.Argv, " ")
		for _, want := range []string{"--mode relay", "--proxy " + c.proxy, "--origin 10.0.2.2:8080", "--tls-ca /run/bench/tls/ca.pem", "--steps"} {
			if !strings.Contains(argv, want) {
				t.Errorf("%s: %s; want %s in it", c.name, argv, want)
			}
		}
		c.target.CA = ""
		if _, err := (Mix{}).Invocation(s, c.target, 10*time.Second, "/run/bench/run-1"); err == nil || !strings.Contains(err.Error(), "no CA") {
			t.Errorf("%s: Invocation without a CA = %v; want it refused", c.name, err)
		}
	}
}

// TestMixInvocationGolden renders bench mix's command line for each
// mode, closed and open loop, and the baseline.
func TestMixInvocationGolden(t *testing.T) {
	var b bytes.Buffer
	for _, m := range []results.Mode{results.MixHTTP, results.MixConnect, results.MixSocks, results.MixRelay} {
		base := results.Mode(strings.TrimPrefix(string(m), "mix-"))
		for _, l := range []Load{loadMix, loadMix3k} {
			l.Warmup = 2 * time.Second // the session's, run by bench mix
			s := mixScenario(m, l)
			inv, err := Mix{}.Invocation(s, topoProxy(base), 10*time.Second, "/run/bench/run-1")
			if err != nil {
				t.Fatalf("Invocation(%s): %v", s.Name, err)
			}
			fmt.Fprintf(&b, "%s: %s", s.Name, dumpInvocation(inv))
		}
	}
	inv, err := Mix{}.Invocation(mixScenario(results.MixConnect, loadMix), topoDirect, 10*time.Second, "/run/bench/run-1")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "direct: %s", dumpInvocation(inv))
	checkGolden(t, "build/mix.golden", b.Bytes())
}

func TestMixInvocationErrors(t *testing.T) {
	both := loadMix
	both.Rate = 3000
	cases := []struct {
		s    Scenario
		t    Target
		want string
	}{
		{mixScenario(results.MixHTTP, Load{Name: "x", Conns: 10}), topoProxy(results.HTTP), "one of active, rate or sweep"},
		{mixScenario(results.MixHTTP, both), topoProxy(results.HTTP), "one of active, rate or sweep"},
		{mixScenario(results.MixHTTP, loadMix), Target{Origin: "10.0.2.2"}, "no proxy address"},
		{mixScenario(results.MixHTTP, loadMix), Target{Proxy: "10.0.1.1:3128"}, "no origin address"},
		{mixScenario(results.HTTP, loadMix), topoProxy(results.HTTP), "cannot run mode"},
	}
	for _, c := range cases {
		_, err := Mix{}.Invocation(c.s, c.t, time.Second, "/d")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Invocation(%s, %+v) error %v; want %q", c.s.Name, c.t, err, c.want)
		}
	}
}

// TestMixParse reads what bench mix printed (go test ./cmd/bench -run
// TestMix -capture-mix records it), checked against the JSON read here
// without the driver's types.
func TestMixParse(t *testing.T) {
	for _, c := range []struct {
		file  string
		check func(Measurement) bool
	}{
		// Two processes through a relay: no errors.
		{"mix-relay-procs2.json", func(m Measurement) bool { return m.Requests > 0 && m.Errors == 0 && m.Timeouts == 0 && m.HasLatency }},
		// Nothing listening: every exchange refused, each in the latency.
		{"mix-refused.json", func(m Measurement) bool { return m.Requests == 0 && m.Errors > 0 && m.HasLatency }},
		// A stall past the timeout at a fixed rate: timeouts, and late
		// exchanges counted as errors.
		{"mix-stall.json", func(m Measurement) bool { return m.Requests > 0 && m.Errors > 0 && m.Timeouts > 0 }},
	} {
		out := readCaptured(t, c.file)
		m, err := Mix{}.Parse(out)
		if err != nil {
			t.Errorf("Parse(%s): %v", c.file, err)
			continue
		}
		var raw struct {
			Exchanges, Bytes, Due int64
			Seconds               float64
			Started               time.Time
			Errors                map[string]int64
			P50                   float64 `json:"p50_ms"`
			P99                   float64 `json:"p99_ms"`
			P999                  float64 `json:"p999_ms"`
			HalfCloseFailed       int64   `json:"half_close_failed"`
		}
		if err := json.Unmarshal(out, &raw); err != nil {
			t.Fatal(err)
		}
		failed := int64(0)
		for k, v := range raw.Errors {
			if k != "timeout" {
				failed += v
			}
		}
		want := Measurement{
			Seconds: raw.Seconds, Started: raw.Started, Requests: raw.Exchanges, Bytes: raw.Bytes,
			Errors: failed, Timeouts: raw.Errors["timeout"],
			P50Ms: raw.P50, P99Ms: raw.P99, P999Ms: raw.P999,
			HasLatency: raw.Due > 0, HasP999: raw.Due > 0,
			HalfCloseFailed: raw.HalfCloseFailed,
		}
		if raw.Started.IsZero() || raw.Due < raw.Exchanges+failed+raw.Errors["timeout"] {
			t.Errorf("%s: window started %v, %d due; want a start, and every exchange and failure due", c.file, raw.Started, raw.Due)
		}
		if len(raw.Errors) != 7 {
			t.Errorf("%s: %d kinds of error; want 7", c.file, len(raw.Errors))
		}
		detail, note := m.Detail, m.Note
		m.Detail, m.Note = "", ""
		if m.Histogram == "" || len(m.Intervals) != 0 {
			t.Errorf("Parse(%s): histogram %q, %d intervals; want the histogram, and no intervals from an output without per_second", c.file, m.Histogram, len(m.Intervals))
		}
		m.Histogram = ""
		if note != "" {
			t.Errorf("Parse(%s): note %q; want none without reconnects", c.file, note)
		}
		if !reflect.DeepEqual(m, want) {
			t.Errorf("Parse(%s) = %+v; want %+v", c.file, m, want)
		}
		// The detail names each kind that failed, with its count.
		for k, v := range raw.Errors {
			if named := strings.Contains(detail, fmt.Sprintf("%s %d", k, v)); named != (v > 0) {
				t.Errorf("Parse(%s): detail %q; %s %d", c.file, detail, k, v)
			}
		}
		if !c.check(m) {
			t.Errorf("Parse(%s) = %+v: not what this output shows", c.file, m)
		}
	}
	// The seconds of the window are its intervals, the last what is
	// left of it.
	m, err := (Mix{}).Parse([]byte(`{"exchanges":30,"bytes":300,"seconds":2.5,"due":30,"per_second":[{"exchanges":10,"bytes":100},{"exchanges":12,"bytes":120},{"exchanges":8,"bytes":80}]}`))
	wantIv := []results.Interval{{Seconds: 1, Requests: 10, Bytes: 100}, {Seconds: 1, Requests: 12, Bytes: 120}, {Seconds: 0.5, Requests: 8, Bytes: 80}}
	if err != nil || !slices.Equal(m.Intervals, wantIv) {
		t.Errorf("Parse with per_second = %+v, %v; want intervals %+v", m.Intervals, err, wantIv)
	}
	// Reconnects are in the note, whatever the errors.
	if m, err := (Mix{}).Parse([]byte(`{"exchanges":100,"seconds":1,"due":100,"reconnects":7}`)); err != nil || !strings.HasPrefix(m.Note, "reconnects 7: ") || m.Detail != "" {
		t.Errorf("Parse with 7 reconnects = %+v, %v; want a note of them", m, err)
	}
	for _, bad := range []string{"", "{", `{"exchanges":1,"seconds":0}`} {
		if _, err := (Mix{}).Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q): no error", bad)
		}
	}
}

// TestMixOpened: bench mix's line that its connections are open reads
// back as its start, no other line does, and the report after it is
// what the driver parses.
func TestMixOpened(t *testing.T) {
	start := time.Date(2026, 12, 2, 1, 0, 50, 886805901, time.UTC)
	line, err := json.Marshal(MixOpened{Start: start})
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := ParseMixOpened(line); !ok || !o.Start.Equal(start) {
		t.Errorf("ParseMixOpened(%s) = %v, %v; want %v", line, o.Start, ok, start)
	}
	for _, other := range []string{`{"mode":"relay","exchanges":5}`, `{"opened":""}`, `opened`, ``} {
		if o, ok := ParseMixOpened([]byte(other)); ok {
			t.Errorf("ParseMixOpened(%q) = %v; want no opening", other, o)
		}
	}
	report := `{"mode":"relay","exchanges":5,"started":"2026-12-02T01:00:51Z","seconds":1,"due":5}`
	m, err := Mix{}.Parse([]byte(string(line) + "\n" + report + "\n"))
	if err != nil || m.Requests != 5 || m.Seconds != 1 {
		t.Errorf("Parse of the opening and the report = %+v, %v; want the report's 5 exchanges in 1 s", m, err)
	}
}

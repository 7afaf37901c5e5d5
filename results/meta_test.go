package results

import (
	"bench/inputerr"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMetaKeepsItsFormat: a metadata file as sessions have written it
// reads, and writes back byte for byte.
func TestMetaKeepsItsFormat(t *testing.T) {
	path := filepath.Join("testdata", "arm-m4-2026-10-13-evening.csv"+MetaSuffix)
	m, err := ReadMeta(path)
	if err != nil {
		t.Fatal(err)
	}
	if m.Machine.Label != "ARM (M4)" || m.Reps != 3 || m.Window != Span(10*time.Second) || m.Columns[1].Version != "1.24.0" {
		t.Errorf("read %+v", m)
	}
	out := filepath.Join(t.TempDir(), "m.json")
	if err := m.Write(out); err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(path)
	got, _ := os.ReadFile(out)
	if string(got) != string(want) {
		t.Errorf("written again it differs:\n%s\nwant\n%s", got, want)
	}
}

// TestReadMetas: a session file without metadata beside it has none; a
// metadata file that is not JSON is an error naming it.
func TestReadMetas(t *testing.T) {
	dir := t.TempDir()
	with, without, bad := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv"), filepath.Join(dir, "c.csv")
	b, _ := json.Marshal(Meta{Session: "s", Machine: MachineInfo{Label: "A"}})
	if err := os.WriteFile(MetaPath(with), b, 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := ReadMetas([]string{with, without})
	if err != nil {
		t.Fatal(err)
	}
	if files[0].Meta == nil || files[0].Meta.Machine.Label != "A" || files[1].Meta != nil || files[1].Path != without {
		t.Errorf("ReadMetas = %+v", files)
	}
	if err := os.WriteFile(MetaPath(bad), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadMetas([]string{bad}); err == nil || !strings.Contains(err.Error(), MetaPath(bad)) {
		t.Errorf("ReadMetas(bad) = %v; want an error naming %s", err, MetaPath(bad))
	}
}

// TestMixAccountingOf: a session names its mix accounting; one from
// before it did is MixDue where it records bench's build (recorded since
// after the fixed window) and MixAnswered where not.
func TestMixAccountingOf(t *testing.T) {
	build := &BuildInfo{Version: "(devel)", Go: "go1.26.0"}
	for _, c := range []struct {
		name string
		m    Meta
		want string
	}{
		// as sessions write it
		{"named", Meta{MixAccounting: MixDue, Bench: build}, MixDue},
		// a later accounting stands whatever else the file says
		{"named without build", Meta{MixAccounting: "other"}, "other"},
		// bench's build but no accounting: after the fixed window
		{"build", Meta{Bench: build}, MixDue},
		// neither: the reference session's
		{"neither", Meta{}, MixAnswered},
	} {
		if got := MixAccountingOf(&c.m); got != c.want {
			t.Errorf("MixAccountingOf(%s) = %q; want %q", c.name, got, c.want)
		}
	}
}

// TestBuildInfoString: a build names its version, its commit or that it
// is unknown, and its Go.
func TestBuildInfoString(t *testing.T) {
	for _, c := range []struct {
		b    BuildInfo
		want string
	}{
		{BuildInfo{Version: "(devel)", Revision: "3933942aaaabbbbccccdddd", Modified: true, Go: "go1.26.0"}, "(devel) 3933942aaaab, modified, go1.26.0"},
		{BuildInfo{Version: "v1.2.0", Revision: "1a2b3c4d", Go: "go1.26.0"}, "v1.2.0 1a2b3c4d, go1.26.0"},
		{BuildInfo{Version: "(devel)", Go: "go1.26.0"}, "(devel), commit unknown, go1.26.0"},
		{BuildInfo{Go: "go1.26.0"}, "(unknown version), commit unknown, go1.26.0"},
	} {
		if got := c.b.String(); got != c.want {
			t.Errorf("BuildInfo(%+v).String() = %q; want %q", c.b, got, c.want)
		}
	}
}

// Metadata of figures no session can have is refused, naming the file:
// counts negative or past 2^53, shares past 2^53, lengths of time
// negative or past a day; and so is a metadata file, or a history's
// entry, larger than MaxMeta.
func TestReadMetaBounds(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ name, json, want string }{
		{"negative reps", `{"session":"s","reps":-1}`, "reps -1: want 0 to 2^53"},
		{"cpus past 2^53", `{"machine":{"cpus":9007199254740993}}`, "machine's cpus 9007199254740993"},
		{"memory past 2^53", `{"machine":{"memory_bytes":18446744073709551615}}`, "machine's memory_bytes 9007199254740993"},
		{"negative window", `{"window":"-10s"}`, "window -10s: want 0 to 24h0m0s"},
		{"window of days", `{"warmup":"1s","window":"240h"}`, "window 240h0m0s"},
		{"method's window", `{"methods":{"tls-tunnel":{"reps":1,"window":"-1s"}}}`, "window of tls-tunnel -1s"},
		{"huge quota", `{"proxy_cpu_quota":1e300}`, "proxy_cpu_quota 1e+300"},
		{"negative sweep", `{"sweep":{"from":-5,"precision":0.02,"slo":{"p99":"10ms","errors":0.001}}}`, "sweep's from -5"},
		{"too large", `{"notes":["` + strings.Repeat("x", MaxMeta) + `"]}`, fmt.Sprintf("larger than %d bytes", MaxMeta)},
	} {
		path := filepath.Join(dir, "m.json")
		if err := os.WriteFile(path, []byte(c.json), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadMeta(path)
		if ie := (*inputerr.Error)(nil); !errors.As(err, &ie) || ie.File != path || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: ReadMeta = %v; want an inputerr.Error naming %s and saying %q", c.name, err, path, c.want)
		}
	}
	entry := filepath.Join(dir, "history.json")
	if err := os.WriteFile(entry, []byte(`{"bench_commit":"`+strings.Repeat("a", MaxMeta)+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := ReadJSON(entry, &v); err == nil || !strings.Contains(err.Error(), entry+": larger than") {
		t.Errorf("ReadJSON of %d bytes = %v; want it refused", MaxMeta+18, err)
	}
}

package results

import (
	"encoding/json"
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

package harness

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"bench/harness/host"
	"bench/proxies"
)

// A session's metadata asks each version of the role that runs the
// program, on its host: the columns' of the proxy's, the load tools' of
// the client's (on hosts of their own, each its host's).
func TestMetaVersionsByRole(t *testing.T) {
	var asked []string
	out := func(r host.Role, argv []string) string {
		if len(argv) == 0 {
			return ""
		}
		asked = append(asked, string(r)+" "+filepath.Base(argv[0]))
		if argv[0] == "cat" {
			return "ID=debian\n" // the client host's system
		}
		if r == host.RoleProxy {
			return "nginx version: nginx/9.9.9 (on the proxy's host)\n"
		}
		return "wrk 9.9.9 (on the client's host)\n"
	}
	cfg := SessionConfig{Columns: []proxies.Column{{Name: "nginx", Kind: "nginx"}}}
	m, err := newMeta(cfg, host.Layout{}, nil, nil, filepath.Join(t.TempDir(), "m.meta.json"), out)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Columns) != 1 || m.Columns[0].Version != "9.9.9" || !strings.Contains(m.Tools["wrk"], "on the client's host") {
		t.Errorf("columns %+v, tools %v; want nginx's version from the proxy's role, wrk's from the client's", m.Columns, m.Tools)
	}
	if !slices.Contains(asked, "proxy nginx") || !slices.Contains(asked, "client wrk") || !slices.Contains(asked, "client cat") || !slices.Contains(asked, "client dpkg-query") {
		t.Errorf("asked %v; want nginx of the proxy, wrk of the client, and proxychains4's package of the client's system", asked)
	}
}

package chromium

import (
	"bench/internal/testenv"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// CheckPage opens page (bench report's html) in Chromium from a file
// and checks that it loads with no console error, requests nothing but
// itself, has no script or link, and has bars bar charts, hdrs
// percentile charts and series time series. It keeps the screenshot as
// name.png in $BENCH_SCREENSHOTS when set (a directory), in the test's
// temporary directory otherwise. Without Chromium the test is skipped,
// or fails in CI.
func CheckPage(t *testing.T, page []byte, name string, bars, hdrs, series int) {
	t.Helper()
	testenv.NeedProgram(t, Binary)
	dir := t.TempDir()
	path := filepath.Join(dir, name+".html")
	if err := os.WriteFile(path, page, 0o644); err != nil {
		t.Fatal(err)
	}
	const count = `({bar: document.querySelectorAll("figure.bar > svg").length,
		hdr: document.querySelectorAll("figure.hdr > svg").length,
		series: document.querySelectorAll("figure.series > svg").length,
		scripts: document.scripts.length,
		links: document.querySelectorAll("link, img, iframe, object, embed, [src], [href]").length})`
	p, err := Open(context.Background(), path, filepath.Join(dir, "profile"), count, 1400)
	if err != nil {
		t.Fatal(err)
	}
	out := os.Getenv("BENCH_SCREENSHOTS")
	if out == "" {
		out = dir
	}
	shot := filepath.Join(out, name+".png")
	if err := os.WriteFile(shot, p.PNG, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", shot, len(p.PNG))
	if len(p.Errors) > 0 {
		t.Errorf("console errors: %q", p.Errors)
	}
	for _, u := range p.Requests {
		if u != "file://"+path {
			t.Errorf("the page requested %s; want nothing but itself", u)
		}
	}
	if len(p.Requests) == 0 {
		t.Errorf("no request seen, not even the page's own: the protocol's events were lost")
	}
	var got struct{ Bar, HDR, Series, Scripts, Links int }
	if err := json.Unmarshal(p.Value, &got); err != nil {
		t.Fatalf("the page's counts %s: %v", p.Value, err)
	}
	if got.Bar != bars || got.HDR != hdrs || got.Series != series || got.Scripts != 0 || got.Links != 0 {
		t.Errorf("the page has %d bar charts, %d percentile charts, %d series, %d scripts, %d links; want %d, %d, %d, none, none",
			got.Bar, got.HDR, got.Series, got.Scripts, got.Links, bars, hdrs, series)
	}
	if !bytes.HasPrefix(p.PNG, []byte("\x89PNG")) {
		t.Errorf("the screenshot is not a PNG")
	}
}

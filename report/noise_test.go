package report

import (
	"bytes"
	"strings"
	"testing"

	"bench/report/internal/reporttest"
	"bench/results"
)

func TestWriteNoisy(t *testing.T) {
	var rows []results.Row
	for i, k := range []float64{30, 33, 31} { // 10% apart: not more
		rows = append(rows, reporttest.Run("Intel", "s", "nginx", results.Copy, "ka-1k", i+1, k))
	}
	for i, k := range []float64{2.7, 4.7, 4.6} {
		rows = append(rows, reporttest.Run("Intel", "s", "no proxy", results.Baseline, "ka-50k-2000", i+1, k))
	}
	tables, err := Tables(rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	noisy := Noisy(tables)
	if len(noisy) != 1 || noisy[0].Cell.Proxy != "no proxy" || noisy[0].Label != "ka-50k-2000, k req/s" {
		t.Fatalf("Noisy = %+v; want no proxy's ka-50k-2000 alone", noisy)
	}
	var b bytes.Buffer
	WriteNoisy(&b, tables)
	out := b.String()
	for _, want := range []string{"runs spread more than 10%", "--reps auto", "HTTP proxy, ka-50k-2000, k req/s, no proxy: 43% over 3 runs\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("WriteNoisy lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	WriteNoisy(&b, tables[:0])
	if b.Len() != 0 {
		t.Errorf("WriteNoisy of no noisy cell wrote %q", b.String())
	}
}

// A tunnel's noisy cell is named by its direction, which its row, one
// proxy's, leaves to the columns.
func TestWriteNoisyTunnel(t *testing.T) {
	var rows []results.Row
	for i, gbit := range []float64{3.0, 3.6, 3.1} {
		rows = append(rows, results.Row{Machine: "Intel", Session: "s", Proxy: "stunnel", Group: results.Copy, Mode: results.TLSTunnel,
			Load: "TLS_AES_128_GCM_SHA256-down", Rep: i + 1, Seconds: 10, Bytes: int64(gbit * 1e9 / 8 * 10), Status: results.OK, Bound: "proxy"})
	}
	tables, err := Tables(rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	WriteNoisy(&b, tables)
	if want := "TLS tunnel, TLS_AES_128_GCM_SHA256, stunnel, Server to client: 19% over 3 runs\n"; !strings.Contains(b.String(), want) {
		t.Errorf("WriteNoisy lacks %q:\n%s", want, b.String())
	}
	// With two proxies the row's label names the proxy.
	for i, gbit := range []float64{3.0, 3.6, 3.1} {
		rows = append(rows, results.Row{Machine: "Intel", Session: "s", Proxy: "nginx", Group: results.Copy, Mode: results.TLSTunnel,
			Load: "TLS_AES_128_GCM_SHA256-down", Rep: i + 1, Seconds: 10, Bytes: int64(gbit * 1e9 / 8 * 10), Status: results.OK, Bound: "proxy"})
	}
	if tables, err = Tables(rows, Options{}); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	WriteNoisy(&b, tables)
	if want := "TLS tunnel, TLS_AES_128_GCM_SHA256 (nginx), Server to client: 19% over 3 runs\n"; !strings.Contains(b.String(), want) {
		t.Errorf("WriteNoisy lacks %q:\n%s", want, b.String())
	}
}

package report

import (
	"bench/report/results"
	"bytes"
	"strings"
	"testing"
)

func TestWriteNoisy(t *testing.T) {
	var rows []results.Row
	for i, k := range []float64{30, 33, 31} { // 10% apart: not more
		rows = append(rows, run("Intel", "s", "nginx", results.Copy, "ka-1k", i+1, k))
	}
	for i, k := range []float64{2.7, 4.7, 4.6} {
		rows = append(rows, run("Intel", "s", "no proxy", results.Baseline, "ka-50k-2000", i+1, k))
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

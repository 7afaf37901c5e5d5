package report

import (
	"fmt"
	"io"
	"testing"
)

// benchRows makes n runs over two machines, six modes, ten proxies and
// three repetitions, with loads enough to reach n.
func benchRows(n int) []Row {
	modes := []string{"http", "connect", "socks", "relay", "tls-term", "mix-http"}
	machines := []string{"ARM (M4)", "Intel (Skylake)"}
	rows := make([]Row, 0, n)
	for i := 0; len(rows) < n; i++ {
		load := fmt.Sprintf("ka-%dk", i)
		if i%2 == 1 {
			load = fmt.Sprintf("stream%d", i)
		}
		for _, mode := range modes {
			for _, m := range machines {
				for p := 0; p < 10; p++ {
					group := "copy"
					if p >= 7 {
						group = "splice"
					}
					for rep := 1; rep <= 3 && len(rows) < n; rep++ {
						bound := "proxy"
						if (i+p+rep)%4 == 0 {
							bound = "client"
						}
						rows = append(rows, Row{Machine: m, Session: "2026-10-13", Proxy: fmt.Sprintf("proxy %d", p),
							Group: group, Mode: mode, Load: load, Rep: rep, Seconds: 10,
							Requests: int64(100000 + 1000*p + 37*rep + i), Bytes: int64(1e9 * (1 + p + rep)),
							CPUProxy: 9.5 + 0.1*float64(rep), PeakMemBytes: int64(2e7 + 1e6*p), Bound: bound, Status: "ok"})
					}
				}
			}
		}
	}
	return rows
}

// BenchmarkRender renders 100,000 runs in every format; the goal is well
// under a second an iteration.
func BenchmarkRender(b *testing.B) {
	rows := benchRows(100000)
	b.ResetTimer()
	for b.Loop() {
		for _, f := range []string{FormatMarkdown, FormatTSV, FormatJSON} {
			if err := Render(io.Discard, rows, Options{Format: f}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkRenderFormat(b *testing.B) {
	rows := benchRows(100000)
	for _, f := range []string{FormatMarkdown, FormatTSV, FormatJSON} {
		b.Run(f, func(b *testing.B) {
			for b.Loop() {
				if err := Render(io.Discard, rows, Options{Format: f}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

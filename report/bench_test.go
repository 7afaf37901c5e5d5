package report

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"bench/results"
)

// benchRows makes n runs over two machines, six modes, ten proxies and
// three repetitions, with loads enough to reach n.
func benchRows(n int) []results.Row {
	modes := []results.Mode{results.HTTP, results.Connect, results.Socks, results.Relay, results.TLSTerm, results.MixHTTP}
	machines := []string{"ARM (M4)", "Intel (Skylake)"}
	rows := make([]results.Row, 0, n)
	for i := 0; len(rows) < n; i++ {
		load := fmt.Sprintf("ka-%dk", i)
		if i%2 == 1 {
			load = fmt.Sprintf("stream%d", i)
		}
		for _, mode := range modes {
			for _, m := range machines {
				for p := 0; p < 10; p++ {
					group := results.Copy
					if p >= 7 {
						group = results.Splice
					}
					for rep := 1; rep <= 3 && len(rows) < n; rep++ {
						bound := results.BoundProxy
						if (i+p+rep)%4 == 0 {
							bound = results.BoundClient
						}
						rows = append(rows, results.Row{Machine: m, Session: "2026-10-13", Proxy: fmt.Sprintf("proxy %d", p),
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

// BenchmarkReport is `bench report` of one 100,000-run file (21 MB):
// reading it and rendering the markdown tables. The goal is under half a
// second an iteration.
func BenchmarkReport(b *testing.B) {
	rows := benchRows(100000)
	for i := range rows {
		rows[i].Started = time.Date(2026, 10, 13, 18, 0, 0, 0, time.UTC)
		rows[i].Note = "errors 12 of 100000 exchanges"
	}
	path := filepath.Join(b.TempDir(), "runs.csv")
	if err := os.WriteFile(path, encodeCSV(b, rows), 0o644); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		rows, err := results.ReadFiles([]string{path})
		if err != nil {
			b.Fatal(err)
		}
		if err := Render(io.Discard, rows, Options{Format: FormatMarkdown}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRead is the reading alone, of the same runs from a file.
func BenchmarkRead(b *testing.B) {
	data := encodeCSV(b, benchRows(100000))
	path := filepath.Join(b.TempDir(), "runs.csv")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := results.ReadFiles([]string{path}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderHTML renders the page of 100,000 runs: the tables, their
// bar charts and the latency tables (the runs have no data of their own
// beyond their rows). The goal is under 2 s an iteration.
func BenchmarkRenderHTML(b *testing.B) {
	rows := benchRows(100000)
	for i := range rows {
		rows[i].P50Ms, rows[i].P99Ms, rows[i].HasLatency = 1.2, 9.8, !results.Stream(rows[i].Load)
	}
	b.ResetTimer()
	for b.Loop() {
		if err := Render(io.Discard, rows, Options{Format: FormatHTML}); err != nil {
			b.Fatal(err)
		}
	}
}

package report

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"bench/report/internal/reporttest"
	"bench/results"
)

// BenchmarkRender renders 100,000 runs in every format; the goal is well
// under a second an iteration.
func BenchmarkRender(b *testing.B) {
	rows := reporttest.BenchRows(100000)
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
	rows := reporttest.BenchRows(100000)
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
	rows := reporttest.BenchRows(100000)
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
	data := encodeCSV(b, reporttest.BenchRows(100000))
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

// Package report builds the session's tables from the runs of session
// files (read by package results): the medians of the ok runs, the bold,
// * and ‡ marks of the reference results' rules, the latency tables, the
// sustainable rates, the headlines and the detail (Build, a Document),
// and writes them behind one interface (Writer): markdown, the reference
// results' tab-separated text, or JSON. The packages below it write what
// the other commands and the page need of the same tables: page (the
// HTML page and its charts), profiles (the profiles a page links),
// compare and trend; chart and htmldoc are the kit they draw with.
//
// A session calls, once it has written its file:
//
//	rows, err := results.ReadFiles([]string{path})
//	err = report.Render(os.Stdout, rows, report.Options{Format: report.FormatMarkdown})
package report

// Package report reads session CSV files and renders the tables of the
// reference results from them: medians of the ok runs, the bold, * and ‡
// marks of the seeds' rules, as markdown, the seeds' tab-separated text or
// JSON.
//
// A session calls, once it has written its file:
//
//	rows, err := report.ReadFiles([]string{path})
//	err = report.Render(os.Stdout, rows, report.Options{Format: report.FormatMarkdown})
package report

// Package report renders the tables of the reference results from the
// runs of session files (read by package results): medians of the ok runs, the bold, * and ‡
// marks of the reference results' rules, as markdown, the reference results' tab-separated text or
// JSON. Compare and compare.Write set old sessions' runs against new
// ones, cell by cell.
//
// A session calls, once it has written its file:
//
//	rows, err := results.ReadFiles([]string{path})
//	err = report.Render(os.Stdout, rows, report.Options{Format: report.FormatMarkdown})
package report

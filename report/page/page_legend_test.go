package page

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"bench/report"
	"bench/report/internal/reporttest"
	"bench/results"
)

// TestMarksExplained: every mark a table's cells carry (bold, *, †, ‡,
// the failure mark, the spread and n, –) is explained in the legend under
// that table, in the markdown with and without the detail and on the
// page: of the reference session, of an unseen one (pageSession, with
// failed exchanges in a cell), and of the reference results' tables.
func TestMarksExplained(t *testing.T) {
	type session struct {
		name string
		rows []results.Row
	}
	ref, err := filepath.Glob(filepath.Join("..", "..", "data", "*.csv"))
	if err != nil || len(ref) == 0 {
		t.Fatalf("no session file in ../data: %v", err)
	}
	refRows, err := results.ReadFiles(ref)
	if err != nil {
		t.Fatal(err)
	}
	unseen, _ := reporttest.PageSession(t)
	sessions := []session{{"reference session", refRows}, {"unseen session", reporttest.Noted(unseen)}}
	refs, err := filepath.Glob(filepath.Join("..", "testdata", "reference", "*.txt"))
	if err != nil || len(refs) == 0 {
		t.Fatalf("no reference tables in ../testdata/reference: %v", err)
	}
	for _, ref := range refs {
		name := strings.TrimSuffix(filepath.Base(ref), ".txt")
		rows, err := results.ReadFiles([]string{filepath.Join("..", "testdata", "csv", name+".csv")})
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, session{"reference results " + name, rows})
	}
	for _, s := range sessions {
		for _, opt := range []report.Options{{}, {Detail: true}, {Format: report.FormatHTML}} {
			var b bytes.Buffer
			if err := render(&b, s.rows, opt); err != nil {
				t.Fatal(err)
			}
			var missing []string
			if opt.Format == report.FormatHTML {
				missing = reporttest.UnexplainedPage(b.String())
			} else {
				missing = reporttest.UnexplainedMarkdown(b.String())
			}
			if len(missing) > 0 {
				t.Errorf("%s, %+v: marks without their legend: %q", s.name, opt, missing)
			}
		}
	}
}

package compare

import (
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/golden"
	"bench/report"
	"bench/results"
)

// profiledSides are nginx's ka-1k runs, 3 a side and slower on the new
// (a real change by their ranges), whose median runs kept the fixture
// profiles: hot.folded on the old side, hot-after.folded on the new. The
// other runs kept none.
func profiledSides(t *testing.T) (old, new []results.Row, oldData, newData map[results.RunID]*results.RunData) {
	t.Helper()
	old, new = reps("ARM", "a", 30, 32, 31), reps("ARM", "b", 20, 22, 21)
	data := func(rows []results.Row, median int, fixture string) map[results.RunID]*results.RunData {
		r := rows[median]
		return map[results.RunID]*results.RunData{r.ID(): {RunID: r.ID(), Files: filepath.Join("..", "testdata", "profile", fixture),
			Profile: &results.ProfileNote{CallGraph: results.CallGraphFP, Samples: 100}}}
	}
	return old, new, data(old, 2, "hot"), data(new, 2, "hot-after")
}

// TestProfileShifts: under a real change, the functions whose self share
// moved most, the largest first, in md (golden), json and html.
func TestProfileShifts(t *testing.T) {
	old, new, od, nd := profiledSides(t)
	cmp, err := Compare(old, new, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := AddProfileShifts(cmp, old, new, od, nd); err != nil {
		t.Fatal(err)
	}
	if len(cmp.Profiles) != 1 {
		t.Fatalf("AddProfileShifts gave %d cells; want nginx's ka-1k", len(cmp.Profiles))
	}
	ps := cmp.Profiles[0]
	want := []struct {
		fn            string
		before, after float64
	}{
		{"main.benchHotLoop", 0.80, 0.40},
		{"copy_user_enhanced_fast_string", 0.07, 0.30},
		{"tcp_recvmsg", 0.06, 0.20},
		{"do_splice", 0, 0.10},
	}
	if len(ps.Functions) < len(want) || ps.OldSamples != 100 || ps.NewSamples != 100 {
		t.Fatalf("shifts %+v of %d and %d samples; want %d or more of 100 and 100", ps.Functions, ps.OldSamples, ps.NewSamples, len(want))
	}
	for i, w := range want {
		got := ps.Functions[i]
		if got.Function != w.fn || math.Abs(got.Before-w.before) > 1e-9 || math.Abs(got.After-w.after) > 1e-9 || math.Abs(got.Change-(w.after-w.before)) > 1e-9 {
			t.Errorf("shift %d = %+v; want %s %g -> %g", i, got, w.fn, w.before, w.after)
		}
	}
	var md bytes.Buffer
	if err := Write(&md, cmp, report.FormatMarkdown); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "golden", "compare-profiles.md"), md.Bytes())

	var js bytes.Buffer
	if err := Write(&js, cmp, report.FormatJSON); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Profiles []ProfileShifts `json:"profiles"`
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil || len(got.Profiles) != 1 || got.Profiles[0].Functions[0].Function != want[0].fn {
		t.Errorf("json: %v, profiles %+v; want the one cell's shifts", err, got.Profiles)
	}
	var page bytes.Buffer
	if err := Write(&page, cmp, report.FormatHTML); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "<tr><th>main.benchHotLoop</th><td>80%</td><td>40%</td><td>-40.0 pt</td></tr>") {
		t.Errorf("the comparison's page has no row of the hot function's shift")
	}
}

// TestProfileShiftsNone: no shifts where the change is not real, or a
// side kept no profile.
func TestProfileShiftsNone(t *testing.T) {
	old, new, od, nd := profiledSides(t)
	for _, c := range []struct {
		name     string
		old, new []results.Row
		od, nd   map[results.RunID]*results.RunData
	}{
		// the same runs on both sides: no change
		{"within noise", old, reps("ARM", "b", 30, 32, 31), od, nil},
		{"no new profile", old, new, od, nil},
		{"no old profile", old, new, nil, nd},
	} {
		cmp, err := Compare(c.old, c.new, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := AddProfileShifts(cmp, c.old, c.new, c.od, c.nd); err != nil || len(cmp.Profiles) != 0 {
			t.Errorf("AddProfileShifts(%s) = %v, %d cells; want none", c.name, err, len(cmp.Profiles))
		}
		var md bytes.Buffer
		if err := Write(&md, cmp, report.FormatMarkdown); err != nil || strings.Contains(md.String(), shiftsTitle) {
			t.Errorf("WriteComparison(%s): %v; want no %q", c.name, err, shiftsTitle)
		}
	}
}

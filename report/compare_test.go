package report

import (
	"bench/report/results"
	"errors"
	"strings"
	"testing"
)

func TestUDecides(t *testing.T) {
	for _, c := range []struct {
		n1, n2 int
		want   bool
	}{
		{1, 1, false}, {2, 2, false}, {3, 3, false}, {2, 5, false},
		{4, 4, true}, {3, 5, true}, {5, 3, true}, {2, 9, true}, {10, 10, true},
	} {
		if got := uDecides(c.n1, c.n2); got != c.want {
			t.Errorf("uDecides(%d, %d) = %v, want %v", c.n1, c.n2, got, c.want)
		}
	}
}

// reps makes ok runs of nginx under ka-1k, one per figure (k req/s).
func reps(machine, session string, kreq ...float64) []results.Row {
	var out []results.Row
	for i, k := range kreq {
		out = append(out, run(machine, session, "nginx", results.Copy, "ka-1k", i+1, k))
	}
	return out
}

func TestCompareDecides(t *testing.T) {
	gate := 10.0
	for _, c := range []struct {
		name      string
		old, new  []float64
		real      bool
		test      string
		regressed bool
	}{
		{"regression", []float64{37, 37.5, 38, 37.2, 37.8}, []float64{32, 32.5, 33, 32.2, 32.8}, true, TestU, true},
		{"small regression", []float64{37, 37.5, 38, 37.2, 37.8}, []float64{35, 35.5, 36, 35.2, 35.8}, true, TestU, false},
		{"improvement", []float64{32, 32.5, 33, 32.2, 32.8}, []float64{37, 37.5, 38, 37.2, 37.8}, true, TestU, false},
		{"tie", []float64{37, 37, 37, 37}, []float64{37, 37, 37, 37}, false, TestU, false},
		{"noise", []float64{15.1, 15.9, 15.4, 16.2, 15.0}, []float64{15.8, 15.2, 16.4, 15.5, 16.0}, false, TestU, false},
		{"ranges apart", []float64{30, 31, 32}, []float64{20, 21, 22}, true, TestRange, true},
		{"ranges overlap", []float64{30, 31, 32}, []float64{20, 21, 30}, false, TestRange, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmp, err := Compare(reps("ARM", "a", c.old...), reps("ARM", "b", c.new...), CompareOptions{FailOver: &gate})
			if err != nil {
				t.Fatal(err)
			}
			ch := cmp.Cells[0]
			if ch.Real != c.real || ch.Test != c.test || ch.Regressed != c.regressed {
				t.Errorf("real %v by %q, regressed %v; want %v by %q, %v", ch.Real, ch.Test, ch.Regressed, c.real, c.test, c.regressed)
			}
		})
	}
}

func TestCompareMachines(t *testing.T) {
	old, new := reps("ARM (M4)", "a", 1, 2, 3), reps("Intel", "b", 1, 2, 3)
	_, err := Compare(old, new, CompareOptions{})
	if !errors.Is(err, ErrAcrossMachines) || !strings.Contains(err.Error(), "old runs are from ARM (M4), new from Intel") {
		t.Errorf("different machines: got %v", err)
	}
	cmp, err := Compare(old, new, CompareOptions{AcrossMachines: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(cmp.Cells) != 1 || cmp.Cells[0].Machine != "ARM (M4) → Intel" {
		t.Errorf("across machines: got %+v, want one cell of ARM (M4) → Intel", cmp.Cells)
	}
	_, err = Compare(append(old, reps("Intel", "a", 1)...), new, CompareOptions{AcrossMachines: true})
	if err == nil || !strings.Contains(err.Error(), "each side must be of one machine") {
		t.Errorf("across machines, two on one side: got %v", err)
	}
}

func TestCompareOneSide(t *testing.T) {
	old := reps("ARM", "a", 1, 2, 3)
	new := []results.Row{run("ARM", "b", "squid", results.Copy, "ka-1k", 1, 5)}
	failed := run("ARM", "b", "nginx", results.Copy, "ka-1k", 1, 0)
	failed.Status = results.Failed
	new = append(new, failed)
	gate := 10.0
	cmp, err := Compare(old, new, CompareOptions{FailOver: &gate})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ch := range cmp.Cells {
		got = append(got, ch.Proxy+": "+ch.verdict())
	}
	want := "nginx: no ok run in new, regressed; squid: only in new"
	if strings.Join(got, "; ") != want {
		t.Errorf("got %q, want %q", strings.Join(got, "; "), want)
	}
}

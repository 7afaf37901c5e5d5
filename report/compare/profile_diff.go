package compare

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strings"

	"bench/internal/text"
	"bench/profile"
	"bench/report"
	"bench/report/htmldoc"
	"bench/report/profiles"
	"bench/results"
)

// Where a real change's time went: for each cell of a comparison whose
// change is real and whose median runs on both sides kept a CPU profile,
// the functions whose share of the proxy's samples moved most, as self
// time (the samples ending in the function), before and after.

// shiftsShown is how many functions a cell's shifts list.
const shiftsShown = 10

// ProfileShifts are the functions of a cell whose share of the proxy's
// CPU moved most between its old median run and its new one.
type ProfileShifts struct {
	Machine  string  `json:"machine"`
	Scenario string  `json:"scenario"` // its name: "http-ka-1k"
	Proxy    string  `json:"proxy"`
	Change   float64 `json:"change_pct"` // the cell's change, real
	// Old and New are the median runs whose profiles are compared, and
	// their samples.
	Old        results.RunID `json:"old_run"`
	New        results.RunID `json:"new_run"`
	OldSamples int64         `json:"old_samples"`
	NewSamples int64         `json:"new_samples"`
	Functions  []Shift       `json:"functions"`
}

// Shift is a function's self share of the proxy's samples, 0 to 1, in
// the old run and the new one; Change is After less Before.
type Shift struct {
	Function string  `json:"function"`
	Before   float64 `json:"before"`
	After    float64 `json:"after"`
	Change   float64 `json:"change"`
}

// AddProfileShifts sets c.Profiles: for each real change of c, the shifts
// of its cell's median runs (MedianRun) of old and new by their figure,
// where both kept a profile in oldData and newData. A profile the run's
// data names that cannot be read is an error naming its file.
func AddProfileShifts(c *Comparison, old, new []results.Row, oldData, newData map[results.RunID]*results.RunData) error {
	for _, ch := range c.Cells {
		if !ch.Real || ch.Change == nil || ch.Load == results.LoadSweep {
			continue
		}
		o, n := medianOf(ch, old), medianOf(ch, new)
		if o == nil || n == nil || !oldData[*o].Profiled() || !newData[*n].Profiled() {
			continue
		}
		before, err := profiles.ReadStacks(oldData[*o])
		if err != nil {
			return err
		}
		after, err := profiles.ReadStacks(newData[*n])
		if err != nil {
			return err
		}
		ps := ProfileShifts{Machine: ch.Machine, Scenario: results.ScenarioName(ch.Mode, ch.Load), Proxy: ch.Proxy, Change: *ch.Change, Old: *o, New: *n}
		ps.Functions, ps.OldSamples, ps.NewSamples = shifts(before, after, shiftsShown)
		c.Profiles = append(c.Profiles, ps)
	}
	return nil
}

// medianOf is the median run of ch's cell among rows, its ok runs on
// ch's machine (either, across machines).
func medianOf(ch Change, rows []results.Row) *results.RunID {
	var runs []*results.Row
	for i := range rows {
		r := &rows[i]
		if r.Status != results.OK || r.Proxy != ch.Proxy || r.Mode != ch.Mode || r.Load != ch.Load {
			continue
		}
		if r.Machine == ch.Machine || strings.Contains(ch.Machine, " → ") {
			runs = append(runs, r)
		}
	}
	return report.MedianRun(runs)
}

// shifts are the n functions whose self share moved most from before to
// after, the largest move first (ties by name), and the samples of each.
func shifts(before, after []profile.Stack, n int) (out []Shift, nBefore, nAfter int64) {
	b, nBefore := profile.TopFolded(before, math.MaxInt)
	a, nAfter := profile.TopFolded(after, math.MaxInt)
	by := map[string]*Shift{}
	get := func(name string) *Shift {
		if s, ok := by[name]; ok {
			return s
		}
		s := &Shift{Function: name}
		by[name] = s
		return s
	}
	for _, f := range b {
		get(f.Name).Before = profile.Share(f.Self, nBefore)
	}
	for _, f := range a {
		get(f.Name).After = profile.Share(f.Self, nAfter)
	}
	for _, s := range by {
		s.Change = s.After - s.Before
		if s.Change != 0 {
			out = append(out, *s)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if x, y := math.Abs(out[i].Change), math.Abs(out[j].Change); x != y {
			return x > y
		}
		return out[i].Function < out[j].Function
	})
	if len(out) > n {
		out = out[:n]
	}
	return out, nBefore, nAfter
}

// shiftsHeader is the header of a cell's shifts.
var shiftsHeader = []string{"function", "before", "after", "change"}

// rows are the shifts as text: the shares in percent, the change in
// percentage points.
func (ps *ProfileShifts) rows() [][]string {
	out := make([][]string, len(ps.Functions))
	for i, s := range ps.Functions {
		out[i] = []string{s.Function, text.SharePercent(s.Before), text.SharePercent(s.After), fmt.Sprintf("%+.1f pt", 100*s.Change)}
	}
	return out
}

// heading names the cell and its change.
func (ps *ProfileShifts) heading() string {
	return fmt.Sprintf("%s, %s on %s: %+.1f%%", ps.Proxy, ps.Scenario, ps.Machine, ps.Change)
}

// shiftsTitle and shiftsCaption head and explain the comparison's part
// of the profiles.
const (
	shiftsTitle   = "Where the CPU went"
	shiftsCaption = "For each real change whose median runs kept a CPU profile on both sides: the functions whose share of the proxy's samples, as self time (samples ending in the function), moved most from the old median run to the new; change in percentage points."
)

// writeShiftsText writes the shifts of c in the text format f, after
// the comparison's tables; nothing without any.
func writeShiftsText(buf *bytes.Buffer, c *Comparison, f text.Format) error {
	if len(c.Profiles) == 0 {
		return nil
	}
	buf.WriteString("\n")
	f.Heading(buf, 2, shiftsTitle)
	buf.WriteString(f.Text(shiftsCaption) + "\n\n")
	for i := range c.Profiles {
		ps := &c.Profiles[i]
		f.Heading(buf, 3, ps.heading())
		if err := f.Grid(buf, shiftsHeader, ps.rows()); err != nil {
			return fmt.Errorf("render the profiles of %s: %w", ps.heading(), err)
		}
		buf.WriteString("\n")
	}
	return nil
}

// writeShiftsHTML writes the shifts of c on the comparison's page.
func writeShiftsHTML(b *bytes.Buffer, c *Comparison) {
	if len(c.Profiles) == 0 {
		return
	}
	fmt.Fprintf(b, "<h2>%s</h2>\n<p class=\"caption\">%s</p>\n", htmldoc.Esc(shiftsTitle), htmldoc.Esc(shiftsCaption))
	for i := range c.Profiles {
		ps := &c.Profiles[i]
		fmt.Fprintf(b, "<h3>%s</h3>\n<table class=\"shifts\">\n<tr>", htmldoc.Esc(ps.heading()))
		for _, h := range shiftsHeader {
			fmt.Fprintf(b, "<th>%s</th>", htmldoc.Esc(h))
		}
		b.WriteString("</tr>\n")
		for _, r := range ps.rows() {
			fmt.Fprintf(b, "<tr><th>%s</th>", htmldoc.Esc(r[0]))
			for _, v := range r[1:] {
				fmt.Fprintf(b, "<td>%s</td>", htmldoc.Esc(v))
			}
			b.WriteString("</tr>\n")
		}
		b.WriteString("</table>\n")
	}
}

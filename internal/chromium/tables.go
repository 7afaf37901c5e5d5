package chromium

import (
	"encoding/json"
	"fmt"
	"testing"
)

// Tables is how a page's tables fit its window (tablesProbe).
type Tables struct {
	Window float64 `json:"window"` // the window's width
	Tables []Table `json:"tables"`
}

// Table is a table of the page as drawn, before and after it is
// scrolled to its right end.
type Table struct {
	Heading string  `json:"heading"` // the heading it stands under
	Width   float64 `json:"width"`   // its content's, scrolled (scrollWidth)
	Shown   float64 `json:"shown"`   // its box's, as seen (clientWidth)
	// Figures is how many of the columns after the label that hold a
	// figure (a digit in some row) show whole in every row, unscrolled,
	// before the first that does not; Columns how many columns there are
	// after the label.
	Figures int `json:"figures"`
	Columns int `json:"columns"`
	// Moved is how far the first row's label moved, in CSS pixels, when
	// the table was scrolled to its right end: 0 where it stays.
	Moved float64 `json:"moved"`
}

// tablesProbe measures what Tables holds.
const tablesProbe = `(() => {
	const out = {window: window.innerWidth, tables: []};
	for (const tb of document.querySelectorAll("table")) {
		let h = tb.previousElementSibling;
		while (h && !/^H[1-6]$/.test(h.tagName)) h = h.previousElementSibling;
		const rows = [...tb.rows];
		const right = tb.getBoundingClientRect().left + tb.clientLeft + tb.clientWidth;
		const columns = Math.max(0, ...rows.map(r => r.cells.length - 1));
		let figures = 0;
		for (let c = 1; c < columns + 1; c++) {
			const cells = rows.map(r => r.cells[c]).filter(x => x);
			if (!cells.some(x => /[0-9]/.test(x.textContent))) continue;
			if (!cells.every(x => x.getBoundingClientRect().right <= right + 0.5)) break;
			figures++;
		}
		const label = rows.length > 1 ? rows[1].cells[0] : rows[0].cells[0];
		const before = label.getBoundingClientRect().left;
		tb.scrollLeft = tb.scrollWidth;
		const moved = before - label.getBoundingClientRect().left;
		tb.scrollLeft = 0;
		out.tables.push({heading: h ? h.textContent : "", width: tb.scrollWidth, shown: tb.clientWidth,
			figures, columns, moved});
	}
	return out;
})()`

// CheckTables opens page in Chromium width pixels wide, as CheckPage
// does, and checks how its tables fit: at 1000 px and more, no table
// cut (its content no wider than its box); at any width, every table
// with figures shows those of at least one column whole beside its
// labels, unscrolled, and keeps its labels in place when scrolled to its
// right end. The screenshot is name.png. It returns what it measured.
func CheckTables(t *testing.T, page []byte, name string, width int) *Tables {
	t.Helper()
	p := openChecked(t, page, name, tablesProbe, width)
	var ts Tables
	if err := json.Unmarshal(p.Value, &ts); err != nil {
		t.Fatalf("the page's tables %.200s: %v", p.Value, err)
	}
	if len(ts.Tables) == 0 {
		t.Errorf("at %d px: the page has no table", width)
	}
	for _, e := range ts.Problems() {
		t.Errorf("at %d px: %s", width, e)
	}
	widest, fewest := 0.0, -1
	for _, tb := range ts.Tables {
		widest = max(widest, tb.Width)
		if tb.Columns > 0 && (fewest < 0 || tb.Figures < fewest) {
			fewest = tb.Figures
		}
	}
	t.Logf("at %d px: %d tables, the widest %.0f px; at least %d columns of figures whole beside the labels", width, len(ts.Tables), widest, fewest)
	return &ts
}

// desktop is the least window's width, in CSS pixels, where no table of
// a page may be cut: the pages' tables are made to fit 1400 px.
const desktop = 1000

// Problems lists what is wrong with the tables (CheckTables' rules).
func (ts *Tables) Problems() []string {
	var out []string
	for i, tb := range ts.Tables {
		where := fmt.Sprintf("table %d (under %q)", i+1, clip(tb.Heading))
		if ts.Window >= desktop && tb.Width > tb.Shown+slack {
			out = append(out, fmt.Sprintf("%s is cut: %.0f px wide in a box of %.0f", where, tb.Width, tb.Shown))
		}
		if tb.Columns > 0 && tb.Figures == 0 {
			out = append(out, fmt.Sprintf("%s shows no column of figures whole beside its labels (%.0f px wide in a box of %.0f)", where, tb.Width, tb.Shown))
		}
		if tb.Moved > slack || tb.Moved < -slack {
			out = append(out, fmt.Sprintf("%s: its labels moved %.0f px as it scrolled; want them to stay", where, tb.Moved))
		}
	}
	return out
}

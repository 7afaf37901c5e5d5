package chromium

import (
	"encoding/json"
	"strconv"
	"testing"
)

// ScreenHeight is the height of the window a page opens in, in CSS
// pixels: a desktop's first screen, 1400 x 900.
const ScreenHeight = 900

// PageHeight is the most a session's page may be tall as a desktop
// draws it (1400 px wide, its details closed), in CSS pixels: about 14
// screens. The reference session's page is 12,203 px with its closed
// section of profiles, and its height moves with what the session
// measured: 11,840 px for the session of 2026-12-02 and 12,060 for that
// of 2026-12-05 before their profiles, by their marks' legends and notes.
const PageHeight = 13000

// Outline is how tall a page is drawn and where one of its elements
// ends, in CSS pixels, with its <details> as the page opens them.
type Outline struct {
	Height float64 `json:"height"` // the page's, scrolled
	// Bottom is how far from the page's top the element of the id given
	// ends; -1 where the page has none.
	Bottom float64 `json:"bottom"`
	// Open are the page's <details> open as it loads.
	Open int `json:"open"`
}

// outlineProbe measures what Outline holds, of the element of the id
// it is called with.
const outlineProbe = `((id) => {
	const e = document.getElementById(id);
	return {height: document.documentElement.scrollHeight,
		bottom: e ? e.getBoundingClientRect().bottom + window.scrollY : -1,
		open: document.querySelectorAll("details[open]").length};
})`

// MeasureOutline opens page in Chromium width pixels wide and
// ScreenHeight high, as CheckPage does, and returns its Outline with the bottom of the
// element whose id is id. The screenshot is name.png.
func MeasureOutline(t *testing.T, page []byte, name string, width int, id string) *Outline {
	t.Helper()
	expr := outlineProbe + "(" + strconv.Quote(id) + ")"
	p := openChecked(t, page, name, expr, width)
	var o Outline
	if err := json.Unmarshal(p.Value, &o); err != nil {
		t.Fatalf("the page's outline %.200s: %v", p.Value, err)
	}
	return &o
}

// CheckOpening opens page 1400 pixels wide, as a desktop's window, and
// checks that the element of id (a summary) ends within its first
// screen, that no <details> is open as it loads and that the page is
// less than maxHeight pixels tall; it logs the page's height at 1400 and
// 420 pixels, and returns the two outlines.
func CheckOpening(t *testing.T, page []byte, name, id string, maxHeight float64) (desktop, phone *Outline) {
	t.Helper()
	desktop = MeasureOutline(t, page, name+"-1400", 1400, id)
	phone = MeasureOutline(t, page, name+"-420", 420, id)
	t.Logf("%s: %.0f px tall at 1400 px, %.0f at 420; #%s ends at %.0f and %.0f", name, desktop.Height, phone.Height, id, desktop.Bottom, phone.Bottom)
	if desktop.Bottom <= 0 || desktop.Bottom > ScreenHeight {
		t.Errorf("%s: #%s ends at %.0f px at 1400 px; want it within the first screen (%d px)", name, id, desktop.Bottom, ScreenHeight)
	}
	if desktop.Open != 0 {
		t.Errorf("%s: %d <details> open as it loads; want none", name, desktop.Open)
	}
	if desktop.Height >= maxHeight {
		t.Errorf("%s: %.0f px tall at 1400 px; want less than %.0f", name, desktop.Height, maxHeight)
	}
	return desktop, phone
}

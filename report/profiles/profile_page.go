// Package profiles draws the CPU profiles a session's page links: each
// cell's median run's profile as a flame graph with its top functions,
// held in the page within a budget (InlineBudget) or on a page of its own
// beside the run's files; and it reads a run's stacks for compare's
// profile shifts.
package profiles

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"bench/inputerr"
	"bench/internal/text"
	"bench/profile"
	"bench/report"
	"bench/report/htmldoc"
	"bench/results"
)

// The page's profiles: each cell whose median run kept a CPU profile
// links it, drawn (writeFlame) at the page's end. The page holds them
// while their drawings take up to InlineBudget in all; a profile
// beyond that is linked to a page of its own beside the run's files
// (results.FlameSuffix), so that the page stays a file a browser opens at
// once, offline. Those pages are made with the page and handed to
// Options.ProfilePage, which writes them: only the profiles the page
// links have one.

// InlineBudget is how many bytes of drawn profiles the page holds:
// 4 MiB, 45 of the reference session's flame graphs (about 90 kB each),
// beside the charts' three megabytes; a page past ten megabytes of SVG
// is one a browser is slow to open and scroll. (A variable, for the
// tests of the pages of their own.)
var InlineBudget = 4 << 20

// pageProfile is a profile the page links: in it (anchor) or in a file
// beside it (file).
type pageProfile struct {
	anchor, File string
	title        string // the link's tip
	drawn        []byte // the section, where the page holds it
}

// Page are the profiles of a page's cells, by run, in the order
// the cells link them.
type Page struct {
	ByRun map[results.RunID]*pageProfile
	order []*pageProfile
	size  int // bytes held
	// budget is how many the page holds (InlineBudget)
	budget int
	// own are the pages of the profiles linked past the budget, by their
	// path from the page's, where there is a ProfilePage to write them
	own     []ownPage
	writeTo report.ProfilePageFunc
	// unread say which profiles could not be read, and why: left out
	unread []string
}

// ownPage is a profile's page of its own: its path from the page's folder
// and its bytes.
type ownPage struct {
	rel  string
	page []byte
}

// ForPage reads and draws the profiles of the cells' median runs
// among data, holding budget bytes of them; those past it get a page of
// their own for writeTo, or without it are linked where their page is
// already beside the run's files. A profile the run's data names that
// cannot be read is left out, the page saying why (unread).
func ForPage(tables []report.Table, data map[results.RunID]*results.RunData, budget int, writeTo report.ProfilePageFunc) (*Page, error) {
	p := &Page{ByRun: map[results.RunID]*pageProfile{}, budget: budget, writeTo: writeTo}
	for _, t := range tables {
		for _, r := range t.Rows {
			for _, c := range r.Cells {
				if c.MedianRun == nil || p.ByRun[*c.MedianRun] != nil || !data[*c.MedianRun].Profiled() {
					continue
				}
				pp, err := p.draw(data[*c.MedianRun], t, len(c.IDs))
				if err != nil {
					p.unread = append(p.unread, unreadNote(data[*c.MedianRun], err))
					continue
				}
				p.ByRun[*c.MedianRun] = pp
			}
		}
	}
	return p, nil
}

// draw draws the profile of d, the median of n runs of a cell of t,
// within the budget, or links its page beside the run's files.
func (p *Page) draw(d *results.RunData, t report.Table, n int) (*pageProfile, error) {
	name := filepath.Base(d.Files)
	label := fmt.Sprintf("CPU profile of %s in %s, run %d, the median of %d (%s, session %s)",
		d.Proxy, results.ScenarioName(d.Mode, d.Load), d.Rep, n, t.Machine, d.Session)
	pp := &pageProfile{title: "the CPU profile of the median run: its flame graph and top ten functions"}
	stacks, err := ReadStacks(d)
	if err != nil {
		return nil, err
	}
	if _, ok := foldedSamples(stacks); !ok {
		return nil, &inputerr.Error{File: d.Files + results.FoldedSuffix, Err: fmt.Errorf("more than %d samples", int64(flameMostSamples))}
	}
	caption := profileCaption(d, stacks)
	var s bytes.Buffer
	anchor := "profile-" + results.Slug(d.Session) + "-" + name
	fmt.Fprintf(&s, "<section class=\"profile\" id=\"%s\">\n<h2>%s</h2>\n", htmldoc.Esc(anchor), htmldoc.Esc(label))
	WriteFlame(&s, stacks, label, caption)
	s.WriteString("</section>\n")
	if p.size+s.Len() <= p.budget {
		p.size += s.Len()
		pp.anchor, pp.drawn = anchor, s.Bytes()
		p.order = append(p.order, pp)
		return pp, nil
	}
	// beyond the budget: its own page, beside the run's files, by its
	// path from the page's (the page is beside the runs directory)
	pp.File = filepath.ToSlash(filepath.Join(filepath.Base(filepath.Dir(d.Files)), name+results.FlameSuffix))
	pp.title += ", in a page of its own"
	if p.writeTo == nil {
		if _, err := os.Stat(d.Files + results.FlameSuffix); errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return pp, nil
	}
	var own bytes.Buffer
	writeFlamePage(&own, stacks, label, caption, runLinks(d, t))
	p.own = append(p.own, ownPage{pp.File, own.Bytes()})
	return pp, nil
}

// link is a link of a profile's own page: the file's path from the
// page's folder, the run's, a fragment in it (empty for none), and the
// link's text.
type link struct{ rel, fragment, text string }

// runLinks are the links of the own page of d's profile, a run of a cell
// of t: the session's page at t's tables (beside the runs' folder), then
// the run's files beside it (its config, the tools' output, its data, the
// profile's files), by their names less the run's.
func runLinks(d *results.RunData, t report.Table) []link {
	dir := filepath.Dir(d.Files)
	session := filepath.Base(results.PagePath(strings.TrimSuffix(dir, ".runs") + ".csv"))
	out := []link{{"../" + session, report.Anchor(t.Session, t.Family, t.Machine), "the session's page: " + t.Family + " on " + t.Machine}}
	files, _ := filepath.Glob(globEscape(d.Files) + ".*")
	name := filepath.Base(d.Files)
	for _, f := range files {
		base := filepath.Base(f)
		if strings.HasSuffix(base, results.FlameSuffix) {
			continue // this page
		}
		out = append(out, link{base, "", strings.TrimPrefix(base, name+".")})
	}
	return out
}

// globEscape escapes what filepath.Match reads as a pattern in a path.
func globEscape(path string) string {
	return strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`).Replace(path)
}

// unreadNote says that d's profile could not be read, and why, without
// the folder it is in.
func unreadNote(d *results.RunData, err error) string {
	var ie *inputerr.Error
	if errors.As(err, &ie) {
		err = ie.Err
	}
	return fmt.Sprintf("the CPU profile of %s (%s): %s", filepath.Base(d.Files), d.Proxy, strings.ToValidUTF8(err.Error(), "?"))
}

// WriteOwn hands the pages of the profiles linked past the budget to
// the ProfilePage that asked for them.
func (p *Page) WriteOwn() error {
	if p == nil {
		return nil
	}
	for _, o := range p.own {
		if err := p.writeTo(o.rel, o.page); err != nil {
			return err
		}
	}
	return nil
}

// ReadStacks reads the folded stacks of a run's profile.
func ReadStacks(d *results.RunData) ([]profile.Stack, error) {
	path := d.Files + results.FoldedSuffix
	b, err := results.ReadInput(path)
	if err != nil {
		return nil, err
	}
	s, err := profile.ParseFolded(bytes.NewReader(b))
	if err != nil {
		return nil, &inputerr.Error{File: path, Err: err}
	}
	return s, nil
}

// profileCaption is the caption of a run's flame graph: what it shows and
// how perf unwound its stacks.
func profileCaption(d *results.RunData, stacks []profile.Stack) string {
	s := FlameCaption(stacks)
	switch d.Profile.CallGraph {
	case results.CallGraphFP:
		s += " Stacks unwound by frame pointers: a function of a binary built without them shows under its caller's caller."
	case results.CallGraphDWARF:
		s += " Stacks unwound from DWARF debug information (perf --call-graph dwarf)."
	}
	if d.Profile.Others > 0 {
		s += fmt.Sprintf(" %s of other processes on the proxy's CPUs are left out.", text.Plural(d.Profile.Others, "sample"))
	}
	return s + MachineCaption(stacks)
}

// Link is what the page writes after a cell's text: a link to its median
// run's profile, where it has one.
func (p *Page) Link(c report.Cell) string {
	if p == nil || c.MedianRun == nil {
		return ""
	}
	pp := p.ByRun[*c.MedianRun]
	switch {
	case pp == nil:
		return ""
	case pp.File != "":
		return fmt.Sprintf(" <a class=\"profile\" href=\"%s\" title=\"%s\">profile</a>", htmldoc.RelHref(pp.File), htmldoc.Esc(pp.title))
	}
	return fmt.Sprintf(" <a class=\"profile\" href=\"#%s\" title=\"%s\">profile</a>", htmldoc.Esc(pp.anchor), htmldoc.Esc(pp.title))
}

// Write writes the profiles the page holds, under their heading, in a
// <details> closed as the page opens, so that the drawings keep the page
// short: a cell's link opens it, as the browser opens the <details> that
// holds the target of a link it follows.
func (p *Page) Write(b *bytes.Buffer) {
	if p == nil {
		return
	}
	if len(p.unread) > 0 {
		fmt.Fprintf(b, "<p class=\"absent\">%s left out, which could not be read:</p>\n<ul>\n", text.Plural(len(p.unread), "CPU profile"))
		for _, u := range p.unread {
			fmt.Fprintf(b, "<li>%s</li>\n", htmldoc.Esc(u))
		}
		b.WriteString("</ul>\n")
	}
	if len(p.order) == 0 {
		return
	}
	fmt.Fprintf(b, "<h1>CPU profiles</h1>\n<details class=\"profiles\">\n<summary>%s, the median run of a cell each, which the cell's link opens: perf sampling the proxy's CPUs over the measured window, the proxy's processes kept</summary>\n",
		text.Plural(len(p.order), "CPU profile"))
	for _, pp := range p.order {
		b.Write(pp.drawn)
	}
	b.WriteString("</details>\n")
	b.WriteString(FlameScript)
}

// Style is what the page's style needs for its profiles: none without.
func (p *Page) Style() string {
	if p == nil || len(p.order) == 0 {
		return ""
	}
	return "\n" + flameStyle
}

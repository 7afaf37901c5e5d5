package report

import (
	"bytes"
	"math"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"bench/internal/golden"
	"bench/report/internal/reporttest"
	"bench/results"
)

func TestRenderSessionsAndFailures(t *testing.T) {
	var rows []results.Row
	for rep := 1; rep <= 3; rep++ {
		rows = append(rows,
			reporttest.Run("ARM", "2026-10-11", "nginx", "copy", "ka-1k", rep, 30+float64(rep)),
			reporttest.Run("ARM", "2026-10-13", "nginx", "copy", "ka-1k", rep, 40+float64(rep)),
			reporttest.Run("ARM", "2026-10-13", "devel", "splice", "ka-1k", rep, 20+float64(rep)))
	}
	failed := reporttest.Run("ARM", "2026-10-13", "squid", "copy", "ka-1k", 2, 0)
	failed.Status, failed.Note = "failed", "origin reset the connection"
	rows = append(rows, failed)

	var b bytes.Buffer
	if err := Render(&b, rows, Options{Format: FormatTSV}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	newer, older := strings.Index(out, "Session 2026-10-13"), strings.Index(out, "Session 2026-10-11")
	if newer < 0 || older < 0 || newer > older {
		t.Errorf("sessions not newest first:\n%s", out)
	}
	for _, want := range []string{
		"ka-1k, k req/s\t42.0 *\t–\t‖\t22.0\n",
		"squid\tka-1k\t2\torigin reset the connection\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	b.Reset()
	if err := Render(&b, rows, Options{Format: FormatMarkdown, Session: "2026-10-11"}); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); strings.Contains(out, "2026-10-13") || !strings.Contains(out, "| ka-1k, k req/s | **32.0** * ±3% n=3 |") {
		t.Errorf("--session 2026-10-11 rendered:\n%s", out)
	}

	b.Reset()
	err := Render(&b, rows, Options{Session: "2026-10-12"})
	if err == nil || !strings.Contains(err.Error(), `no session "2026-10-12"`) || b.Len() > 0 {
		t.Errorf("unknown session: err %v, output %q", err, b.String())
	}
	b.Reset()
	for _, opt := range []Options{{Format: "pdf"}, {Layout: "stacked"}} {
		if err := Render(&b, rows, opt); err == nil || b.Len() > 0 {
			t.Errorf("Render(%+v) = %v, output %q; want an error and nothing written", opt, err, b.String())
		}
	}
}

// TestRenderMarkdownEscapes: text of the session files, in any part of
// the markdown (a heading, a table's cell, a failed run, a note, the
// Setup table), has its <, > and & escaped, as the page escapes them;
// tab-separated text keeps them as they are.
func TestRenderMarkdownEscapes(t *testing.T) {
	const machine, session, proxy, note = "M&M <2 CPUs>", "s<1>", "dev <b>&</b>", "<script>&amp;"
	var rows []results.Row
	for rep := 1; rep <= 2; rep++ {
		r := reporttest.Run(machine, session, proxy, results.Copy, "ka-1k", rep, 10)
		r.Note = note
		rows = append(rows, r)
	}
	failed := reporttest.Run(machine, session, proxy, results.Copy, "ka-1k", 3, 0)
	failed.Status, failed.Note = results.Failed, "reset <after> & before"
	rows = append(rows, failed)
	meta := &results.Meta{Session: session, Machine: results.MachineInfo{Label: machine, Host: "Acme <VM> & Co"}, Notes: []string{"scaled <down> & up"}}
	files := []results.SessionFile{{Path: "a.csv", Meta: meta}}

	var b bytes.Buffer
	if err := Render(&b, rows, Options{Format: FormatMarkdown, Files: files}); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	if strings.ContainsAny(md, "<>") || strings.Contains(strings.NewReplacer("&amp;", "", "&lt;", "", "&gt;", "").Replace(md), "&") {
		t.Errorf("markdown holds a raw <, > or &:\n%s", md)
	}
	for _, want := range []string{
		"# Session s&lt;1&gt;\n",             // a heading
		"### M&amp;M &lt;2 CPUs&gt;\n",       // the machine's
		"dev &lt;b&gt;&amp;&lt;/b&gt;",       // a cell of the table
		"| host  | Acme &lt;VM&gt; &amp; Co", // a cell of the Setup table
		": scaled &lt;down&gt; &amp; up\n",   // a note of the session
		"- dev &lt;b&gt;&amp;&lt;/b&gt;, ka-1k, rep 3: reset &lt;after&gt; &amp; before\n", // a failed run
		"- dev &lt;b&gt;&amp;&lt;/b&gt; ka-1k: &lt;script&gt;&amp;amp;\n",                  // a note of the runs
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}

	b.Reset()
	if err := Render(&b, rows, Options{Format: FormatTSV, Files: files}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Session " + session + "\n", proxy, note, "reset <after> & before"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("tab-separated text lacks %q as it is:\n%s", want, b.String())
		}
	}
}

// TestRenderNotes: what ok runs noted is listed under their table by
// cell, a note of several cells once with them; tab-separated text lists
// each note once with the columns and scenarios that noted it.
func TestRenderNotes(t *testing.T) {
	var rows []results.Row
	for rep := 1; rep <= 2; rep++ {
		for _, p := range []string{"nginx", "squid"} {
			r := reporttest.Run("ARM", "s", p, results.Copy, "ka-1k", rep, 10)
			r.Note = "9950 of 20000 connections: the descriptor limit here"
			rows = append(rows, r)
		}
	}
	r := reporttest.Run("ARM", "s", "squid", results.Copy, "ka-1m", 1, 10)
	r.Note = "errors: 12 of 100000 exchanges"
	rows = append(rows, r)
	for _, c := range []struct{ format, want string }{
		{FormatMarkdown, GroupedNotesHead + ":\n\n- 9950 of 20000 connections: the descriptor limit here — nginx ka-1k; squid ka-1k\n- squid ka-1m: errors: 12 of 100000 exchanges\n"},
		{FormatTSV, "notes\tcolumns\tscenarios\n9950 of 20000 connections: the descriptor limit here\tnginx, squid\tka-1k\nerrors: 12 of 100000 exchanges\tsquid\tka-1m\n"},
	} {
		var b bytes.Buffer
		if err := Render(&b, rows, Options{Format: c.format}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("%s output lacks %q:\n%s", c.format, c.want, b.String())
		}
	}
}

// TestRenderTunnelRunsNamed: a tunnel's failed runs and notes name the
// direction too, which the table's rows leave to its columns.
func TestRenderTunnelRunsNamed(t *testing.T) {
	tunnel := func(load string, status results.Status, note string) results.Row {
		return results.Row{Machine: "ARM", Session: "s", Proxy: "stunnel", Group: results.Copy, Mode: results.TLSTunnel,
			Load: load, Rep: 1, Seconds: 10, Bytes: 4e9, Status: status, Bound: "proxy", Note: note}
	}
	rows := []results.Row{
		tunnel("TLS_AES_128_GCM_SHA256-up", results.OK, "negotiated TLSv1.3, TLS_AES_128_GCM_SHA256"),
		tunnel("TLS_AES_128_GCM_SHA256-down", results.Failed, "stunnel exited"),
	}
	var b bytes.Buffer
	if err := Render(&b, rows, Options{Format: FormatMarkdown}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"- stunnel, TLS_AES_128_GCM_SHA256-down, rep 1: stunnel exited\n",
		"- stunnel TLS_AES_128_GCM_SHA256-up: negotiated TLSv1.3, TLS_AES_128_GCM_SHA256\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, b.String())
		}
	}
}

// A splicing column whose runs counted no pipe is marked † with a
// footnote; one that spliced, or whose runs did not count (an older
// file), is not. The tab-separated text and JSON carry each cell's
// spread; the markdown table does not.
func TestRenderNoSpliceAndSpread(t *testing.T) {
	var rows []results.Row
	add := func(proxy string, group results.Group, load string, pipes int64, known bool, figures ...float64) {
		for i, f := range figures {
			r := reporttest.Run("Intel", "2026-11-02", proxy, group, load, i+1, f)
			if results.Bulk(load) {
				r.Requests, r.Bytes = int64(f*1e3), int64(f*1e9*10/8)
			}
			r.SplicePipes, r.HasPipes = pipes, known
			rows = append(rows, r)
		}
	}
	add("haproxy", results.Copy, "ka-1m", 0, true, 1.8, 1.7, 1.9)
	add("haproxy splice-auto", results.Splice, "ka-1m", 0, true, 1.7, 1.6, 2.0)
	add("haproxy splice", results.Splice, "ka-1m", 4, true, 2.4, 2.5, 2.45)
	add("devel", results.Splice, "ka-1m", 0, false, 3.1, 3.0, 3.2)
	add("haproxy", results.Copy, "ka-1k", 0, true, 30, 33)
	add("haproxy splice-auto", results.Splice, "ka-1k", 0, true, 31)
	add("haproxy splice", results.Splice, "ka-1k", 2, true, 29, 30, 31)
	add("devel", results.Splice, "ka-1k", 0, false, 40, 44, 42)
	for _, format := range []string{FormatMarkdown, FormatTSV, FormatJSON} {
		var b bytes.Buffer
		if err := Render(&b, rows, Options{Format: format}); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, filepath.Join("testdata", "golden", "no-splice-spread."+format), b.Bytes())
		out := b.String()
		want := 3 // two cells and the footnote; JSON has the cells only
		if format == FormatJSON {
			want = 2
		}
		if got := strings.Count(out, "†"); got != want {
			t.Errorf("%s: %d †; want %d:\n%s", format, got, want, out)
		}
	}
	tables, err := Tables(rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range tables[0].Rows {
		for _, c := range r.Cells {
			want := c.Group == results.Splice && c.Proxy == "haproxy splice-auto"
			if c.NoSplice != want {
				t.Errorf("%s, %s: NoSplice %v; want %v", r.Label, c.Proxy, c.NoSplice, want)
			}
			switch {
			case len(c.Runs) < 2 && c.Spread != nil:
				t.Errorf("%s, %s: spread %v of %d runs; want none", r.Label, c.Proxy, *c.Spread, len(c.Runs))
			case len(c.Runs) >= 2 && c.Spread == nil:
				t.Errorf("%s, %s: no spread of %d runs", r.Label, c.Proxy, len(c.Runs))
			}
		}
	}
	// (2.0 - 1.6) / 1.7
	if c := tables[0].Rows[0].Cells[1]; c.Spread == nil || math.Abs(*c.Spread-0.4/1.7) > 1e-9 {
		t.Errorf("spread of haproxy splice-auto, ka-1m = %v; want %.4f", c.Spread, 0.4/1.7)
	}
}

// TestRenderControlCharacters: names and notes built with a newline, a
// heading and a link, a tab or a terminal's escape (as a CSV's reader
// would refuse them, the writers being given them directly) keep the
// markdown's tables a row a line, begin no heading, and keep the
// tab-separated text's columns: every line of a block of it has as many
// tabs as the block's first.
func TestRenderControlCharacters(t *testing.T) {
	const heading, tab, esc = "x\n\n# Heading [link](http://example.invalid)", "x\ty", "e\x1b[2J\r"
	var rows []results.Row
	for rep := 1; rep <= 2; rep++ {
		for _, p := range []string{"nginx", heading, tab, esc} {
			r := reporttest.Run("M\n# machine", "s\n# session", p, results.Copy, "ka-1k", rep, 10)
			r.Note = "noted\n## note\tz"
			rows = append(rows, r)
		}
	}
	failed := reporttest.Run("M\n# machine", "s\n# session", heading, results.Copy, "ka-1k", 3, 0)
	failed.Status, failed.Note = results.Failed, "reset\n# failed\tz"
	rows = append(rows, failed)
	meta := &results.Meta{Session: "s\n# session", Machine: results.MachineInfo{Label: "M\n# machine", Host: "VM\n# host\t|"},
		Notes: []string{"scaled\n# meta note\tz"}, CommandLine: []string{"bench", "run", "--proxy", heading}}
	files := []results.SessionFile{{Path: "a.csv", Meta: meta}}

	var b bytes.Buffer
	if err := Render(&b, rows, Options{Format: FormatMarkdown, Files: files}); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	if strings.ContainsFunc(md, func(r rune) bool { return unicode.IsControl(r) && r != '\n' }) {
		t.Errorf("markdown holds a control character:\n%q", md)
	}
	bar := regexp.MustCompile(`(^|[^\\])\|`)
	for _, block := range strings.Split(md, "\n\n") {
		lines := strings.Split(strings.Trim(block, "\n"), "\n")
		for _, l := range lines {
			if strings.HasPrefix(l, "#") && !regexp.MustCompile(`^(# Session s\\n# session|## (Summary|Setup|HTTP proxy)|### M\\n# machine)$`).MatchString(l) {
				t.Errorf("markdown has a heading of a name or a note: %q", l)
			}
			if strings.HasPrefix(lines[0], "|") && len(bar.FindAllString(l, -1)) != len(bar.FindAllString(lines[0], -1)) {
				t.Errorf("markdown table's line %q has not the cells of its header %q", l, lines[0])
			}
		}
	}
	for _, want := range []string{`| x\n\n# Heading [link](http://example.invalid)`, `x\ty`, `e\x1b[2J\r`, `VM\n# host\t\|`} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}

	b.Reset()
	if err := Render(&b, rows, Options{Format: FormatTSV, Files: files}); err != nil {
		t.Fatal(err)
	}
	tsv := b.String()
	if strings.ContainsFunc(tsv, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }) {
		t.Errorf("tab-separated text holds a control character:\n%q", tsv)
	}
	for _, block := range strings.Split(tsv, "\n\n") {
		lines := strings.Split(strings.Trim(block, "\n"), "\n")
		for _, l := range lines {
			if strings.HasPrefix(l, "#") {
				t.Errorf("tab-separated text has a line of a name or a note: %q", l)
			}
			if strings.Count(l, "\t") != strings.Count(lines[0], "\t") {
				t.Errorf("tab-separated line %q has not the columns of its block's first %q", l, lines[0])
			}
		}
	}
	if !strings.Contains(tsv, "\t"+`x\ty`+"\t") {
		t.Errorf("tab-separated text lacks the column x\\ty escaped:\n%s", tsv)
	}
}

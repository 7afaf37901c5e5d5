// Package htmldoc is what the report's pages share: their head, their
// style, a chart's figure and the links to the files beside a page.
package htmldoc

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"net/url"
	"strings"
)

// Head writes a page's opening: its doctype, its head with title and a
// style of css's parts, a line each, and the opening of its body. w is
// the page's buffer: its writes do not fail.
func Head(w io.Writer, title string, css ...string) {
	fmt.Fprintf(w, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>%s</title>\n<style>\n%s\n</style>\n</head>\n<body>\n",
		html.EscapeString(title), strings.Join(css, "\n"))
}

// Style is every page's style: at any width the page is no wider than
// its window, its text no wider than a reader's line (80em) and its
// tables as wide as the window lets them be; a table wider than its
// window scrolls in its own box, its first column (the rows' labels)
// staying in place, its cells breaking between figure, marks and
// spread before it does; on a phone the labels break too, so that
// a column of figures shows beside them; a chart is scaled down to the
// width of its figure.
const Style = `body{font-family:sans-serif;margin:1.5em;color:#222;overflow-wrap:anywhere}
p,ul,h1,h2,h3,h4,figure,details>summary{max-width:80em}
table{border-collapse:collapse;margin:0.5em 0 1em;display:block;max-width:100%;overflow-x:auto;overflow-wrap:normal}
th,td{border:1px solid #bbb;padding:0.2em 0.6em;text-align:left}
th,td>small,td>span{white-space:nowrap}
th{background:#eee}
tr>:first-child{position:sticky;left:0;z-index:1;background:#eee}
@media (max-width:40em){th{white-space:normal}tr>:first-child{overflow-wrap:anywhere;min-width:4em}}
td.bar{border:none;padding:0 0.2em;color:#888}
figure{margin:0.5em 0 1.5em}
figure svg{display:block;width:100%;height:auto}
figcaption{font-size:0.85em;color:#555}
.series{display:flex;flex-wrap:wrap;gap:0.5em}
.series figure{margin:0;width:22em;max-width:100%}
p.absent{color:#855;font-style:italic}
p.caption{font-size:0.9em;color:#444}
p.summary{font-size:1.05em}
ul.headline{font-weight:bold;margin:0.3em 0}
small.spread{color:#666}
span.err{color:#b00;font-weight:bold}span.err.minor{color:#c66;font-weight:normal}
p:has(+ ul.legend){display:inline;font-size:0.9em;color:#444;margin:0}
ul.legend{display:inline;list-style:none;padding:0;margin:0;font-size:0.9em;color:#444}
ul.legend li{display:inline}
ul.legend li:first-child::before{content:" "}
ul.legend li+li::before{content:" · "}
section.answer{border-left:4px solid #888;padding-left:0.8em}
details{margin:0.3em 0 1em}`

// Figure writes a chart's figure.
func Figure(b *bytes.Buffer, class string, svg []byte, caption string) {
	fmt.Fprintf(b, "<figure class=\"%s\">\n", class)
	b.Write(svg)
	fmt.Fprintf(b, "\n<figcaption>%s</figcaption>\n</figure>\n", html.EscapeString(caption))
}

// RelHref is the value of an href to the file at rel, a slash-separated
// path relative to the page's folder, escaped for the attribute: each
// segment percent-escaped (url.PathEscape) and the whole begun with "./",
// so that no name of a file (a session's, a run's) is read as a scheme
// ("javascript:", "epyc-12:00"), a query or a fragment. Every link the
// page makes to a file beside it is written by it.
func RelHref(rel string) string {
	segs := strings.Split(rel, "/")
	for i, s := range segs {
		// PathEscape keeps a colon, which no segment needs as such
		segs[i] = strings.ReplaceAll(url.PathEscape(s), ":", "%3A")
	}
	return html.EscapeString("./" + strings.Join(segs, "/"))
}

// Esc escapes s for the text or an attribute of a page.
func Esc(s string) string { return html.EscapeString(s) }

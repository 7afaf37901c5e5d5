// Package reporttest holds what the tests of report's packages share:
// names forged to look like the charts' tips, what a page writer wrote or
// the panic it raised, and an ok run of each catalog scenario.
package reporttest

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"bench/results"
	"bench/scenarios"
)

// ForgedTips are names that look like the markers the charts' tips
// (chart.Tips) draw and replace with their titles.
var ForgedTips = []string{"@@tip 99999@@", "@@tip 0@@", "@@/tip@@", "@@tip -1@@"}

// Renamed is rows with the proxy from renamed to.
func Renamed(rows []results.Row, from, to string) []results.Row {
	out := make([]results.Row, len(rows))
	for i, r := range rows {
		if r.Proxy == from {
			r.Proxy = to
		}
		out[i] = r
	}
	return out
}

// TipCounts are the counts of what the tips put in a page: their groups,
// the groups' ends and the titles.
func TipCounts(page string) string {
	return fmt.Sprintf("%d <g class=, %d </g>, %d <title>", strings.Count(page, "<g class="), strings.Count(page, "</g>"), strings.Count(page, "<title>"))
}

// RenderSafe is what f writes, or the panic it raised as an error.
func RenderSafe(f func(*bytes.Buffer) error) (page string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	var b bytes.Buffer
	err = f(&b)
	return b.String(), err
}

// CatalogRow is one ok run of a catalog scenario, with figures enough for
// every table.
func CatalogRow(sc scenarios.Scenario) results.Row {
	r := results.Row{Machine: "m", Session: "s", Proxy: "p", Kind: "nginx", Group: results.Copy,
		Mode: sc.Mode, Load: sc.Load.Name, Rep: 1, Seconds: 10, Requests: 123456, Bytes: 9e9,
		CPUProxy: 5, PeakMemBytes: 5e6, Bound: results.BoundProxy, Status: results.OK}
	if sc.Load.Name == results.LoadSweep {
		// a search of one window: its confirming one, passing
		r.Note, r.OfferedRate, r.HasOffered = results.Step{Confirm: true, Pass: true}.String(), 12500, true
	}
	return r
}

// UnitScenarios are the catalog's scenarios, and a sweep's of each mix
// mode the catalog has no sweep of.
func UnitScenarios() []scenarios.Scenario {
	out := scenarios.Catalog()
	for _, mode := range []results.Mode{results.MixHTTP, results.MixConnect, results.MixSocks, results.MixRelay} {
		name := results.ScenarioName(mode, results.LoadSweep)
		if !slices.ContainsFunc(out, func(sc scenarios.Scenario) bool { return sc.Name == name }) {
			out = append(out, scenarios.Scenario{Name: name, Mode: mode, Load: scenarios.Load{Name: results.LoadSweep}})
		}
	}
	return out
}

// SVGStructure is an SVG's element tree, one element a line indented by
// its depth: its name, its class and column, its fill or stroke colour,
// a text's place rounded to a point and its text, a title's text.
func SVGStructure(t testing.TB, svg []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	dec := xml.NewDecoder(bytes.NewReader(svg))
	depth := 0
	colour := regexp.MustCompile(`(fill|stroke):(#[0-9a-fA-F]{6})`)
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the chart's SVG: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			line := strings.Repeat("  ", depth) + "<" + el.Name.Local
			for _, a := range el.Attr {
				switch a.Name.Local {
				case "class", "data-column", "width", "style", "viewBox":
					if a.Name.Local == "style" && el.Name.Local != "svg" {
						for _, m := range colour.FindAllStringSubmatch(a.Value, -1) {
							if m[1] == "stroke" || el.Name.Local == "path" {
								line += " " + m[1] + "=" + m[2]
							}
						}
						continue
					}
					line += fmt.Sprintf(" %s=%q", a.Name.Local, a.Value)
				case "x", "y":
					f, _ := strconv.ParseFloat(a.Value, 64)
					line += fmt.Sprintf(" %s=%.0f", a.Name.Local, f)
				}
			}
			b.WriteString(line + ">")
			depth++
		case xml.EndElement:
			depth--
			b.WriteString("\n")
		case xml.CharData:
			if s := strings.TrimSpace(string(el)); s != "" {
				b.WriteString(" " + s)
			}
		}
	}
	// One line an element: an element's end closes its line, and a
	// parent's children start lines of their own.
	out := regexp.MustCompile(`>\n*(\s*<)`).ReplaceAllString(b.String(), ">\n$1")
	return []byte(regexp.MustCompile(`\n+`).ReplaceAllString(out, "\n"))
}

// Run makes an ok run of a plain HTTP scenario.
func Run(machine, session, proxy string, group results.Group, load string, rep int, kreq float64) results.Row {
	return results.Row{Machine: machine, Session: session, Proxy: proxy, Group: group, Mode: "http", Load: load,
		Rep: rep, Seconds: 10, Requests: int64(kreq * 1e4), Status: "ok", Bound: "proxy"}
}

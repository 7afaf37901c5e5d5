package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"bench/harness"
	"bench/proxies"
	"bench/scenarios"
)

func cmdList(stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("list", stderr, "[flags]\n\nPrints the scenario catalog and the proxy columns found on this machine.")
	columnsFile := fs.String("columns", "", "file declaring columns of your own builds; see examples/columns.conf")
	scenario := fs.String("scenario", "all", "scenarios to list: all (the whole catalog, the sweeps too), a name, a comma list or globs")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	scs := scenarios.Catalog()
	if *scenario != "all" {
		var err error
		if scs, err = scenarios.Select(*scenario); err != nil {
			return usageError{withAdvice(err)}
		}
	}
	cols, err := harness.LoadColumns(*columnsFile, "")
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tMODE\tLOAD\tWHAT THE CLIENT DOES")
	for _, s := range scs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Name, s.Mode, s.Load.Name, s.Load)
	}
	tw.Flush()
	fmt.Fprintln(stdout)
	fmt.Fprintln(tw, "COLUMN\tKIND\tGROUP\tVERSION\tMODES\tBINARY")
	for _, c := range cols {
		a, _ := proxies.Lookup(c.Kind)
		var modes []string
		for _, m := range a.Modes() {
			if proxies.Serves(c, m) {
				modes = append(modes, string(m))
			}
		}
		v := harness.ColumnVersion(c)
		if v == "" {
			v = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s %s\n", c.Name, c.Kind, c.Group, v,
			strings.Join(modes, ","), proxies.Binary(a, c), strings.Join(c.Flags, " "))
	}
	return tw.Flush()
}

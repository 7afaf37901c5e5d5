package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"bench/harness"
	"bench/harness/host"
)

func cmdCheck(stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("check", stderr, "[--cpus client=0-3,proxy=4,origin=5-7]")
	cpus := fs.String("cpus", "", "the CPU layout to check instead of the default")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var layout *host.Layout
	if *cpus != "" {
		online, err := host.OnlineCPUs()
		if err != nil {
			return err
		}
		l, err := host.ParseLayout(*cpus, online)
		if err != nil {
			return usageError{fmt.Errorf("--cpus: %w", err)}
		}
		layout = &l
	}
	return printChecks(stdout, harness.Checks(layout))
}

// printChecks writes the items as a table and returns an error naming
// the required items that failed.
func printChecks(w io.Writer, items []host.CheckItem) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tRESULT\tFOUND\tDETAIL")
	var failed []string
	for _, it := range items {
		result := "ok"
		switch {
		case !it.OK && it.Required:
			result = "FAIL"
			failed = append(failed, it.Name)
		case !it.OK:
			result = "warn"
		}
		detail := it.Detail
		if it.Advice != nil {
			detail = it.Advice.Text(hostFlagOf)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", it.Name, result, it.Status, detail)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(failed) > 0 {
		return fmt.Errorf("check: a session cannot run here: %s failed (see DETAIL above)", strings.Join(failed, ", "))
	}
	return nil
}

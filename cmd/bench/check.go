package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"bench/harness"
	"bench/harness/host"
	"bench/inputerr"
)

func cmdCheck(stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("check", stderr, "[--cpus client=0-3,proxy=4,origin=5-7] [--hosts FILE [--ssh-config FILE] [--accept-new-host-keys]]")
	cpus := fs.String("cpus", "", "the CPU layout to check instead of the default")
	hf := addHostsFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *hf.file != "" {
		if *cpus != "" {
			return usageError{fmt.Errorf("--cpus and --hosts: a hosts file gives each host's CPUs (cpus=)")}
		}
		return checkHosts(stdout, hf)
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
	failed, err := writeChecks(w, items)
	if err == nil && len(failed) > 0 {
		err = fmt.Errorf("check: a session cannot run here: %s failed (see DETAIL above)", strings.Join(failed, ", "))
	}
	return err
}

// writeChecks writes the items as a table and returns the names of the
// required items that failed.
func writeChecks(w io.Writer, items []host.CheckItem) (failed []string, err error) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tRESULT\tFOUND\tDETAIL")
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
	return failed, tw.Flush()
}

// hostsFlags are the flags that put the roles on hosts of their own:
// bench check's, run's and clean's.
type hostsFlags struct {
	file, sshConfig *string
	acceptNew       *bool
}

func addHostsFlags(fs *flag.FlagSet) hostsFlags {
	return hostsFlags{
		file:      fs.String("hosts", "", "a hosts file, a line per role and host: ROLE [user@]host[:port] data=ADDRESS [cpus=] [nic=]"),
		sshConfig: fs.String("ssh-config", "", "ssh's config file for the hosts instead of yours (ssh -F)"),
		acceptNew: fs.Bool("accept-new-host-keys", false, "take a host's key that known_hosts does not have, and record it (a changed key is refused all the same)"),
	}
}

// read reads the hosts file the flags name; its errors name the file and
// the line.
func (hf hostsFlags) read() (host.Hosts, error) {
	f, err := os.Open(*hf.file)
	if err != nil {
		return host.Hosts{}, inputerr.Bad(fmt.Errorf("--hosts: %w", err))
	}
	defer f.Close()
	h, err := host.ParseHosts(*hf.file, f)
	if err != nil {
		return h, inputerr.Bad(err)
	}
	return h, nil
}

// sshOf is each host's ssh as the flags set it.
func (hf hostsFlags) sshOf(dest host.Destination) host.SSH {
	return host.SSH{Dest: dest, Config: *hf.sshConfig, AcceptNewKeys: *hf.acceptNew}
}

// checkHosts checks the hosts of the file the flags name, and fails as a
// bad input where one of them lacks what a session needs, naming it.
func checkHosts(stdout io.Writer, hf hostsFlags) error {
	h, err := hf.read()
	if err != nil {
		return err
	}
	failed, err := writeChecks(stdout, harness.HostChecks(context.Background(), h, hf.sshOf))
	if err != nil {
		return err
	}
	if len(failed) > 0 {
		return &inputerr.Error{File: h.Name, Err: fmt.Errorf("a session cannot use these hosts: %s failed (see DETAIL above)", strings.Join(failed, ", "))}
	}
	return nil
}

package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"bench/inputerr"
	"bench/profile"
	"bench/report"
	"bench/results"

	pprof "github.com/google/pprof/profile"
)

const profileSynopsis = `top [-n N] RUN
       bench profile top [-n N] SESSION.csv SCENARIO PROXY

Prints the functions of most self time in a run's CPU profile, as pprof -top
does: each one's samples as the leaf of a stack (self) and anywhere in it
(total), and their shares of the proxy's samples. RUN is the profile
(<run>` + results.ProfileSuffix + ` in the session's runs folder) or the run's name
there (data/x.runs/0007-nginx-http-ka-1k-1). A cell, the scenario and the
proxy of a table of the session (http-ka-1k nginx), is its median run, the
one whose profile the session's page links.`

func cmdProfile(stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("profile", stderr, profileSynopsis)
	n := fs.Int("n", profile.TopN, "how many functions to print")
	args, help, err := subcommand(fs, "profile", "top", args)
	if help || err != nil {
		return err
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if (fs.NArg() != 1 && fs.NArg() != 3) || *n < 1 {
		fs.Usage()
		return usageError{fmt.Errorf("profile top: want one RUN, or SESSION.csv SCENARIO PROXY, and -n of 1 or more; got %d arguments, -n %d", fs.NArg(), *n)}
	}
	run := fs.Arg(0)
	if fs.NArg() == 3 {
		var err error
		if run, err = cellProfile(fs.Arg(0), fs.Arg(1), fs.Arg(2)); err != nil {
			return err
		}
	}
	p, err := readProfile(run)
	if err != nil {
		return err
	}
	funcs, samples := profile.Top(p, *n)
	return profile.WriteTop(stdout, funcs, samples)
}

// cellProfile is the profile of the median run of proxy in scenario in
// the session file csv, the ok runs of one machine.
func cellProfile(csv, scenario, proxy string) (string, error) {
	rows, err := results.ReadFiles([]string{csv})
	if err != nil {
		return "", err
	}
	var runs []*results.Row
	machines := map[string]bool{}
	for i := range rows {
		r := &rows[i]
		if r.Status == results.OK && r.Proxy == proxy && results.ScenarioName(r.Mode, r.Load) == scenario {
			runs = append(runs, r)
			machines[r.Machine] = true
		}
	}
	cell := fmt.Sprintf("%s in %s", proxy, scenario)
	switch {
	case len(runs) == 0:
		return "", &inputerr.Error{File: csv, Err: fmt.Errorf("no ok run of %s (bench report %s lists the cells)", cell, csv)}
	case len(machines) > 1:
		return "", &inputerr.Error{File: csv, Err: fmt.Errorf("%s ran on %d machines: give the run", cell, len(machines))}
	}
	id := report.MedianRun(runs)
	data, err := results.ReadRunData([]string{csv})
	if err != nil {
		return "", err
	}
	d := data[*id]
	switch {
	case d == nil || d.Profile == nil:
		return "", &inputerr.Error{File: csv, Err: fmt.Errorf("the median run of %s (rep %d) has no profile: run the session with bench run --profile=on", cell, id.Rep)}
	case !d.Profiled():
		return "", &inputerr.Error{File: csv, Err: fmt.Errorf("the median run of %s (rep %d) has no profile: %s", cell, id.Rep, d.Profile.Absent)}
	}
	return d.Files + results.ProfileSuffix, nil
}

// readProfile reads the profile at path, or at path+ProfileSuffix for a
// run's name.
func readProfile(path string) (*pprof.Profile, error) {
	if !strings.HasSuffix(path, results.ProfileSuffix) {
		if _, err := os.Stat(path); err != nil {
			path += results.ProfileSuffix
		}
	}
	// An input that is not there or does not read exits 2, as every
	// command's input files do.
	f, err := os.Open(path)
	if err != nil {
		return nil, &inputerr.Error{Err: fmt.Errorf("read profile: %w (a run profiled with bench run --profile=on has one)", err)}
	}
	defer f.Close()
	p, err := profile.ReadProto(f)
	if err != nil {
		return nil, &inputerr.Error{File: path, Err: fmt.Errorf("not a pprof profile: %w", err)}
	}
	return p, nil
}

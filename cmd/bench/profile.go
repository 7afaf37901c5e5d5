package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"bench/report/profile"
	"bench/report/results"

	pprof "github.com/google/pprof/profile"
)

const profileSynopsis = `top [-n N] RUN

Prints the functions of most self time in a run's CPU profile, as pprof -top
does: each one's samples as the leaf of a stack (self) and anywhere in it
(total), and their shares of the proxy's samples. RUN is the profile
(<run>` + results.ProfileSuffix + ` in the session's runs folder) or the run's name
there (data/x.runs/0007-nginx-http-ka-1k-1).`

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
	if fs.NArg() != 1 || *n < 1 {
		fs.Usage()
		return usageError{fmt.Errorf("profile top: want one RUN and -n of 1 or more; got %d arguments, -n %d", fs.NArg(), *n)}
	}
	p, err := readProfile(fs.Arg(0))
	if err != nil {
		return err
	}
	funcs, samples := profile.Top(p, *n)
	return profile.WriteTop(stdout, funcs, samples)
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
		return nil, &results.InputError{Err: fmt.Errorf("read profile: %w (a run profiled with bench run --profile=on has one)", err)}
	}
	defer f.Close()
	p, err := pprof.Parse(f)
	if err != nil {
		return nil, &results.InputError{File: path, Err: fmt.Errorf("not a pprof profile: %w", err)}
	}
	return p, nil
}

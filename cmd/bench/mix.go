package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"bench/harness/host"
	"bench/harness/mix"
	"bench/harness/sweep"
	"bench/harness/tlswrap"
	"bench/results"
	"bench/scenarios"
)

const mixSynopsis = `--mode http|connect|socks|relay --proxy HOST:PORT --origin HOST:PORT [--tls-ca FILE] [--conns 20000] (--mix-active K | --rate R | --sweep | --steps) [flags]
       bench mix --serve HOST:PORT
       bench mix tls client|server --listen HOST:PORT --connect HOST:PORT [flags] [-- COMMAND...]

The first form opens the connections and runs the exchanges, and prints
the result as JSON. With --sweep it searches for the sustainable rate
over the same connections: a step at --sweep-from a second, the rate
doubled until a step fails --slo, then the interval between the last
pass and the first failure halved until they are within
--sweep-precision (at most 13 steps, each --warmup and half --duration),
then a confirming window of --duration at the rate found, which must
pass too (else confirms below it, at most 15 windows in all); a line of
JSON per step; a step must meet --slo (the p99 of every exchange due, and
the failures: errors, timeouts, late and dropped exchanges, as a share of
them) and achieve 99% of its rate. With --steps it holds the connections
open and runs the steps asked for on standard input, a line each ("step
RATE WARMUP DURATION"), printing each one's result as a line of JSON, as
bench run --sweep drives it. --procs 0 runs a process per CPU this one may
run on, but no more than --mix-active, more if the descriptor limit
needs. With --start-file, once the connections are open it prints
"` + scenarios.ShareReady + `" and waits for the file to hold the warm-up's start in Unix
nanoseconds, so that the shares of a load split over client hosts start
together. The second is the origin of the mix: it serves the mix's
answers until it is stopped, writing each one whole even to a client
that has shut its sending side. The third is the TLS stream wrapper
(bench mix tls -h).`

func cmdMix(stdout, stderr io.Writer, args []string) error {
	if len(args) > 0 && args[0] == "tls" {
		return cmdMixTLS(stdout, stderr, args[1:])
	}
	fs := newFlagSet("mix", stderr, mixSynopsis)
	var c mix.Config
	mode := fs.String("mode", "", "how to reach the origin: http (absolute URIs to an HTTP proxy), connect, socks (tunnels), relay")
	fs.StringVar(&c.Proxy, "proxy", "", "host:port of the proxy's listener; for relay, of the relay (the origin's for no proxy)")
	fs.StringVar(&c.Origin, "origin", "", "host:port of the origin, as the proxy reaches it")
	tlsCA := fs.String("tls-ca", "", "relay: speak TLS 1.3 to --proxy, its certificate verified with the CA in this PEM file")
	fs.IntVar(&c.Conns, "conns", 20000, "connections kept open")
	fs.IntVar(&c.Active, "mix-active", 0, "exchanges at a time over the connections (closed loop)")
	fs.Float64Var(&c.Rate, "rate", 0, "exchanges a second over the connections (open loop; latency from each one's scheduled start)")
	fs.DurationVar(&c.Duration, "duration", 10*time.Second, "measured window; with --sweep the confirming window's, each step measuring half of it")
	fs.DurationVar(&c.Warmup, "warmup", 0, "load before the window, not measured; with --sweep before each step")
	fs.DurationVar(&c.Timeout, "timeout", 2*time.Second, "limit of opening a connection, of an exchange, and of how late one may begin")
	fs.Float64Var(&c.OpenRate, "open-rate", 0, "connections opened a second (0: as fast as --open-parallel allows)")
	fs.IntVar(&c.OpenParallel, "open-parallel", 64, "connections being opened at once")
	procs := fs.Int("procs", 0, "processes to split the connections over (0: one per CPU)")
	worker := fs.String(mix.WorkerFlag, "", "i/n: run as process i of a split mix (used by bench mix itself)")
	serve := fs.String("serve", "", "host:port: serve the mix's answers there, as its origin, until stopped")
	sw := sweepFlags(fs, "search for the sustainable rate: the highest whose window meets --slo")
	steps := fs.Bool("steps", false, "run the steps asked for on standard input, a line each, over the same connections")
	startFile := fs.String("start-file", "", "wait for this `file` to give the warm-up's start in Unix nanoseconds (a share of a split load)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("mix: unexpected arguments %q", fs.Args())}
	}
	if *serve != "" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		ln, err := mix.Listen(*serve)
		if err != nil {
			return err
		}
		return mix.Serve(ctx, ln)
	}
	c.Mode = mix.Mode(*mode)
	if *tlsCA != "" {
		var err error
		if c.TLS, err = tlswrap.ClientConfig(*tlsCA, "", c.Proxy); err != nil {
			return usageError{fmt.Errorf("mix: --tls-ca: %w", err)}
		}
	}
	stepped := *sw.on || *steps
	if *startFile != "" {
		if stepped {
			return usageError{errors.New("mix: --start-file starts one window; the steps choose their own starts")}
		}
		c.Start = mix.FileStart(*startFile, func() { fmt.Fprintln(stdout, scenarios.ShareReady) })
	}
	if stepped && *worker == "" {
		switch {
		case *sw.on && *steps:
			return usageError{errors.New("mix: --sweep runs its own steps; --steps takes them from standard input: give one")}
		case c.Active > 0:
			return usageError{fmt.Errorf("mix: %s over a closed loop (--mix-active): %w; a sweep steps fixed rates", stepFlag(*sw.on), mix.ErrClosedLoop)}
		case c.Rate > 0:
			return usageError{fmt.Errorf("mix: %s sets the rate of each step: leave out --rate", stepFlag(*sw.on))}
		}
	}
	var search results.Sweep
	if *sw.on {
		var err error
		if search, err = sw.settings(); err != nil {
			return usageError{fmt.Errorf("mix: %w", err)}
		}
	}
	if stepped && c.Active == 0 && c.Rate == 0 {
		// The steps give the rate; the first one's stands in for the
		// configuration's checks and the workers' shares.
		c.Rate = sweep.DefaultFrom
	}
	if err := c.Check(); err != nil {
		return usageError{fmt.Errorf("mix: %w", err)}
	}
	return mixWith(c, mixRun{worker: *worker, procs: *procs, steps: *steps, sweeping: *sw.on, search: search, args: args}, stdout, stderr)
}

// mixRun is how bench mix runs a checked configuration, as its flags say.
type mixRun struct {
	worker          string // --worker: i/n of a split mix
	procs           int    // --procs: 0 for the default
	steps, sweeping bool   // --steps, --sweep
	search          results.Sweep
	args            []string // the command line, for the workers
}

// mixWith runs the mix c as o says: as a worker of a split mix, as steps
// or a sweep over the same connections, or one window; in this process or
// over processes of bench mix itself.
func mixWith(c mix.Config, o mixRun, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if o.worker != "" {
		i, n, err := mix.ParseWorker(o.worker)
		if err != nil {
			return usageError{err}
		}
		return mix.Worker(ctx, mix.Share(c, i, n), os.Stdin, stdout)
	}
	n := o.procs
	if n == 0 {
		n = mix.DefaultProcs(c, connsPerProc())
	}
	if err := mix.CheckSplit(c, n); err != nil {
		if o.procs == 0 {
			err = fmt.Errorf("%w: the descriptor limit (ulimit -Hn) needs %d processes for %d connections", err, n, c.Conns)
		}
		return usageError{fmt.Errorf("mix: %w", err)}
	}
	if o.steps || o.sweeping {
		st, err := openStepper(ctx, c, n, o.args, stderr)
		if err != nil {
			return err
		}
		if o.steps {
			err = mix.Steps(ctx, st, os.Stdin, stdout)
		} else {
			err = runSweep(ctx, st, o.search, c, stdout, stderr)
		}
		return errors.Join(err, st.Close())
	}
	// the line a session plans its sampler's polls by
	opened := func(o scenarios.MixOpened) { mix.WriteOpened(stdout, o) }
	if n == 1 {
		r, err := mix.Run(ctx, c, opened)
		if err != nil {
			return err
		}
		return mix.WriteResult(stdout, r)
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	r, err := mix.RunProcs(ctx, exe, append([]string{"mix"}, o.args...), n, stderr, c.Start, opened)
	if err != nil {
		return err
	}
	return mix.WriteResult(stdout, r)
}

// connsPerProc is how many connections a process of bench mix holds
// under this process's descriptor limit, 0 where it is not known.
func connsPerProc() int {
	limit, err := host.NofileLimit()
	if err != nil {
		return 0
	}
	return host.ClientConns(limit)
}

// stepFlag names the flag that made a mix step.
func stepFlag(sweeping bool) string {
	if sweeping {
		return "--sweep"
	}
	return "--steps"
}

// openStepper opens the connections of c in this process, or over n
// processes of bench mix itself, for the steps of a sweep.
func openStepper(ctx context.Context, c mix.Config, n int, args []string, stderr io.Writer) (mix.Stepper, error) {
	if n == 1 {
		m, err := mix.New(c)
		if err != nil {
			return nil, err
		}
		m.Open(ctx)
		return m, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return mix.StartProcs(ctx, exe, append([]string{"mix"}, args...), n, stderr)
}

// mixStep is a line of bench mix --sweep: a step's window and its
// verdict, as a sweep row's note gives it.
type mixStep struct {
	Step string `json:"step"`
	scenarios.MixResult
}

// runSweep searches for the sustainable rate of c over st, printing a
// line of JSON per step on stdout and the rate found on stderr.
func runSweep(ctx context.Context, st mix.Stepper, cfg results.Sweep, c mix.Config, stdout, stderr io.Writer) error {
	s := sweep.New(cfg)
	var last scenarios.MixResult
	err := s.Run(c.Duration, c.Warmup, func(w sweep.Window) (sweep.Figures, error) {
		var err error
		last, err = st.Step(ctx, time.Time{}, scenarios.MixWindow{Rate: w.Rate, Warmup: w.Warmup, Duration: w.Length})
		return sweep.FiguresOf(last), err
	}, func(_ sweep.Window, step results.Step) error {
		b, err := json.Marshal(mixStep{Step: step.String(), MixResult: last})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	})
	if err != nil {
		return err
	}
	if rate, found := s.Result(); found {
		fmt.Fprintf(stderr, "sustainable rate %g exchanges a second (%s), confirmed over %s, in %d windows\n", rate, sweep.FormatSLO(cfg.SLO), c.Duration, s.Windows())
	} else if rate, found := s.Unconfirmed(); found {
		fmt.Fprintf(stderr, "sustainable rate %g exchanges a second (%s), not confirmed: its confirms over %s failed, in %d windows\n", rate, sweep.FormatSLO(cfg.SLO), c.Duration, s.Windows())
	} else if s.Flat() {
		fmt.Fprintf(stderr, "no sustainable rate (%s): the load fails at every rate, as the last of %d windows says\n", sweep.FormatSLO(cfg.SLO), s.Windows())
	} else {
		fmt.Fprintf(stderr, "no sustainable rate (%s) in %d windows: the last step says why\n", sweep.FormatSLO(cfg.SLO), s.Windows())
	}
	return nil
}

// sweepFlagSet is the flags of a sweep, bench mix's and bench run's.
type sweepFlagSet struct {
	on        *bool
	from      *float64
	precision *percent
	slo       *string
}

// sweepFlags declares the flags of a sweep on fs, with the search's
// defaults; on is what --sweep does.
func sweepFlags(fs *flag.FlagSet, on string) sweepFlagSet {
	d := sweep.Defaults()
	sw := sweepFlagSet{precision: &percent{value: d.Precision * 100, set: true}}
	sw.on = fs.Bool("sweep", false, on)
	sw.from = fs.Float64("sweep-from", d.From, "with --sweep: the first step's rate, a whole number of exchanges a second")
	fs.Var(sw.precision, "sweep-precision", "with --sweep: how close the last pass and the first failure come, in `percent`")
	sw.slo = fs.String("slo", sweep.FormatSLO(d.SLO), "with --sweep: a step's bounds, the p99 of every due exchange and the failures' share")
	return sw
}

// settings are the search the flags ask for; refused when they cannot
// be run (a bound that does not parse, a first rate of 0 or below).
func (sw sweepFlagSet) settings() (results.Sweep, error) {
	slo, err := sweep.ParseSLO(*sw.slo)
	if err != nil {
		return results.Sweep{}, fmt.Errorf("--slo: %w", err)
	}
	s := results.Sweep{From: *sw.from, Precision: sw.precision.value / 100, SLO: slo}
	if err := sweep.Check(s); err != nil {
		return results.Sweep{}, fmt.Errorf("--sweep-from, --sweep-precision: %w", err)
	}
	return s, nil
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"bench/harness/mix"
	"bench/scenarios"
)

const mixSynopsis = `--mode http|connect|socks|relay --proxy HOST:PORT --origin HOST:PORT [--conns 20000] (--mix-active K | --rate R) [flags]
       bench mix --serve HOST:PORT
       bench mix tls client|server --listen HOST:PORT --connect HOST:PORT [flags] [-- COMMAND...]

The first form opens the connections and runs the exchanges, and prints
the result as JSON. The second is the origin of the mix: it serves the
mix's answers until it is stopped, writing each one whole even to a
client that has shut its sending side. The third is the TLS stream
wrapper (bench mix tls -h).`

func cmdMix(stdout, stderr io.Writer, args []string) error {
	if len(args) > 0 && args[0] == "tls" {
		return cmdMixTLS(stdout, stderr, args[1:])
	}
	fs := newFlagSet("mix", stderr, mixSynopsis)
	var c mix.Config
	mode := fs.String("mode", "", "how to reach the origin: http (absolute URIs to an HTTP proxy), connect, socks (tunnels), relay")
	fs.StringVar(&c.Proxy, "proxy", "", "host:port of the proxy's listener; for relay, of the relay (the origin's for no proxy)")
	fs.StringVar(&c.Origin, "origin", "", "host:port of the origin, as the proxy reaches it")
	fs.IntVar(&c.Conns, "conns", 20000, "connections kept open")
	fs.IntVar(&c.Active, "mix-active", 0, "exchanges at a time over the connections (closed loop)")
	fs.Float64Var(&c.Rate, "rate", 0, "exchanges a second over the connections (open loop; latency from each one's scheduled start)")
	fs.DurationVar(&c.Duration, "duration", 10*time.Second, "measured window")
	fs.DurationVar(&c.Warmup, "warmup", 0, "load before the window, not measured")
	fs.DurationVar(&c.Timeout, "timeout", 2*time.Second, "limit of opening a connection and of an exchange; also how late an exchange may begin at a fixed rate")
	fs.Float64Var(&c.OpenRate, "open-rate", 0, "connections opened a second (0: as fast as --open-parallel allows)")
	fs.IntVar(&c.OpenParallel, "open-parallel", 64, "connections being opened at once")
	procs := fs.Int("procs", 0, "processes to split the connections over (0: one per CPU this process may run on but no more than --mix-active, more if the descriptor limit needs it)")
	worker := fs.String(mix.WorkerFlag, "", "i/n: run as process i of a split mix (used by bench mix itself)")
	serve := fs.String("serve", "", "host:port: serve the mix's answers there, as its origin, until stopped")
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
	if err := c.Check(); err != nil {
		return usageError{fmt.Errorf("mix: %w", err)}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if *worker != "" {
		i, n, err := mix.ParseWorker(*worker)
		if err != nil {
			return usageError{err}
		}
		r, err := mix.Worker(ctx, mix.Share(c, i, n), os.Stdin, stdout)
		if err != nil {
			return err
		}
		return printMix(stdout, r)
	}
	n := *procs
	if n == 0 {
		n = mix.DefaultProcs(c)
	}
	if err := mix.CheckSplit(c, n); err != nil {
		if *procs == 0 {
			err = fmt.Errorf("%w: the descriptor limit (ulimit -Hn) needs %d processes for %d connections", err, n, c.Conns)
		}
		return usageError{fmt.Errorf("mix: %w", err)}
	}
	if n == 1 {
		r, err := mix.Run(ctx, c)
		if err != nil {
			return err
		}
		return printMix(stdout, r)
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	r, err := mix.RunProcs(ctx, exe, append([]string{"mix"}, args...), n, stderr)
	if err != nil {
		return err
	}
	return printMix(stdout, r)
}

// printMix writes r as one line of JSON.
func printMix(w io.Writer, r scenarios.MixResult) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

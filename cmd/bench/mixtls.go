package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"

	"bench/harness/tlswrap"
)

const mixTLSSynopsis = `client|server --listen HOST:PORT --connect HOST:PORT [flags] [-- COMMAND ARGS...]

The TLS stream wrapper. client accepts plain TCP on --listen and speaks
TLS 1.3 to --connect, verifying its certificate with --ca; server accepts
TLS on --listen with --cert and --key and speaks plain TCP to --connect.
With a command after --, it relays while the command runs and exits with
it (bench mix tls client ... -- iperf3 -c 127.0.0.1 ...); without one it
relays until stopped.`

func cmdMixTLS(stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("mix tls", stderr, mixTLSSynopsis)
	var c tlswrap.Config
	listen := fs.String("listen", "", "host:port to accept connections on")
	fs.StringVar(&c.Connect, "connect", "", "host:port to connect to for each connection")
	fs.StringVar(&c.CA, "ca", "", "client: PEM file of the CA to verify the server's certificate with")
	fs.StringVar(&c.Name, "name", "", "client: the name to check in the server's certificate and send as SNI (default: --connect's host)")
	fs.StringVar(&c.Cert, "cert", "", "server: PEM file of the certificate chain to present")
	fs.StringVar(&c.Key, "key", "", "server: PEM file of its private key")
	suite := fs.String("suite", "", "the TLS 1.3 cipher suite the connections must negotiate, e.g. TLS_AES_128_GCM_SHA256 (default: any)")
	if len(args) == 0 || (args[0] != string(tlswrap.Client) && args[0] != string(tlswrap.Server)) {
		fs.Usage()
		if len(args) > 0 && helpAsked(args[0]) {
			return flag.ErrHelp
		}
		return usageError{fmt.Errorf("mix tls: want client or server first")}
	}
	c.Side = tlswrap.Side(args[0])
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if *listen == "" || c.Connect == "" {
		return usageError{fmt.Errorf("mix tls: --listen and --connect are needed")}
	}
	if *suite != "" {
		id, err := tlswrap.SuiteID(*suite)
		if err != nil {
			return usageError{fmt.Errorf("mix tls: %w", err)}
		}
		c.Suite = id
	}
	w, err := tlswrap.New(c)
	if err != nil {
		return usageError{fmt.Errorf("mix tls: %w", err)}
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if fs.NArg() > 0 {
		return w.RunCommand(ctx, ln, fs.Args(), stdout, stderr)
	}
	return w.Serve(ctx, ln, func(err error) { fmt.Fprintf(stderr, "bench mix tls: %v\n", err) })
}

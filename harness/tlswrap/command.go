package tlswrap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"

	"bench/internal/child"
)

// RunCommand relays the connections ln accepts while argv runs, and
// returns once it has exited and they are closed: so that one command
// line runs a load tool through the wrapper. The tool's output is
// stdout's and stderr's. It fails when the tool fails or when a
// connection failed to connect or handshake, naming the first.
func (w *Wrapper) RunCommand(ctx context.Context, ln net.Listener, argv []string, stdout, stderr io.Writer) error {
	if len(argv) == 0 {
		return errors.New("no command to run")
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- w.Serve(sctx, ln, nil) }()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	runErr := child.Run(cmd)
	stop()
	serveErr := <-served
	if n, first := w.Failed(); n > 0 {
		return errors.Join(fmt.Errorf("%d connections failed, the first: %w", n, first), runErr)
	}
	if runErr != nil {
		return fmt.Errorf("%s: %w", argv[0], runErr)
	}
	return serveErr
}

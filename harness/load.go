package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"bench/harness/host"
	"bench/scenarios"
)

// A run's load: its tool run on the client host (or its shares on the
// client hosts, share.go), its output kept and parsed.

// load runs the scenario's load tool on the client host for window, or
// its shares on the client hosts (loadShares), and parses what it
// printed, returning also when it exited. opened, where set, is told
// on this machine's clock when bench mix's warm-up begins; the
// measurement's Started is on this machine's clock too. measured: the
// window is one the row's figures come from, where client hosts' must
// agree (not a warm-up's). The tool's output is kept in dir.
func (s *runner) load(ctx context.Context, r RunSpec, t scenarios.Target, window time.Duration, dir string, opened func(time.Time), measured bool) (m scenarios.Measurement, ended time.Time, err error) {
	if s.host.Clients() > 1 {
		return s.loadShares(ctx, r, t, window, dir, opened, measured)
	}
	var watch func([]byte)
	if opened != nil {
		watch = func(l []byte) {
			if o, ok := scenarios.ParseMixOpened(l); ok {
				opened(s.host.ToLocal(host.RoleClient, o.Start))
			}
		}
	}
	m, ended, err = s.runLoad(ctx, r, t, window, dir, 0, watch)
	if !m.Started.IsZero() {
		m.Started = s.host.ToLocal(host.RoleClient, m.Started) // the tool's clock
	}
	return m, ended, err
}

// runLoad runs the scenario's load tool on the on-th client host for
// window and parses what it printed, returning also when it exited;
// watch, where set, is given each line of its output as it comes. The
// tool's output is kept in dir.
func (s *runner) runLoad(ctx context.Context, r RunSpec, t scenarios.Target, window time.Duration, dir string, on int, watch func([]byte)) (m scenarios.Measurement, ended time.Time, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return m, ended, err
	}
	inv, drv, err := scenarios.Build(r.Scenario, t, window, dir)
	if err != nil {
		return m, ended, err
	}
	if inv.Argv, err = selfArgv(inv.Argv); err != nil {
		return m, ended, err
	}
	inv.Argv = pinned(inv.Argv, r.pin)
	for name, data := range inv.Files {
		if err := writeFile(filepath.Join(dir, name), data); err != nil {
			return m, ended, err
		}
	}
	var out bytes.Buffer
	var stdout io.Writer = &out
	if watch != nil {
		stdout = &lines{w: &out, line: watch}
	}
	grace := inv.Grace
	if grace <= 0 {
		grace = 10 * time.Second
	}
	lctx, cancel := context.WithTimeout(ctx, window+grace)
	defer cancel()
	runErr := s.host.Run(lctx, host.RoleClient, host.ProcSpec{
		Argv: inv.Argv, Dir: dir, Env: inv.Env, Stdout: stdout,
		Log: filepath.Join(dir, drv.Tool()+".log"), Ended: &ended, On: on,
	})
	if ended.IsZero() {
		ended = time.Now() // stopped: it ran to now
	}
	_ = os.WriteFile(filepath.Join(dir, drv.Tool()+".out"), out.Bytes(), 0o644)
	m, err = drv.Parse(out.Bytes())
	if err == nil || errors.Is(err, scenarios.ErrServerBusy) {
		return m, ended, err // a busy server: the run is made again
	}
	switch {
	case errors.Is(lctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		return m, ended, fmt.Errorf("%s still ran %s after its %s window and was stopped", drv.Tool(), formatDuration(grace), window)
	case runErr != nil:
		// runErr names the program; the log's end says why.
		if tail := strings.TrimSpace(strings.Join(host.TailLines(filepath.Join(dir, drv.Tool()+".log"), 3), " | ")); tail != "" {
			return m, ended, fmt.Errorf("%w: %s", runErr, tail)
		}
		return m, ended, runErr
	}
	return m, ended, err // the parsers name the tool's output
}

// lines passes what is written to w on, and each line of it, once
// whole, to line: bench mix's lines that its connections are open.
type lines struct {
	w    io.Writer
	buf  []byte
	line func([]byte)
}

func (f *lines) Write(p []byte) (int, error) {
	f.buf = append(f.buf, p...)
	for {
		i := bytes.IndexByte(f.buf, '\n')
		if i < 0 {
			break
		}
		f.line(f.buf[:i])
		f.buf = f.buf[i+1:]
	}
	return f.w.Write(p)
}

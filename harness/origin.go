package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"bench/harness/host"
	"bench/scenarios"
)

// origin is the origin role of a session: nginx serving files from a tmpfs
// and iperf3 servers, in the origin namespace and cgroup.
type origin struct {
	host  *host.Host
	dir   string
	www   string
	procs []*host.Proc
	setup scenarios.OriginSetup
}

// startOrigin mounts a tmpfs for the origin's files, writes them and
// starts the servers, returning once each listener accepts. Over TLS the
// origin presents cert.
func startOrigin(ctx context.Context, h *host.Host, cert scenarios.OriginTLS) (o *origin, err error) {
	dir := filepath.Join(h.RunDir(), "origin")
	www := filepath.Join(dir, "www")
	if err := os.MkdirAll(www, 0o755); err != nil {
		return nil, fmt.Errorf("origin directory: %w", err)
	}
	o = &origin{host: h, dir: dir, www: www}
	defer func() {
		if err != nil {
			o.close()
			o = nil
		}
	}()
	if err := h.MountTmpfs(www, "64m"); err != nil {
		return nil, err
	}
	o.setup = scenarios.Origin(dir, h.Addrs().Origin, len(h.Layout().Origin), cert)
	for _, f := range o.setup.Files {
		if err := writeFile(filepath.Join(dir, f.Path), f.Data); err != nil {
			return nil, fmt.Errorf("origin file %s: %w", f.Path, err)
		}
	}
	for i, argv := range o.setup.Servers {
		if argv, err = selfArgv(argv); err != nil {
			return nil, err
		}
		p, err := h.Start(host.RoleOrigin, host.ProcSpec{
			Argv: argv,
			Dir:  dir,
			Log:  filepath.Join(dir, fmt.Sprintf("server%d-%s.log", i, filepath.Base(argv[0]))),
		})
		if err != nil {
			return nil, fmt.Errorf("start origin %s: %w", argv[0], err)
		}
		o.procs = append(o.procs, p)
	}
	if err := h.WaitReady(ctx, host.RoleProxy, o.setup.Ready, 10*time.Second); err != nil {
		return nil, fmt.Errorf("origin not ready: %w%s", err, o.logs())
	}
	return o, nil
}

// alive reports an error naming the first origin server that exited.
func (o *origin) alive() error {
	for _, p := range o.procs {
		select {
		case <-p.Done():
			return fmt.Errorf("origin server %s exited: %w%s", p, p.Exit(), "\n"+p.LogTail(5))
		default:
		}
	}
	return nil
}

func (o *origin) logs() string {
	s := ""
	for _, p := range o.procs {
		if t := p.LogTail(5); t != "" {
			s += "\n" + t
		}
	}
	return s
}

// close stops the servers and unmounts the tmpfs; it may be called twice.
func (o *origin) close() error {
	if o == nil {
		return nil
	}
	var errs []error
	for _, p := range o.procs {
		errs = append(errs, p.Stop(3*time.Second))
	}
	o.procs = nil
	if o.www != "" {
		errs = append(errs, host.Unmount(o.www))
		o.www = ""
	}
	return errors.Join(errs...)
}

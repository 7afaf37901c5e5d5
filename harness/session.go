package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"bench/harness/host"
	"bench/inputerr"
	"bench/proxies"
	"bench/results"
	"bench/scenarios"
)

// SessionConfig is a session as Configure resolved its settings on this
// machine.
type SessionConfig struct {
	results.Settings
	Scenarios []scenarios.Scenario
	Columns   []proxies.Column
	// OutDir holds the session's files:
	// <OutDir>/<machine slug>-<Session>.csv and beside it.
	OutDir      string
	Resume      bool // continue the session file, skipping runs it has
	Host        host.Config
	Found       Finder   // where the packaged proxies were looked for
	CommandLine []string // recorded in the metadata

	// Progress receives the plan, a line per run and warnings.
	Progress io.Writer
	// Live, when set, receives a progress line rewritten in place (a
	// terminal); otherwise progress is printed a line per run.
	Live bool
}

// runOverhead is the first guess of what a run costs beyond its warm-up
// and window (proxy start, readiness, stop); the ETA then uses the
// measured average.
const runOverhead = 1500 * time.Millisecond

// Session is a running session: its host, origin, output files and plan.
// Its runs are its runner's (run.go), which NewSession sets up.
type Session struct {
	runner
	csv   *results.Writer
	meta  *results.Meta
	sched *Schedule
	done  map[RunKey]bool
	notes []string // what the schedule says of its runs (Schedule.Notes)

	CSVPath  string
	MetaPath string
}

// ErrSessionExists is the error of a new session whose file is there.
var ErrSessionExists = errors.New("the session's file exists")

// SessionPaths returns the CSV and metadata paths of a session.
func SessionPaths(outDir, machine, id string) (csvPath, metaPath string) {
	base := filepath.Join(outDir, results.Slug(machine)+"-"+id+".csv")
	return base, results.MetaPath(base)
}

// runsDir is where a session keeps its runs' output, beside its CSV:
// <csv without .csv>.runs.
func runsDir(csvPath string) string { return results.RunsDir(csvPath) }

// NewSession sets up the host (namespaces, links, cgroups), the origin and
// the session files for the schedule of runs NewSchedule made, the one
// printed and checked, and checks every configuration it needs with the
// proxy's own checker. On error it undoes what it did.
func NewSession(ctx context.Context, sched *Schedule) (s *Session, err error) {
	cfg := sched.cfg
	s = &Session{runner: runner{cfg: cfg}}
	s.sched, s.done, s.notes = sched, sched.Done, sched.Notes()
	s.CSVPath, s.MetaPath = SessionPaths(cfg.OutDir, cfg.Machine, cfg.Session)
	s.OutputDir = runsDir(s.CSVPath)
	if !cfg.Resume {
		if _, err := os.Stat(s.CSVPath); err == nil {
			return nil, fmt.Errorf("%s: %w", s.CSVPath, ErrSessionExists)
		}
	}
	if err := makeOutDirs(cfg.OutDir, s.OutputDir); err != nil {
		return nil, err
	}
	// The returns below set s to nil before this runs: tear down what
	// was set up through a copy.
	setUp := s
	defer func() {
		if err != nil {
			err = errors.Join(err, setUp.Close())
			s = nil
		}
	}()
	if s.host, err = host.New(cfg.Host); err != nil {
		return nil, err
	}
	if sched.tunneled() { // the CPUs as the host placed the roles (across hosts, each host's)
		s.notes = append(s.notes, tunnelNote(s.host.Layout()))
	}
	if s.pki, err = proxies.GeneratePKI([]string{s.host.Addrs().ProxyClient, s.host.Addrs().ProxyOrigin, s.host.Addrs().Origin}); err != nil {
		return nil, fmt.Errorf("certificates: %w", err)
	}
	if err := s.writePKI(); err != nil {
		return nil, err
	}
	if err := s.prepareHandshakes(); err != nil {
		return nil, err
	}
	if err := s.validate(ctx); err != nil {
		return nil, err
	}
	// The origin presents the session's certificate too, which names
	// its address as well as the proxy's.
	if s.origin, err = startOrigin(ctx, s.host, s.originTLS()); err != nil {
		return nil, err
	}
	// The file first, exclusively for a new session, so that another
	// session that took the id meanwhile keeps its metadata.
	if cfg.Resume {
		s.csv, err = results.Append(s.CSVPath)
	} else if s.csv, err = results.Create(s.CSVPath); errors.Is(err, os.ErrExist) {
		err = fmt.Errorf("%s: %w", s.CSVPath, ErrSessionExists)
	}
	if err != nil {
		return nil, err
	}
	if s.meta, err = newMeta(cfg, s.host.Layout(), s.host.Placed(), s.notes, s.MetaPath, s.host.Output); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Session) writePKI() error {
	dir := s.tlsDir()
	for name, data := range map[string][]byte{
		// The proxy's certificate followed by its key, as haproxy wants
		// it; the CA that signed it and the origin's, which clients and
		// proxies beginning TLS verify them with.
		"server.pem": s.pki.CertKeyPEM(), "server.key": s.pki.ServerKey,
		"ca.pem": s.pki.CACert,
	} {
		if err := writeFile(filepath.Join(dir, name), data); err != nil {
			return fmt.Errorf("certificates: %w", err)
		}
	}
	return nil
}

// validate renders every column in every mode of the plan and runs the
// proxy's own checker on it, so that a bad configuration fails now.
func (s *Session) validate(ctx context.Context) error {
	seen := map[string]bool{}
	for _, r := range s.sched.Runs {
		ends, err := s.instances(r, filepath.Join(s.host.RunDir(), "check", results.Slug(r.Column.Name)+"-"+r.Scenario.Name))
		if err != nil {
			return err
		}
		for _, e := range ends {
			if err := s.check(ctx, r, e, seen); err != nil {
				return err
			}
		}
	}
	return nil
}

// check runs the proxy's own checker on an instance rendered for a run,
// once for each configuration.
func (s *Session) check(ctx context.Context, r RunSpec, e end, seen map[string]bool) error {
	inst, dir := e.inst, e.site.Dir
	key := r.Column.Name + "\x00" + string(e.mode) + "\x00" + fmt.Sprint(e.site.TLS, e.site.ClientSide)
	if seen[key] || inst.Validate == nil {
		return nil
	}
	seen[key] = true
	var out bytes.Buffer
	vctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	err := s.host.Run(vctx, e.role, host.ProcSpec{Argv: inst.Validate, Dir: dir, Log: filepath.Join(dir, "validate.log"), Stdout: &out})
	cancel()
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "validate.log"))
		return fmt.Errorf("column %q, scenario %s: %s says the configuration is wrong: %w\n%s",
			r.Column.Name, r.Scenario.Name, filepath.Base(inst.Validate[0]), err, strings.TrimSpace(out.String()+string(log)))
	}
	return nil
}

// makeOutDirs makes the session's folder out, where missing, and its runs
// folder in it, each 0755, and refuses them (an inputerr.Error) where another
// user could plant links in them (results.CheckDir).
func makeOutDirs(out, runs string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	if err := checkSetting(SettingOut, func(what string) error { return results.CheckDir(what, out) }); err != nil {
		return inputerr.Bad(err)
	}
	if err := os.Mkdir(runs, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("output directory: %w", err)
	}
	return inputerr.Bad(results.CheckDir("the runs folder", runs))
}

// writeFile writes a file the runs read, making its directory.
func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// chownTo gives the named user the files (and dir), for proxies that drop
// privileges and must write their pid and log files.
func chownTo(name string, paths ...string) error {
	u, err := user.Lookup(name)
	if err != nil {
		return fmt.Errorf("user %q: %w", name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	for _, p := range paths {
		if err := os.Chown(p, uid, gid); err != nil {
			return fmt.Errorf("chown %s to %s: %w", p, name, err)
		}
	}
	return nil
}

// Execute runs the plan, appending a row per run, until it ends or ctx is
// cancelled. A run that fails is recorded as failed and the session goes
// on; an error is returned only when the session itself cannot go on.
//
// With automatic repetitions, once the runs planned are done it plans the
// next repetition of the cells that need one from the session's file
// (Schedule.Extend), until none does.
func (s *Session) Execute(ctx context.Context) error {
	p := newProgress(s.cfg, s.sched.Runs, s.done)
	defer p.finish()
	for next := 0; ; {
		for ; next < len(s.sched.Runs); next++ {
			r := s.sched.Runs[next]
			if s.done[r.Key()] {
				continue
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			p.begin(r)
			if r.Scenario.Load.Sweep {
				if err := s.runSweep(ctx, r, p); err != nil {
					return err
				}
				if err := s.origin.alive(); err != nil {
					return err
				}
				continue
			}
			start := time.Now()
			row := s.run(ctx, r)
			if ctx.Err() != nil {
				// Interrupted: the run in flight is not recorded.
				return ctx.Err()
			}
			if err := s.csv.Write(row); err != nil {
				return err
			}
			p.end(r, row, time.Since(start))
			if s.lost != nil {
				return s.lost
			}
			if err := s.origin.alive(); err != nil {
				return err
			}
		}
		if !s.cfg.RepsAuto {
			break
		}
		rows, err := results.ReadFiles([]string{s.CSVPath})
		if err != nil {
			return err
		}
		more := s.sched.Extend(rows)
		if len(more) == 0 {
			break
		}
		p.add(more, s.done)
	}
	return s.meta.Finish(s.MetaPath)
}

// Close tears the session down: origin, host (processes, cgroups, links,
// namespaces, lock), files. It may be called more than once.
func (s *Session) Close() error {
	if s == nil {
		return nil
	}
	var errs []error
	errs = append(errs, s.origin.close())
	s.origin = nil
	if s.host != nil {
		errs = append(errs, s.host.Close())
		s.host = nil
	}
	errs = append(errs, s.csv.Close())
	return errors.Join(errs...)
}

package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"bench/harness/host"
	"bench/proxies"
	"bench/report/results"
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
type Session struct {
	cfg    SessionConfig
	host   *host.Host
	origin *origin
	csv    *results.Writer
	meta   *results.Meta
	pki    proxies.PKI
	sched  *Schedule
	done   map[RunKey]bool
	notes  []string // what the schedule says of its runs (Schedule.Notes)

	// handshakeTLS is stunnel's page's TLS as the installed OpenSSL can
	// do it, for the tls-handshake runs; handshakeNote says it, and
	// what stood in for what OpenSSL lacks.
	handshakeTLS  scenarios.TLSParams
	handshakeNote string

	CSVPath  string
	MetaPath string
	// OutputDir keeps what each run's load tool printed, and the proxy's
	// log of a failed run, beside the CSV: <csv without .csv>.runs/.
	OutputDir string
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
	s = &Session{cfg: cfg}
	s.sched, s.done, s.notes = sched, sched.Done, sched.Notes()
	s.CSVPath, s.MetaPath = SessionPaths(cfg.OutDir, cfg.Machine, cfg.Session)
	s.OutputDir = runsDir(s.CSVPath)
	if !cfg.Resume {
		if _, err := os.Stat(s.CSVPath); err == nil {
			return nil, fmt.Errorf("%s: %w", s.CSVPath, ErrSessionExists)
		}
	}
	if err := os.MkdirAll(s.OutputDir, 0o755); err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
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
	if s.pki, err = proxies.GeneratePKI([]string{host.ProxyClientAddr, host.ProxyOriginAddr, host.OriginAddr}); err != nil {
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
	if s.meta, err = newMeta(cfg, s.host.Layout(), s.notes, s.MetaPath); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Session) tlsDir() string { return filepath.Join(s.host.RunDir(), "tls") }

// originTLS is what the origin presents: the session's certificate.
func (s *Session) originTLS() scenarios.OriginTLS {
	return scenarios.OriginTLS{Cert: s.pki.ServerCert, Key: s.pki.ServerKey, CA: s.pki.CACert}
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

// siteFor is the environment of run r's instance in dir, with the TLS
// its shape holds it to: a tls-tunnel load restricts TLS to its cipher
// suite, and the handshakes run with stunnel's page's certificate,
// signatures, group and suite, as the installed OpenSSL can.
func (s *Session) siteFor(r RunSpec, dir string) proxies.Site {
	site := s.proxySite(r.Column, dir)
	switch r.shape().tls {
	case suiteTLS:
		site.TLS = scenarios.TLSParams{Key: scenarios.KeyECDSAP256, Suites: r.Scenario.Load.Suite}
	case handshakeTLS:
		site.TLS = s.handshakeTLS
		site.CertFile = filepath.Join(s.tlsDir(), "rsa.pem")
		site.KeyFile = filepath.Join(s.tlsDir(), "rsa.key")
	}
	return site
}

// proxySite is the environment of one instance of column c in dir: its
// connections sized to the descriptor limit it runs under (raised to the
// hard limit at start).
func (s *Session) proxySite(c proxies.Column, dir string) proxies.Site {
	hard, err := host.NofileLimit()
	if err != nil || hard == 0 {
		hard = 1024
	}
	limit := proxyLimit(hard)
	return proxies.Site{
		Dir:         dir,
		ClientSide:  host.ProxyClientAddr,
		OriginSide:  host.ProxyOriginAddr,
		Origin:      host.OriginAddr,
		MaxConns:    host.ProxyConns(limit, c.Group == results.Splice),
		Descriptors: int(limit),
		CertFile:    filepath.Join(s.tlsDir(), "server.pem"),
		KeyFile:     filepath.Join(s.tlsDir(), "server.key"),
		CAFile:      filepath.Join(s.tlsDir(), "ca.pem"),
	}
}

// proxyLimit is the descriptor limit a proxy's configuration is sized
// for under a hard limit: that limit, but no more than the catalog's
// largest load needs through a splicing proxy. Proxies allocate their
// tables for what they are told they may hold: under systemd's hard limit
// for services, 524288, nginx's worker_connections alone took 230 MB, and
// its peak memory would have measured the limit, not the load.
func proxyLimit(hard uint64) uint64 {
	most := 0
	for _, l := range catalogLoads() {
		most = max(most, l.Conns)
	}
	return min(hard, uint64(host.ProxyDescriptors(most, true)))
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

// end is one instance of a run's column: the proxy, or a tls-tunnel's
// two ends.
type end struct {
	role host.Role
	mode results.Mode // what the instance is rendered for
	site proxies.Site
	inst proxies.Instance
}

// instances renders the column of run r into dir: the proxy in the
// scenario's mode, or for a tls-tunnel its server end (the proxy ending
// TLS, in the proxy's namespace, in front of the origin's iperf3) and its
// client end (the same kind beginning TLS, in the client's namespace, on
// its loopback for iperf3's client, connecting to the server end).
func (s *Session) instances(r RunSpec, dir string) ([]end, error) {
	c := r.Column
	if !r.shape().tunnel {
		site := s.siteFor(r, filepath.Join(dir, "proxy"))
		inst, err := s.prepare(c, r.Scenario.Mode, site)
		return []end{{host.RoleProxy, r.Scenario.Mode, site, inst}}, err
	}
	server := s.siteFor(r, filepath.Join(dir, "proxy"))
	si, err := s.prepare(c, results.TLSTerm, server)
	if err != nil {
		return nil, err
	}
	client := s.siteFor(r, filepath.Join(dir, "peer"))
	client.ClientSide, client.OriginSide, client.Origin = scenarios.TunnelEntry, host.ClientAddr, host.ProxyClientAddr
	ci, err := s.prepare(c, results.TLSInit, client)
	if err != nil {
		return nil, err
	}
	return []end{{host.RoleProxy, results.TLSTerm, server, si}, {host.RoleClient, results.TLSInit, client, ci}}, nil
}

// prepare renders a column's configuration for a mode into site.Dir.
func (s *Session) prepare(c proxies.Column, m results.Mode, site proxies.Site) (proxies.Instance, error) {
	dir := site.Dir
	a, ok := proxies.Lookup(c.Kind)
	if !ok {
		return proxies.Instance{}, fmt.Errorf("column %q: unknown kind %q", c.Name, c.Kind)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return proxies.Instance{}, fmt.Errorf("column %q: %w", c.Name, err)
	}
	inst, err := a.Instance(c, m, site)
	if err != nil {
		return proxies.Instance{}, fmt.Errorf("column %q, mode %s: %w", c.Name, m, err)
	}
	for _, f := range inst.Files {
		p := filepath.Join(dir, f.Path)
		if err := writeFile(p, f.Data); err != nil {
			return inst, fmt.Errorf("column %q: %w", c.Name, err)
		}
		if f.Owner != "" {
			if err := chownTo(f.Owner, dir, p); err != nil {
				return inst, fmt.Errorf("column %q: %w", c.Name, err)
			}
		}
	}
	return inst, nil
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

// run does one run and returns its row, failed with the reason when
// something went wrong.
func (s *Session) run(ctx context.Context, r RunSpec) results.Row {
	row := s.rowOf(r)
	name := runName(r)
	dir := filepath.Join(s.host.RunDir(), "runs", name)
	err := s.runIn(ctx, r, dir, &row)
	for wait := time.Second; errors.Is(err, scenarios.ErrServerBusy) && wait <= busyWait && ctx.Err() == nil; wait *= 2 {
		// The origin's iperf3 had not yet seen the end of the run
		// before: the run is made again, from its start, once it is free.
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		os.RemoveAll(dir)
		row = s.rowOf(r)
		err = s.runIn(ctx, r, dir, &row)
	}
	s.keep(dir, name, err != nil)
	// The run directory is on /run, in memory: what is worth keeping is
	// now beside the CSV.
	os.RemoveAll(dir)
	if err != nil {
		row.Status = results.Failed
		row.Note = joinNotes(oneLine(err.Error()), r.Scaled())
		return row
	}
	row.Status = results.OK
	return row
}

// busyWait is the longest wait before a run is made again for an iperf3
// server still busy with the run before (1, 2, 4 and 8 s: 15 s in all).
const busyWait = 8 * time.Second

// rowOf is the row of run r before it is measured: its cell and
// repetition, failed.
func (s *Session) rowOf(r RunSpec) results.Row {
	return results.Row{
		Machine: s.cfg.Machine, Session: s.cfg.Session,
		Proxy: r.Column.Name, Kind: r.Column.Kind, Group: results.Group(r.Column.Group),
		Mode: results.Mode(r.Scenario.Mode), Load: r.Scenario.Load.Name, Rep: r.Rep,
		Status: results.Failed,
	}
}

// runName names a run's files: "0007-nginx-http-ka-1k-1".
func runName(r RunSpec) string {
	return fmt.Sprintf("%04d-%s-%s-%d", r.Index, results.Slug(r.Column.Name), r.Scenario.Name, r.Rep)
}

// keepConfig keeps beside the runs' output what run name's ends ran: each
// one's rendered configuration and its command line, as
// <name>.proxy.<file> and <name>.proxy.argv (a tunnel's client end as
// <name>.peer.*), so that a table can be reproduced from its files.
func (s *Session) keepConfig(name string, ends []end) {
	for _, e := range ends {
		who := "proxy"
		if e.role == host.RoleClient {
			who = "peer"
		}
		for _, f := range e.inst.Files {
			part := strings.ReplaceAll(f.Path, "/", ".")
			_ = os.WriteFile(filepath.Join(s.OutputDir, name+"."+who+"."+part), f.Data, 0o644)
		}
		if e.inst.Argv != nil {
			_ = os.WriteFile(filepath.Join(s.OutputDir, name+"."+who+".argv"), []byte(strings.Join(e.inst.Argv, " ")+"\n"), 0o644)
		}
	}
}

// keep copies what the run's load tool printed in the measured window
// into the session's output directory, with the proxy's log when the run
// failed, so that every figure of the CSV can be traced to the tool's own
// words after the run directory is gone.
func (s *Session) keep(dir, name string, failed bool) {
	files, _ := filepath.Glob(filepath.Join(dir, "load", "*.out"))
	if failed {
		more, _ := filepath.Glob(filepath.Join(dir, "*", "*.log"))
		files = append(files, more...)
		files = append(files, filepath.Join(dir, "proxy.log"))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil || len(b) == 0 {
			continue
		}
		part := filepath.Base(filepath.Dir(f)) + "." + filepath.Base(f)
		if filepath.Dir(f) == dir {
			part = filepath.Base(f)
		}
		_ = os.WriteFile(filepath.Join(s.OutputDir, name+"."+part), b, 0o644)
	}
}

// runIn starts run r's column in dir, measures it and fills its row;
// the column's ends are stopped before it returns.
func (s *Session) runIn(ctx context.Context, r RunSpec, dir string, row *results.Row) error {
	st, err := s.start(ctx, r, dir)
	defer st.stop()
	if err != nil {
		return err
	}
	x, err := s.measure(ctx, r, st, dir)
	if err != nil {
		return err
	}
	x.fill(row, r)
	if err := x.completed(); err != nil {
		row.Note = "" // the reason is the note of a failed run
		return err
	}
	s.keepData(runName(r), row, x.m, x.sample, x.profile)
	return nil
}

// started is a run's column as start left it.
type started struct {
	ends  []end
	proxy *host.Proc // the first end's process; nil where it runs none (the baseline)
	stops []func()   // stop each process started, in the order they started
}

// stop stops the processes started, the last one first.
func (st *started) stop() {
	for i := len(st.stops) - 1; i >= 0; i-- {
		st.stops[i]()
	}
}

// start renders run r's column into dir, keeps its configuration beside
// the runs' output and starts its ends, each one ready before the next:
// the proxy (or a tunnel's server end) in the proxy's namespace, a
// tunnel's client end in the client's, on its own CPU. What it started is
// in the result, also on error, for stop.
func (s *Session) start(ctx context.Context, r RunSpec, dir string) (*started, error) {
	st := &started{}
	ends, err := s.instances(r, dir)
	if err != nil {
		return st, err
	}
	st.ends = ends
	s.keepConfig(runName(r), ends)
	if err := s.host.SetForwarding(ends[0].inst.Forward); err != nil {
		return st, err
	}
	// The proxy's peak memory counts from before it starts (on cgroup v2
	// the reset needs the cgroup empty).
	if err := s.host.ResetPeakMemory(); err != nil {
		return st, err
	}
	peerCPUs, _ := tunnelCPUs(s.host.Layout())
	for i, e := range ends {
		if e.inst.Argv == nil {
			continue
		}
		argv, log := e.inst.Argv, filepath.Join(dir, "proxy.log")
		if e.role == host.RoleClient {
			argv, log = pinned(argv, peerCPUs), filepath.Join(dir, "peer.log")
		}
		p, err := s.host.Start(e.role, host.ProcSpec{Argv: argv, Dir: e.site.Dir, Log: log})
		if err != nil {
			return st, fmt.Errorf("start %s: %w", r.Column.Name, err)
		}
		grace := e.inst.StopGrace
		if grace <= 0 {
			grace = 5 * time.Second
		}
		st.stops = append(st.stops, func() { p.Stop(grace) })
		if i == 0 {
			st.proxy = p
		}
		if err := s.host.WaitReady(ctx, host.RoleClient, readyProbes(e.inst.Ready), 15*time.Second); err != nil {
			return st, fmt.Errorf("%s not ready: %w; log: %s", r.Column.Name, err, p.LogTail(5))
		}
		if e.role != host.RoleProxy {
			continue
		}
		if err := s.host.WaitAccepted(ctx, e.role, readyProbes(e.inst.Ready), 15*time.Second); err != nil {
			return st, fmt.Errorf("%s not ready: %w; log: %s", r.Column.Name, err, p.LogTail(5))
		}
	}
	// The pipes the proxy holds once it has taken the probes' connections
	// are its own; those it opens under load are the splicing's. (Its
	// listeners answer the probes before it runs: haproxy makes its
	// thread's wake-up pipe after binding, and on a loaded machine that
	// pipe, noted too early, read as a splice of haproxy's copy column.)
	s.host.ProxyReady()
	return st, nil
}

// measured is what measure took of a run.
type measured struct {
	m       scenarios.Measurement // the load tool's figures
	started time.Time             // the start of the tool's window
	sample  figures               // the roles' CPU (and the proxy's pipes, throttling) over that window
	peak    int64                 // the proxy's peak memory; 0 for the baseline, which runs none
	tlsNote string                // what TLS the proxy negotiated, where the run's shape reads it back
	profile *results.ProfileNote  // the proxy's CPU profile, or why it has none; nil where the session profiles none
}

// target is where the load of r goes through the column st started, and
// the CA its TLS clients verify the TLS ends with.
func (s *Session) target(r RunSpec, st *started) scenarios.Target {
	t := scenarios.TargetFor(r.Scenario.Mode, st.ends[0].inst.Forward, host.ProxyClientAddr, host.OriginAddr)
	t.CA = filepath.Join(s.tlsDir(), "ca.pem")
	return t
}

// measure runs the load against the column st started: it reads back the
// TLS the proxy negotiated where the run's shape asks, warms up, runs the
// load with the sampler on, and checks that the proxy lived through it.
func (s *Session) measure(ctx context.Context, r RunSpec, st *started, dir string) (x measured, err error) {
	sh := r.shape()
	target := s.target(r, st)
	if sh.negotiates {
		if x.tlsNote, err = s.probe(ctx, r, target, st.ends[0].site.TLS, filepath.Join(dir, "probe")); err != nil {
			return x, err
		}
	}
	if sh.pinLoad {
		_, r.pin = tunnelCPUs(s.host.Layout())
	}
	method := s.cfg.MethodOf(r.Scenario.Mode)
	warmup, itself := time.Duration(method.Warmup), time.Duration(0)
	if scenarios.WarmsUp(r.Scenario) {
		// bench mix warms up on the connections it then measures with.
		r.Scenario.Load.Warmup, itself, warmup = warmup, warmup, 0
	}
	if warmup > 0 {
		if _, _, err := s.load(ctx, r, target, warmup, filepath.Join(dir, "warmup"), nil); err != nil {
			return x, fmt.Errorf("warm-up: %w", err)
		}
	}
	// The sampler's first and last polls of the threads go inside the
	// tool's window: bench mix's starts after its own warm-up, which
	// begins once its connections are open, as it says (MixOpened).
	plan := host.Plan{Warmup: itself, Length: time.Duration(method.Window), Deferred: scenarios.WarmsUp(r.Scenario)}
	// perf starts before the sampler, its events off until the window.
	prof := s.startProfile(st, filepath.Join(dir, "perf"))
	defer prof.close()
	sampler, err := s.host.StartSampling(plan)
	if err != nil {
		return x, err
	}
	var opened func(time.Time)
	if plan.Deferred {
		opened = func(at time.Time) {
			sampler.Begin(at)
			prof.begin(at.Add(itself))
		}
	} else {
		prof.begin(time.Now())
	}
	m, ended, loadErr := s.load(ctx, r, target, plan.Length, filepath.Join(dir, "load"), opened)
	prof.end(s.host)
	if loadErr != nil {
		sampler.Stop()
		return x, loadErr
	}
	tls := x.tlsNote
	x, err = s.closeWindow(r, st, sampler, m, ended)
	x.tlsNote = tls
	x.profile = s.keepProfile(ctx, prof, runName(r))
	return x, err
}

// closeWindow takes the sampler's figures of the tool's window of m, the
// proxy's peak memory, and checks that the proxy lived through it. The
// CPU figures cover the tool's own window, not its start-up, connection
// set-up and report: the one it reports (bench mix), or the one that
// ended when it exited, at ended.
func (s *Session) closeWindow(r RunSpec, st *started, sampler *host.Sampler, m scenarios.Measurement, ended time.Time) (x measured, err error) {
	window := time.Duration(m.Seconds * float64(time.Second))
	if !m.Started.IsZero() {
		ended = m.Started.Add(window)
	}
	w, err := sampler.StopWindow(ended, window)
	if err != nil {
		return x, err
	}
	if p := st.proxy; p != nil {
		select {
		case <-p.Done():
			return x, fmt.Errorf("%s exited during the run: %v; log: %s", r.Column.Name, p.Err(), p.LogTail(5))
		default:
		}
	}
	peak, err := s.host.PeakMemory()
	if err != nil {
		return x, err
	}
	if st.ends[0].inst.Forward {
		peak = 0
	}
	x.m, x.started, x.sample, x.peak = m, ended.Add(-window), figuresOf(w), peak
	return x, nil
}

// completed fails a run in which no exchange completed; its row keeps
// the figures.
func (x measured) completed() error {
	if m := x.m; m.Requests == 0 && m.Bytes == 0 {
		return fmt.Errorf("no exchange completed (%d errors, %d timeouts)", m.Errors, m.Timeouts)
	}
	return nil
}

// fill copies what was measured into run r's row.
func (x measured) fill(row *results.Row, r RunSpec) {
	m, sample := x.m, x.sample
	row.Started = x.started.UTC()
	row.Seconds = m.Seconds
	row.Requests, row.Bytes, row.Errors, row.Timeouts = m.Requests, m.Bytes, m.Errors, m.Timeouts
	row.ClosedReads, row.HasClosed = m.Closed, m.HasClosed
	row.P50Ms, row.P99Ms, row.HasLatency = m.P50Ms, m.P99Ms, m.HasLatency
	row.P999Ms, row.HasP999 = m.P999Ms, m.HasP999
	row.CPUProxy, row.CPUClient, row.CPUOrigin = sample.cpu[host.RoleProxy], sample.cpu[host.RoleClient], sample.cpu[host.RoleOrigin]
	row.BusyProxy, row.BusyClient, row.BusyOrigin = sample.busy[host.RoleProxy], sample.busy[host.RoleClient], sample.busy[host.RoleOrigin]
	row.ThreadProxy, row.ThreadClient, row.ThreadOrigin = sample.thread[host.RoleProxy], sample.thread[host.RoleClient], sample.thread[host.RoleOrigin]
	row.Bound = sample.bound
	row.Throttling = sample.quota > 0
	row.ThrottledPeriods, row.ThrottledS = sample.throttledPeriods, sample.throttled
	// A window whose pipes were not counted in it is unknown, not unspliced.
	row.SplicePipes, row.HasPipes = int64(sample.pipes), sample.counted
	row.PeakMemBytes = x.peak
	row.Note = joinNotes(r.Scaled(), x.tlsNote, errorNote(m, r.Scenario.Load.Name), halfCloseNote(r.Column, m), m.Note)
}

// halfCloseNote says why the column's proxy cuts answers, where its
// adapter says it does (proxies.HalfCloseCutter) and exchanges that
// half-closed failed in the run, so that the tables' reader knows what
// those failures are.
func halfCloseNote(c proxies.Column, m scenarios.Measurement) string {
	if m.HalfCloseFailed == 0 {
		return ""
	}
	a, _ := proxies.Lookup(c.Kind)
	cutter, ok := a.(proxies.HalfCloseCutter)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d of the failed exchanges half-closed: %s", m.HalfCloseFailed, cutter.HalfCloseCut())
}

// selfArgv is argv with bench itself (scenarios.ToolBench: bench mix, the
// mix's load and origin) named by this program's path.
func selfArgv(argv []string) ([]string, error) {
	if argv[0] != scenarios.ToolBench {
		return argv, nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find bench's own executable: %w", err)
	}
	return append([]string{self}, argv[1:]...), nil
}

// joinNotes joins the notes that are not empty.
func joinNotes(notes ...string) string {
	var out []string
	for _, n := range notes {
		if n != "" {
			out = append(out, n)
		}
	}
	return strings.Join(out, "; ")
}

// readyProbes leaves out of the readiness probes the relay listeners in
// front of the origin's iperf3 server when others are left: a probe there
// is relayed to iperf3 as a test that never starts, which iperf3 (it
// serves one test at a time) may still be tearing down when the warm-up
// connects. The warm-up then tells whether that listener is up.
func readyProbes(addrs []string) []string {
	var keep []string
	for _, a := range addrs {
		_, port, err := net.SplitHostPort(a)
		if err == nil && (port == strconv.Itoa(scenarios.PortIperf) || port == strconv.Itoa(scenarios.PortIperfTLS)) {
			continue
		}
		keep = append(keep, a)
	}
	if len(keep) == 0 {
		return addrs
	}
	return keep
}

// load runs the scenario's load tool in the client namespace for window
// and parses what it printed, returning also when it exited. The tool's
// output is kept in dir.
func (s *Session) load(ctx context.Context, r RunSpec, t scenarios.Target, window time.Duration, dir string, opened func(time.Time)) (m scenarios.Measurement, ended time.Time, err error) {
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
	if opened != nil {
		stdout = &firstLine{w: &out, line: func(l []byte) {
			if o, ok := scenarios.ParseMixOpened(l); ok {
				opened(o.Start)
			}
		}}
	}
	grace := inv.Grace
	if grace <= 0 {
		grace = 10 * time.Second
	}
	lctx, cancel := context.WithTimeout(ctx, window+grace)
	defer cancel()
	runErr := s.host.Run(lctx, host.RoleClient, host.ProcSpec{
		Argv: inv.Argv, Dir: dir, Env: inv.Env, Stdout: stdout,
		Log: filepath.Join(dir, drv.Tool()+".log"),
	})
	ended = time.Now()
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

// errorNote speaks of a run's errors when they are more than 1% of its
// exchanges, so that the tables' reader can tell a fast proxy from a fast
// failing one, or when they are no failed exchanges (results.Row.Closed:
// wrk's reads on connections a proxy closed after a complete answer, as
// tinyproxy does), which it names so. It gives the counts, not a verdict.
func errorNote(m scenarios.Measurement, load string) string {
	r := results.Row{Load: load, Requests: m.Requests, Errors: m.Errors, Timeouts: m.Timeouts, ClosedReads: m.Closed, HasClosed: m.HasClosed}
	failed, closed := r.Failures(), r.Closed()
	if m.Requests == 0 || (closed == 0 && failed*100 <= m.Requests+failed) {
		return ""
	}
	errs := fmt.Sprintf("%d errors", m.Errors)
	switch {
	case closed > 0 && closed == m.Errors:
		errs += " (reads on connections the proxy closed after its answer, not failed exchanges)"
	case closed > 0:
		errs += fmt.Sprintf(" (%d of them reads on connections the proxy closed after its answer, not failed exchanges)", closed)
	}
	note := fmt.Sprintf("%s and %d timeouts beside %d completed exchanges", errs, m.Timeouts, m.Requests)
	if m.Detail != "" {
		note += ": " + m.Detail
	}
	return note
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	const most = 400 // bytes
	if len(s) <= most {
		return s
	}
	cut := most
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
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

// firstLine passes what is written to w on, and the first line of it,
// once whole, to line: bench mix's line that its connections are open.
type firstLine struct {
	w    io.Writer
	buf  []byte
	done bool
	line func([]byte)
}

func (f *firstLine) Write(p []byte) (int, error) {
	if !f.done {
		f.buf = append(f.buf, p...)
		if i := bytes.IndexByte(f.buf, '\n'); i >= 0 {
			f.done = true
			f.line(f.buf[:i])
			f.buf = nil
		}
	}
	return f.w.Write(p)
}

package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"bench/harness/host"
	"bench/proxies"
	"bench/results"
	"bench/scenarios"
)

// runner does the session's runs, one at a time: it renders a run's
// column, starts its ends, runs the load with the sampler on and fills
// the run's row, keeping what the tools printed beside the session's
// file. It holds what a run needs of the session, set up by NewSession;
// a run never goes back into the session's setup.
type runner struct {
	cfg    SessionConfig
	host   *host.Host
	origin *origin
	pki    proxies.PKI
	// handshakeTLS is stunnel's page's TLS as the installed OpenSSL can
	// do it, for the tls-handshake runs; handshakeNote says it, and
	// what stood in for what OpenSSL lacks.
	handshakeTLS  scenarios.TLSParams
	handshakeNote string
	// OutputDir keeps what each run's load tool printed, and the proxy's
	// log of a failed run, beside the CSV: <csv without .csv>.runs/.
	OutputDir string
	// lost is why the last run failed where a host of its own was lost
	// (host.ErrHostLost): the session stops after it.
	lost error
}

func (s *runner) tlsDir() string { return filepath.Join(s.host.RunDir(), "tls") }

// originTLS is what the origin presents: the session's certificate.
func (s *runner) originTLS() scenarios.OriginTLS {
	return scenarios.OriginTLS{Cert: s.pki.ServerCert, Key: s.pki.ServerKey, CA: s.pki.CACert}
}

// run does one run and returns its row, failed with the reason when
// something went wrong.
func (s *runner) run(ctx context.Context, r RunSpec) results.Row {
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
		s.host.RemoveAll(dir)
		row = s.rowOf(r)
		err = s.runIn(ctx, r, dir, &row)
	}
	if errors.Is(err, host.ErrHostLost) {
		s.lost = err
	}
	s.keep(dir, name, err)
	// The run directory is on /run, in memory: what is worth keeping is
	// now beside the CSV.
	s.host.RemoveAll(dir)
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
func (s *runner) rowOf(r RunSpec) results.Row {
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
func (s *runner) keepConfig(name string, ends []end) {
	for _, e := range ends {
		who := "proxy"
		if e.role == host.RoleClient {
			who = "peer"
		}
		for _, f := range e.inst.Files {
			part := strings.ReplaceAll(f.Path, "/", ".")
			_ = results.WriteFile(filepath.Join(s.OutputDir, name+"."+who+"."+part), f.Data)
		}
		if e.inst.Argv != nil {
			_ = results.WriteFile(filepath.Join(s.OutputDir, name+"."+who+".argv"), []byte(strings.Join(e.inst.Argv, " ")+"\n"))
		}
	}
}

// keep copies what the run's load tool printed in the measured window
// into the session's output directory, with the proxy's log when the run
// failed (runErr, nil for a run that did not), so that every figure of
// the CSV can be traced to the tool's own words after the run directory
// is gone.
func (s *runner) keep(dir, name string, runErr error) {
	// a load split over client hosts: each host's in load/client-N
	files, _ := filepath.Glob(filepath.Join(dir, "load", "*.out"))
	shares, _ := filepath.Glob(filepath.Join(dir, "load", sharePrefix+"*", "*.out"))
	files = append(files, shares...)
	if runErr != nil {
		more, _ := filepath.Glob(filepath.Join(dir, "*", "*.log"))
		shares, _ := filepath.Glob(filepath.Join(dir, "*", sharePrefix+"*", "*.log"))
		files = append(files, append(more, shares...)...)
		files = append(files, filepath.Join(dir, "proxy.log"))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil || len(b) == 0 {
			continue
		}
		// its path in the run's folder, dotted: load.wrk.out,
		// load.client-2.wrk.out
		rel, _ := filepath.Rel(dir, f)
		part := strings.ReplaceAll(rel, string(filepath.Separator), ".")
		_ = results.WriteFile(filepath.Join(s.OutputDir, name+"."+part), b)
	}
}

// runIn starts run r's column in dir, measures it and fills its row;
// the column's ends are stopped before it returns.
func (s *runner) runIn(ctx context.Context, r RunSpec, dir string, row *results.Row) error {
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
	if err := completed(row); err != nil {
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
func (s *runner) start(ctx context.Context, r RunSpec, dir string) (*started, error) {
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
	lagNote string                // the client hosts whose share lagged, served less than the others
}

// target is where the load of r goes through the column st started, and
// the CA its TLS clients verify the TLS ends with.
func (s *runner) target(r RunSpec, st *started) scenarios.Target {
	t := scenarios.TargetFor(r.Scenario.Mode, st.ends[0].inst.Forward, s.host.Addrs().ProxyClient, s.host.Addrs().Origin)
	t.CA = filepath.Join(s.tlsDir(), "ca.pem")
	return t
}

// measure runs the load against the column st started: it reads back the
// TLS the proxy negotiated where the run's shape asks, warms up, runs the
// load with the sampler on, and checks that the proxy lived through it.
func (s *runner) measure(ctx context.Context, r RunSpec, st *started, dir string) (x measured, err error) {
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
		if _, _, err := s.load(ctx, r, target, warmup, filepath.Join(dir, "warmup"), nil, false); err != nil {
			return x, fmt.Errorf("warm-up: %w", err)
		}
	}
	// The sampler's first and last polls of the threads go inside the
	// tool's window: bench mix's starts after its own warm-up, which
	// begins once its connections are open, as it says (MixOpened).
	// So do the shares of a load split over client hosts, from the start
	// they share once every host is ready (loadShares).
	plan := host.Plan{Warmup: itself, Length: time.Duration(method.Window), Deferred: scenarios.WarmsUp(r.Scenario) || s.host.Clients() > 1}
	if err := s.alignClocks(ctx, plan.Length); err != nil {
		return x, err
	}
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
	m, ended, loadErr := s.load(ctx, r, target, plan.Length, filepath.Join(dir, "load"), opened, true)
	prof.end(s.host)
	if loadErr != nil {
		sampler.Stop()
		return x, loadErr
	}
	tls := x.tlsNote
	x, err = s.closeWindow(r, st, sampler, m, ended)
	x.tlsNote = tls
	if err == nil {
		x.lagNote, err = lagged(m.Lags, x.sample.clients)
	}
	x.profile = s.keepProfile(ctx, prof, runName(r))
	return x, err
}

// ClockShare is the most of a window the hosts' clocks may be unknown
// by: a session over hosts of their own places each host's window by its
// clock's offset, measured before each run.
const ClockShare = 0.01

// alignClocks measures the hosts' clocks anew, where the roles are on
// hosts of their own, and fails the run where two hosts' windows could
// be apart by more than ClockShare of its window.
func (s *runner) alignClocks(ctx context.Context, window time.Duration) error {
	if !s.host.Spread() {
		return nil
	}
	unknown, err := s.host.Clocks(ctx)
	if err != nil {
		return err
	}
	if float64(unknown) > ClockShare*float64(window) {
		return fmt.Errorf("the hosts' clocks are known within %v, more than %g%% of the %v window: their windows could differ by that much", unknown, ClockShare*100, window)
	}
	return nil
}

// closeWindow takes the sampler's figures of the tool's window of m, the
// proxy's peak memory, and checks that the proxy lived through it. The
// CPU figures cover the tool's own window, not its start-up, connection
// set-up and report: the one it reports (bench mix), or the one that
// ended when it exited, at ended.
func (s *runner) closeWindow(r RunSpec, st *started, sampler *host.Sampler, m scenarios.Measurement, ended time.Time) (x measured, err error) {
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
			return x, fmt.Errorf("%s exited during the run: %w; log: %s", r.Column.Name, p.Exit(), p.LogTail(5))
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

// completed fails a run that measured nothing its figure counts
// (results.Row.Measured: no exchange completed, no byte moved); its row
// keeps the figures.
func completed(row *results.Row) error {
	if !row.Measured() {
		return fmt.Errorf("no exchange completed (%d errors, %d timeouts)", row.Errors, row.Timeouts)
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
	row.Note = joinNotes(r.Scaled(), x.tlsNote, errorNote(m, r.Scenario.Load.Name), halfCloseNote(r.Column, m), x.lagNote, m.Note)
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
	return results.HalfCloseNote(m.HalfCloseFailed, cutter.HalfCloseCut())
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

// joinNotes joins the notes that are not empty into a row's note, as the
// reader of the CSV takes it (results.CleanNote): a tool's output, in an
// error, can hold lines, tabs and a terminal's escapes.
func joinNotes(notes ...string) string {
	var out []string
	for _, n := range notes {
		if n != "" {
			out = append(out, n)
		}
	}
	return results.CleanNote(strings.Join(out, "; "))
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

// oneLine is s on one line and at most 400 bytes, cut at a character:
// an error's text as a failed run's note.
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

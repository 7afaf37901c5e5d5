package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/rpc"
	"net/rpc/jsonrpc"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
)

// An agent is bench on a host of its own, which a session starts over
// ssh (Deploy) as `bench agent DIR`, DIR the private folder its binary
// was copied to. It serves the session's calls (net/rpc's JSON codec on
// its standard input and output): it places the roles the host holds
// (a Host of its own: their cgroups, no namespaces), starts and stops
// their processes, writes and reads their files. When the calls end,
// however they end (the session closes its input, the connection drops
// and sshd closes it, no call comes for AgentIdle, a signal), it tears
// down all it made: its processes, which also die with it (their
// parent-death signal), their cgroups, its run directory, and DIR with
// the binary in it. Nothing of the session stays on the host.

// AgentCommand is the subcommand of bench that runs an agent.
const AgentCommand = "agent"

// The session calls the agent at least every AgentPing (Remote's
// heartbeat); an agent that hears nothing for AgentIdle takes the session
// for lost and tears down.
const (
	AgentPing = time.Second
	AgentIdle = 5 * time.Second
)

// agentName is the name of an agent's folder past the prefix, and the
// pattern of the folder mktemp makes.
const agentName = "agent."

// agentBinary is the name of the binary in an agent's folder.
const agentBinary = "bench"

// maxStdout bounds what the agent keeps of a process's standard output:
// a load tool's report is a few kilobytes.
const maxStdout = 16 << 20

// Agent is the agent's side of the calls. Its exported methods are the
// calls (net/rpc's form: args, a reply pointer, an error).
type Agent struct {
	dir  string
	last atomic.Int64 // when a call last came, in Unix nanoseconds

	mu       sync.Mutex
	host     *Host
	root     *os.Root // the run directory's (agentfiles.go)
	put      map[string]fileStamp
	procs    map[int]*agentProc
	samplers map[int]*Sampler
	perf     *Perf // its perf record (agentperf.go)
	next     int
}

// agentProc is a process the agent started, and what it printed.
type agentProc struct {
	p   *Proc
	out *cappedBuffer
}

// cappedBuffer is a process's standard output, up to maxStdout.
type cappedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	// grew, where a waiter made it, is closed by the next write that
	// adds to buf (longer).
	grew chan struct{}
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := maxStdout - b.buf.Len(); room > 0 && len(p) > 0 {
		b.buf.Write(p[:min(len(p), room)])
		if b.grew != nil {
			close(b.grew)
			b.grew = nil
		}
	}
	return len(p), nil
}

// longer is closed once the buffer holds more than n bytes: at once
// where it already does.
func (b *cappedBuffer) longer(n int) <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len() > n {
		c := make(chan struct{})
		close(c)
		return c
	}
	if b.grew == nil {
		b.grew = make(chan struct{})
	}
	return b.grew
}

func (b *cappedBuffer) bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

// ServeAgent serves a session's calls on in and out until they end, then
// tears down what the calls made and removes dir (the agent's folder),
// and returns. It also ends on SIGTERM, SIGINT or SIGHUP, and when no
// call came for AgentIdle.
func ServeAgent(in io.Reader, out io.Writer, dir string) error {
	// Its output gone with the connection, a write fails instead of
	// killing it before it tears down.
	signal.Ignore(syscall.SIGPIPE)
	a := &Agent{dir: dir, procs: map[int]*agentProc{}, put: map[string]fileStamp{}}
	a.last.Store(time.Now().UnixNano())
	srv := rpc.NewServer()
	if err := srv.RegisterName("Agent", a); err != nil {
		return err
	}
	ended := make(chan string, 3)
	go func() {
		srv.ServeCodec(jsonrpc.NewServerCodec(readWriter{in, out, a}))
		ended <- "the session closed the connection"
	}()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() { ended <- "signal " + (<-sigs).String() }()
	go func() {
		for {
			time.Sleep(AgentIdle / 5)
			if time.Since(time.Unix(0, a.last.Load())) > AgentIdle {
				ended <- fmt.Sprintf("no call for %v", AgentIdle)
				return
			}
		}
	}()
	why := <-ended
	err := a.teardown()
	fmt.Fprintf(os.Stderr, "bench agent: %s: torn down\n", why)
	return err
}

// readWriter is the agent's standard input and output as the codec's
// connection; each read is a call's sign of life.
type readWriter struct {
	in  io.Reader
	out io.Writer
	a   *Agent
}

func (rw readWriter) Read(p []byte) (int, error) {
	n, err := rw.in.Read(p)
	if n > 0 {
		rw.a.last.Store(time.Now().UnixNano())
	}
	return n, err
}

func (rw readWriter) Write(p []byte) (int, error) { return rw.out.Write(p) }
func (rw readWriter) Close() error                { return nil }

// teardown closes the host (its processes, cgroups and run directory) and
// removes the agent's folder.
func (a *Agent) teardown() error {
	err := a.closeHost()
	if a.dir != "" {
		err = errors.Join(err, os.RemoveAll(a.dir))
	}
	return err
}

// AgentFacts is what a host says of itself to a session.
type AgentFacts struct {
	Hostname string
	Kernel   string
	Online   []int
	PID      int // the agent's
	UID      int
	Machine  Machine
}

// Facts answers the host's facts.
func (a *Agent) Facts(_ struct{}, f *AgentFacts) error {
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		return err
	}
	online, err := OnlineCPUs()
	if err != nil {
		return err
	}
	f.Hostname, _ = os.Hostname()
	f.Kernel = strings.Join([]string{utsString(u.Sysname[:]), utsString(u.Release[:]), utsString(u.Machine[:])}, " ")
	f.Online, f.PID, f.UID = online, os.Getpid(), os.Geteuid()
	f.Machine = DescribeMachine()
	return nil
}

func utsString(b []int8) string {
	s := make([]byte, 0, len(b))
	for _, c := range b {
		if c == 0 {
			break
		}
		s = append(s, byte(c))
	}
	return string(s)
}

// Ping answers the host's clock, in Unix nanoseconds: the session's
// heartbeat, and its measure of the clocks' offset.
func (a *Agent) Ping(_ struct{}, now *int64) error {
	*now = time.Now().UnixNano()
	return nil
}

// AgentOpen places the roles a host holds: a Host of its own with the
// session's prefix, its layout (the held roles' CPUs), the proxy's
// quota, and the run directory ("" for a new one; the session's own
// path, so that its files have the same paths on every host).
type AgentOpen struct {
	Prefix string
	Layout Layout
	Quota  float64
	RunDir string
}

// Open places the host's roles and answers its run directory, beneath
// which every file of the session's on the host goes; the run directory
// is the host's to remove, named or not.
func (a *Agent) Open(o AgentOpen, runDir *string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.host != nil {
		return errors.New("the host's roles are placed already")
	}
	if o.RunDir != "" {
		if err := validatePrefix(o.Prefix); err != nil {
			return err
		}
		if rest, ok := strings.CutPrefix(o.RunDir, filepath.Join(runBase, o.Prefix)); !ok || !runDirRE.MatchString(rest) {
			return fmt.Errorf("run directory %q: not one of prefix %s's", o.RunDir, o.Prefix)
		}
	}
	h, err := New(Config{Prefix: o.Prefix, Layout: o.Layout, ProxyCPUQuota: o.Quota, Own: true, RunDir: o.RunDir,
		scope: agentScope(o.Prefix, os.Getpid())})
	if err != nil {
		return err
	}
	if !h.ownRun {
		h.ownRun = true
		if err := h.saveState(); err != nil {
			return errors.Join(err, h.Close())
		}
	}
	a.host, *runDir = h, h.RunDir()
	return nil
}

// opened is the agent's host, or an error before Open.
func (a *Agent) opened() (*Host, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.host == nil {
		return nil, errors.New("the host's roles are not placed (no Open)")
	}
	return a.host, nil
}

// AgentStart is a process to start in a role the host holds: ProcSpec's
// fields that cross the connection (its standard output is kept, for
// Wait and Stop to answer).
type AgentStart struct {
	Role Role
	Argv []string
	Dir  string
	Log  string
	Env  []string
	User string
}

// Start starts a process and answers its number for Wait and Stop.
func (a *Agent) Start(s AgentStart, id *int) error {
	root, h, err := a.rooted()
	if err != nil {
		return err
	}
	// its folder and its log's a folder, neither a link; the log a file
	// or none yet ("" for each: the run directory, a log of its own)
	if s.Dir != "" {
		if err := plainDir(root, h, s.Dir); err != nil {
			return err
		}
	}
	if s.Log != "" {
		if err := plainDir(root, h, filepath.Dir(s.Log)); err != nil {
			return err
		}
		if rel, err := relPath(h.RunDir(), s.Log, false); err != nil {
			return err
		} else if info, err := root.Lstat(rel); err == nil && !info.Mode().IsRegular() {
			return fmt.Errorf("%s: not a file", s.Log)
		}
	}
	out := &cappedBuffer{}
	p, err := h.Start(s.Role, ProcSpec{Argv: s.Argv, Dir: s.Dir, Log: s.Log, Env: s.Env, User: s.User, Stdout: out})
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.next++
	a.procs[a.next] = &agentProc{p: p, out: out}
	*id = a.next
	return nil
}

// AgentWait asks after process ID, waiting up to Wait for it to exit
// (Stop: the grace before SIGKILL). Wait answers sooner once the process
// has printed more than Seen bytes, what the caller has of its standard
// output: a line it watches for (bench mix's that its connections are
// open, which starts the sampler's window) comes as it is printed, not
// up to Wait later.
type AgentWait struct {
	ID   int
	Wait time.Duration
	Seen int
}

// AgentExit is what became of a process: whether it exited, how, what it
// printed, the end of its log.
type AgentExit struct {
	Exited  bool
	Ended   time.Time // when it exited, by the host's clock
	Err     string
	Stdout  []byte
	LogTail string
}

// Wait waits up to w.Wait for process w.ID to exit or to print more than
// w.Seen bytes, and answers what became of it; an exited process is
// forgotten.
func (a *Agent) Wait(w AgentWait, x *AgentExit) error {
	ap, err := a.proc(w.ID)
	if err != nil {
		return err
	}
	timer := time.NewTimer(w.Wait)
	defer timer.Stop()
	select {
	case <-ap.p.Done():
	case <-timer.C:
	case <-ap.out.longer(w.Seen):
	}
	a.exit(w.ID, ap, x, true)
	return nil
}

// Stop stops process w.ID (SIGTERM, SIGKILL after w.Wait) and answers
// what became of it.
func (a *Agent) Stop(w AgentWait, x *AgentExit) error {
	ap, err := a.proc(w.ID)
	if err != nil {
		return err
	}
	ap.p.Stop(w.Wait)
	a.exit(w.ID, ap, x, false)
	return nil
}

func (a *Agent) proc(id int) (*agentProc, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	ap, ok := a.procs[id]
	if !ok {
		return nil, fmt.Errorf("no process %d", id)
	}
	return ap, nil
}

// exit fills x with what became of ap, forgetting it once it exited
// where forget (Wait's answer is the last the session asks for; Stop's
// is not: the session's Wait is still to come).
func (a *Agent) exit(id int, ap *agentProc, x *AgentExit, forget bool) {
	select {
	case <-ap.p.Done():
		x.Exited, x.Ended = true, ap.p.Ended()
		if err := ap.p.Err(); err != nil {
			x.Err = err.Error()
		}
		if forget {
			a.mu.Lock()
			delete(a.procs, id)
			a.mu.Unlock()
		}
	default:
	}
	x.Stdout, x.LogTail = ap.out.bytes(), ap.p.LogTail(5)
}

// AgentReady asks the host to dial addresses from a role it holds until
// they accept, within Deadline.
type AgentReady struct {
	From     Role
	Addrs    []string
	Deadline time.Duration
}

// WaitReady dials r.Addrs until each accepts (Host.WaitReady).
func (a *Agent) WaitReady(r AgentReady, _ *struct{}) error {
	h, err := a.opened()
	if err != nil {
		return err
	}
	return h.WaitReady(context.Background(), r.From, r.Addrs, r.Deadline)
}

// Close tears down the host's roles now; the agent serves on until its
// input ends.
func (a *Agent) Close(_ struct{}, _ *struct{}) error { return a.closeHost() }

// closeHost stops the samplers, lets the run directory's root go and
// closes the host: its processes, cgroups and run directory.
func (a *Agent) closeHost() error {
	a.mu.Lock()
	h, samplers, root, perf := a.host, a.samplers, a.root, a.perf
	a.host, a.procs, a.samplers, a.root, a.perf = nil, map[int]*agentProc{}, nil, nil, nil
	a.mu.Unlock()
	perf.Close()
	for _, sm := range samplers {
		sm.Stop()
	}
	if root != nil {
		root.Close()
	}
	return h.Close()
}

// Clean removes what sessions with prefix left on the host: the agents
// of the prefix still running (their connections not yet seen lost), each
// asked to end (SIGTERM, then SIGKILL) so that it tears down, the folders
// they or a killed one left, and then what Clean(prefix) removes. It
// answers what it removed; the calling agent's own folder stays until it
// ends.
func (a *Agent) Clean(prefix string, removed *[]string) error {
	if _, err := a.opened(); err == nil {
		return errors.New("clean: this agent holds roles itself")
	}
	if err := validatePrefix(prefix); err != nil {
		return err
	}
	if err := lockFree(prefix, AgentIdle+closeGrace+time.Second); err != nil {
		return err
	}
	folders, _ := filepath.Glob(filepath.Join(filepath.Dir(a.dir), prefix+agentName+"*"))
	var pids []int
	for _, d := range folders {
		if d == a.dir || !agentDirRE.MatchString(d) {
			continue
		}
		for _, pid := range runningFrom(d) {
			if pid != os.Getpid() {
				syscall.Kill(pid, syscall.SIGTERM)
				pids = append(pids, pid)
				*removed = append(*removed, fmt.Sprintf("agent %d (%s)", pid, d))
			}
		}
	}
	end := time.Now().Add(closeGrace + time.Second)
	for _, pid := range pids {
		for processAlive(pid) && time.Now().Before(end) {
			time.Sleep(10 * time.Millisecond)
		}
	}
	killAndWait(pids, time.Second)
	var errs []error
	for _, d := range folders {
		if d == a.dir || !agentDirRE.MatchString(d) {
			continue
		}
		if _, err := os.Stat(d); err != nil {
			continue // its agent removed it as it ended
		}
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, err)
			continue
		}
		*removed = append(*removed, "folder "+d)
	}
	more, err := Clean(prefix)
	*removed = append(*removed, more...)
	return errors.Join(append(errs, err)...)
}

// lockFree waits up to wait for no session to hold prefix's lock: an
// agent whose session is gone tears down within AgentIdle and its grace,
// and a session that holds it still is a live one, which Clean refuses
// to touch (ErrPrefixBusy).
func lockFree(prefix string, wait time.Duration) error {
	_, statErr := os.Stat(lockPath(prefix))
	end := time.Now().Add(wait)
	for {
		lock, err := takeLock(prefix)
		if err == nil {
			if errors.Is(statErr, os.ErrNotExist) {
				os.Remove(lockPath(prefix)) // made only to look
			}
			return lock.Close()
		}
		if !errors.Is(err, ErrPrefixBusy) || time.Now().After(end) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// runningFrom returns the processes whose executable is in folder dir
// (also once removed: the kernel then reads "PATH (deleted)").
func runningFrom(dir string) []int {
	procs, _ := procfs.AllProcs()
	var pids []int
	for _, p := range procs {
		if exe, err := p.Executable(); err == nil && strings.HasPrefix(exe, dir+"/") {
			pids = append(pids, p.PID)
		}
	}
	return pids
}

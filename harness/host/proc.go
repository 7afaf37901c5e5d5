package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Processes are started through a re-exec of this binary: the child first
// runs this package's init, which joins the role's cgroups and network
// namespace, raises its descriptor limit, drops to the user, and only then
// executes the command. The command's first instruction thus runs in
// place, and every worker it forks inherits namespace and cgroups. `ip
// netns exec` would also remount /sys, but cannot join cgroups on v1, and
// a shell wrapper would be one more process in the proxy's cgroup.

// execEnv carries the placement of a child from Start to init.
const execEnv = "BENCH_HARNESS_EXEC"

// placement is what the child does before it executes the command.
type placement struct {
	Netns   string   `json:"netns"`   // file of the network namespace to join; "" on a host of its own
	Cgroups []string `json:"cgroups"` // cgroup.procs files to write the PID to
	UID     int      `json:"uid"`
	GID     int      `json:"gid"`
	Groups  []int    `json:"groups,omitempty"`
	Path    string   `json:"path"` // the command's executable
	Argv    []string `json:"argv"`
	// Parent is the harness's PID: the command dies with it.
	Parent int `json:"parent"`
	// Status is the descriptor of a pipe to Start: closed by the exec
	// when it succeeds, given the error when placement fails.
	Status int `json:"status"`
}

func init() {
	spec, ok := os.LookupEnv(execEnv)
	if !ok {
		return
	}
	runtime.LockOSThread()
	status, err := place(spec)
	if status != nil {
		fmt.Fprint(status, err)
	}
	fmt.Fprintf(os.Stderr, "bench: start in namespace and cgroup: %v\n", err)
	os.Exit(127)
}

// place joins the cgroups and the namespace, sets the limits and the
// user, and executes the command; it returns only on error, with the
// status pipe to report it on when it got that far.
func place(spec string) (*os.File, error) {
	var p placement
	if err := json.Unmarshal([]byte(spec), &p); err != nil {
		return nil, fmt.Errorf("read %s: %w", execEnv, err)
	}
	unix.CloseOnExec(p.Status)
	status := os.NewFile(uintptr(p.Status), "status")
	return status, placeAndExec(p)
}

func placeAndExec(p placement) error {
	pid := []byte(strconv.Itoa(os.Getpid()))
	for _, f := range p.Cgroups {
		if err := os.WriteFile(f, pid, 0); err != nil {
			return fmt.Errorf("join cgroup %s: %w", filepath.Dir(f), err)
		}
	}
	if p.Netns != "" {
		fd, err := unix.Open(p.Netns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open network namespace %s: %w", p.Netns, err)
		}
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("join network namespace %s: %w", p.Netns, err)
		}
		unix.Close(fd)
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("get descriptor limit: %w", err)
	}
	lim.Cur = lim.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("raise descriptor limit to %d: %w", lim.Max, err)
	}
	if p.UID != 0 || p.GID != 0 {
		if err := syscall.Setgroups(p.Groups); err != nil {
			return fmt.Errorf("set groups %v: %w", p.Groups, err)
		}
		if err := syscall.Setgid(p.GID); err != nil {
			return fmt.Errorf("set gid %d: %w", p.GID, err)
		}
		if err := syscall.Setuid(p.UID); err != nil {
			return fmt.Errorf("set uid %d: %w", p.UID, err)
		}
	}
	// A change of user cleared the parent-death signal Start set; a
	// harness that died before it was set again sent none.
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0); err != nil {
		return fmt.Errorf("set parent-death signal: %w", err)
	}
	if ppid := os.Getppid(); ppid != p.Parent {
		return fmt.Errorf("harness %d gone (parent now %d)", p.Parent, ppid)
	}
	env := make([]string, 0, len(os.Environ()))
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, execEnv+"=") {
			env = append(env, e)
		}
	}
	return fmt.Errorf("exec %s: %w", p.Path, syscall.Exec(p.Path, p.Argv, env))
}

// ProcSpec says what to start and how.
type ProcSpec struct {
	Argv []string // the command; Argv[0] is looked up in PATH
	Dir  string   // working directory ("" = the run directory)
	// Log receives stdout and stderr ("" = <RunDir>/<command name>.log,
	// numbered when the name repeats).
	Log string
	// Env is added to a minimal environment (PATH, HOME, LANG=C).
	Env []string
	// User runs the command as this user ("" = root).
	User string
	// Stdout, when set, also receives stdout (a load tool's report);
	// stderr still goes to Log only.
	Stdout io.Writer
	// Stdin, when set, is the command's standard input (a stepping bench
	// mix reads its steps there); none otherwise.
	Stdin io.Reader
	// Ended, when set, receives from Run when the command exited, on
	// this machine's clock (on a host of its own, its host's moment, not
	// when the session heard of it).
	Ended *time.Time
	// On is which of the role's hosts runs it, from 0: of several client
	// hosts sharing a load, the on-th (Host.Clients).
	On int
}

// Proc is a process a Host started. The host reaps it.
type Proc struct {
	h        *Host
	role     Role
	cmd      *exec.Cmd
	log      string
	done     chan struct{}
	err      error
	stopOnce sync.Once
	stopErr  error
	// reaped is set, under mu, before the process is reaped: from then
	// on its PID, which is its group's ID, may be given to another
	// process, so the group is no longer signalled by its ID.
	mu     sync.Mutex
	reaped bool
	// remote is the process on a host of its own, nil for one here.
	remote *remoteProc
	// ended is when it exited, set before done is closed.
	ended time.Time
}

// minimalEnv is the environment every process starts from.
var minimalEnv = []string{
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"LANG=C",
}

// Start starts spec in role r's network namespace and cgroups, with its
// descriptor soft limit raised to the hard limit and its output in its
// log file. It returns once the command is executing or failed to; a
// command that is not found is an error here.
func (h *Host) Start(r Role, spec ProcSpec) (*Proc, error) {
	if len(spec.Argv) == 0 {
		return nil, errors.New("start: empty command")
	}
	if h.isClosed() {
		return nil, fmt.Errorf("start %s: host is closed", spec.Argv[0])
	}
	if on, err := h.remoteOn(r, spec.On); err != nil || on != nil {
		return h.startRemote(on, r, spec, err)
	}
	path, err := exec.LookPath(spec.Argv[0])
	if err != nil {
		return nil, fmt.Errorf("start %s in %s: %w", spec.Argv[0], r, err)
	}
	if !h.Holds(r) && (r != roleHost || !h.own) {
		return nil, fmt.Errorf("start %s: this host holds no %s", spec.Argv[0], r)
	}
	pl := placement{
		Status:  3, // the first of ExtraFiles
		Netns:   h.netnsFile(r),
		Cgroups: h.cgroups.roles[r].procsFiles(),
		Path:    path,
		Argv:    spec.Argv,
		Parent:  os.Getpid(),
	}
	home := "/root"
	if spec.User != "" {
		if home, err = pl.asUser(spec.User); err != nil {
			return nil, fmt.Errorf("start %s as %s: %w", spec.Argv[0], spec.User, err)
		}
	}
	enc, err := json.Marshal(pl)
	if err != nil {
		return nil, err
	}
	logPath := spec.Log
	if logPath == "" {
		logPath = h.logPath(filepath.Base(spec.Argv[0]))
	}
	log, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open log of %s: %w", spec.Argv[0], err)
	}
	cmd, err := h.command(spec, enc, home, log)
	if err != nil {
		log.Close()
		return nil, err
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		log.Close()
		return nil, fmt.Errorf("start %s: %w", spec.Argv[0], err)
	}
	defer statusR.Close()
	cmd.ExtraFiles = []*os.File{statusW}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A worker that keeps stdout open must not hold up the reaping.
	cmd.WaitDelay = time.Second
	err = startChild(cmd)
	statusW.Close()
	if err != nil {
		log.Close()
		return nil, fmt.Errorf("start %s in %s: %w", spec.Argv[0], r, err)
	}
	// Read until the exec closes the pipe: then the command runs in its
	// namespace and cgroups, and PIDs lists it.
	msg, _ := io.ReadAll(statusR)
	p := &Proc{h: h, role: r, cmd: cmd, log: logPath, done: make(chan struct{})}
	h.procsMu.Lock()
	h.procs[p] = struct{}{}
	h.procsMu.Unlock()
	go p.reap(log)
	if len(msg) > 0 {
		<-p.done
		return nil, fmt.Errorf("start %s in %s: %s", spec.Argv[0], r, msg)
	}
	return p, nil
}

// isClosed says whether Close has begun.
func (h *Host) isClosed() bool {
	h.procsMu.Lock()
	defer h.procsMu.Unlock()
	return h.closed
}

// command is the command that starts spec: this executable, which
// places itself as placement enc says and then executes spec, with the
// minimal environment, spec's and home, its output in log.
func (h *Host) command(spec ProcSpec, enc []byte, home string, log *os.File) (*exec.Cmd, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find own executable: %w", err)
	}
	cmd := exec.Command(self)
	cmd.Args = spec.Argv
	cmd.Env = append(append(append([]string{}, minimalEnv...), "HOME="+home), spec.Env...)
	cmd.Env = append(cmd.Env, execEnv+"="+string(enc))
	cmd.Dir = spec.Dir
	if cmd.Dir == "" {
		cmd.Dir = h.runDir
	}
	cmd.Stdout, cmd.Stderr, cmd.Stdin = log, log, spec.Stdin
	if spec.Stdout != nil {
		cmd.Stdout = io.MultiWriter(log, spec.Stdout)
	}
	return cmd, nil
}

// asUser makes pl run as the user name, with its groups, and returns its
// home directory.
func (pl *placement) asUser(name string) (home string, err error) {
	u, err := user.Lookup(name)
	if err != nil {
		return "", err
	}
	pl.UID, _ = strconv.Atoi(u.Uid)
	pl.GID, _ = strconv.Atoi(u.Gid)
	gids, _ := u.GroupIds()
	for _, g := range gids {
		if n, err := strconv.Atoi(g); err == nil {
			pl.Groups = append(pl.Groups, n)
		}
	}
	return u.HomeDir, nil
}

// reap waits for p's exit without reaping it, so that Stop never signals
// a group whose ID may have been given to another process, then reaps it,
// closes its log once its output is copied into it, and forgets it.
func (p *Proc) reap(log *os.File) {
	waitExit(p.cmd.Process.Pid)
	p.ended = time.Now()
	p.mu.Lock()
	p.reaped = true
	p.mu.Unlock()
	p.err = p.cmd.Wait()
	log.Close()
	p.h.procsMu.Lock()
	delete(p.h.procs, p)
	p.h.procsMu.Unlock()
	close(p.done)
}

// waitExit waits until a child has exited, leaving it to be reaped.
func waitExit(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return
		}
	}
}

// logPath returns a fresh log file name for a command.
func (h *Host) logPath(name string) string {
	h.procsMu.Lock()
	defer h.procsMu.Unlock()
	h.logNames[name]++
	if n := h.logNames[name]; n > 1 {
		name += "-" + strconv.Itoa(n)
	}
	return filepath.Join(h.runDir, name+".log")
}

// runGrace is how long Run lets a cancelled command end after SIGTERM.
const runGrace = 2 * time.Second

// Run starts spec in role r and waits for it to exit. Cancelling ctx stops
// it (SIGTERM, then SIGKILL after two seconds) and returns ctx's error.
func (h *Host) Run(ctx context.Context, r Role, spec ProcSpec) error {
	p, err := h.Start(r, spec)
	if err != nil {
		return err
	}
	select {
	case <-p.Done():
		if spec.Ended != nil {
			*spec.Ended = p.Ended()
		}
		if err := p.Err(); err != nil {
			return fmt.Errorf("%s: %w", spec.Argv[0], err)
		}
		return nil
	case <-ctx.Done():
		p.Stop(runGrace)
		return ctx.Err()
	}
}

// PID returns the process's ID, which is also its process group's.
func (p *Proc) PID() int {
	if p.cmd == nil {
		return 0 // on a host of its own
	}
	return p.cmd.Process.Pid
}

// String names the process where it runs: "pid 1234", or on a host of
// its own "on bench@proxy".
func (p *Proc) String() string {
	if p.remote != nil {
		return "on " + p.remote.p.dest.String()
	}
	return "pid " + strconv.Itoa(p.PID())
}

// Exit is how the process exited, once Done is closed: Err, or where it
// exited with status 0, an error that says so.
func (p *Proc) Exit() error {
	if err := p.Err(); err != nil {
		return err
	}
	return errors.New("exit status 0")
}

// Ended is when the process exited, once Done is closed.
func (p *Proc) Ended() time.Time {
	select {
	case <-p.done:
		return p.ended
	default:
		return time.Time{}
	}
}

// Done is closed once the process has exited and been reaped.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Err returns how the process exited (nil for status 0) once Done is
// closed, and nil before.
func (p *Proc) Err() error {
	select {
	case <-p.done:
		return p.err
	default:
		return nil
	}
}

// Stop sends SIGTERM to the process's group, waits up to grace for the
// process to exit, then sends SIGKILL to the group, and waits until it is
// reaped. The group is signalled by its ID only while its leader, this
// process, is not reaped; once it is, the members that outlived it are
// found in the role's cgroup. It returns an error only when the process
// could not be reaped; calling it again returns the same.
func (p *Proc) Stop(grace time.Duration) error {
	if p.remote != nil {
		p.stopOnce.Do(func() { p.stopErr = p.stopRemote(grace, false) })
		return p.stopErr
	}
	p.stopOnce.Do(func() {
		select {
		case <-p.done:
		default:
			p.signalGroup(syscall.SIGTERM)
			select {
			case <-p.done:
			case <-time.After(grace):
			}
		}
		// Workers of the group may outlive their parent.
		p.signalGroup(syscall.SIGKILL)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			p.stopErr = fmt.Errorf("stop %s (pid %d): not reaped 10 s after SIGKILL", p.cmd.Args[0], p.PID())
		}
	})
	return p.stopErr
}

// Interrupt sends the process's group SIGINT, as a terminal's ^C, and
// waits grace for its exit before Stop.
func (p *Proc) Interrupt(grace time.Duration) error {
	if p.remote != nil {
		p.stopOnce.Do(func() { p.stopErr = p.stopRemote(grace, true) })
		return p.stopErr
	}
	select {
	case <-p.done:
	default:
		p.signalGroup(syscall.SIGINT)
		select {
		case <-p.done:
		case <-time.After(grace):
		}
	}
	return p.Stop(grace)
}

// signalGroup sends sig to the process's group: by the group's ID while
// the leader is not reaped, else to each process of the role's cgroup
// still in the group.
func (p *Proc) signalGroup(sig syscall.Signal) {
	pgid := p.PID()
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.reaped {
		p.kill(-pgid, sig)
		return
	}
	if p.h == nil {
		return
	}
	for _, pid := range p.h.PIDs(p.role) {
		// A process of the cgroup whose group has the ID of another
		// live leader is that one's: the ID was given again.
		if processGroup(pid) == pgid && !p.h.leads(pgid, p) {
			p.kill(pid, sig)
		}
	}
}

// kill is syscall.Kill, or its host's replacement (see Host.kill).
func (p *Proc) kill(pid int, sig syscall.Signal) error {
	if p.h != nil && p.h.kill != nil {
		return p.h.kill(pid, sig)
	}
	return syscall.Kill(pid, sig)
}

// processGroup returns a process's group ID, or 0 when it is gone.
func processGroup(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	// After the name: state, parent, group.
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 3 {
		return 0
	}
	g, _ := strconv.Atoi(f[2])
	return g
}

// leads reports whether a live process the host started, other than
// except, leads the group pgid.
func (h *Host) leads(pgid int, except *Proc) bool {
	h.procsMu.Lock()
	defer h.procsMu.Unlock()
	for q := range h.procs {
		if q != except && q.PID() == pgid {
			return true
		}
	}
	return false
}

// LogTail returns the last n lines of the process's log, for the note of
// a failed run.
func (p *Proc) LogTail(n int) string {
	if p.remote != nil {
		return p.remoteTail(n)
	}
	return strings.Join(TailLines(p.log, n), "\n")
}

// TailLines returns the last n lines of the file at path (read from its
// last 64 KB), none if it cannot be read.
func TailLines(path string, n int) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	const max = 64 << 10
	if st, err := f.Stat(); err == nil && st.Size() > max {
		f.Seek(st.Size()-max, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

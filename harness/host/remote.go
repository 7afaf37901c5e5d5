package host

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/rpc"
	"net/rpc/jsonrpc"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Remote is a session's hold on a host of its own: the agent Deploy
// started there over ssh, and the calls to it. Close ends the agent,
// which takes down all it made and its own folder; a session killed
// before it does takes its ssh with it (a parent-death signal), and the
// agent, its input ended, does the same.
type Remote struct {
	SSH SSH
	// Dir is the agent's private folder on the host, its binary in it.
	Dir string

	cmd    *exec.Cmd
	stdin  io.WriteCloser
	client *rpc.Client
	stderr *cappedBuffer
	exited chan struct{} // closed when ssh exited
	stop   chan struct{} // closed by Close: the heartbeat ends
	once   sync.Once
	// clock are the readings of the host's clock of the last
	// clockMemory, oldest first.
	clockMu sync.Mutex
	clock   []clockSample
}

// ErrHostLost is the error of a call to a host whose agent is gone: its
// connection dropped, or it stopped.
var ErrHostLost = errors.New("the host's connection was lost")

// deployScript is what runs on the host over one ssh connection: it
// reads bench (size bytes, SHA-256 hash) from its input into a new
// private folder of the host's temporary directory, named by prefix for
// Clean to find, checks the copy, says the folder ("DIR <path>"), and
// runs the copy as the agent, as root (through sudo -n where the login is
// another user's), on the same connection; once the agent ends, however
// it ends, the folder is removed. A copy cut short removes it too, and so
// does a signal (a write to the connection gone is SIGPIPE).
func deployScript(prefix string, size int, hash string) string {
	bin := `"$d/` + agentBinary + `"`
	return "exec sh -c " + shellQuote(`umask 077; d=$(mktemp -d "${TMPDIR:-/tmp}/`+prefix+agentName+`XXXXXXXX") || exit 1; `+
		`trap 'rm -rf "$d"' EXIT; trap 'exit 1' HUP INT PIPE TERM; `+
		`head -c `+strconv.Itoa(size)+` > `+bin+` || exit 1; `+
		`[ "$(sha256sum < `+bin+` | cut -d " " -f 1)" = `+hash+` ] || { echo "bench: the copy is not whole" >&2; exit 1; }; `+
		`chmod 700 `+bin+`; echo "`+deployedLine+`$d"; `+
		`if [ "$(id -u)" = 0 ]; then `+bin+` `+AgentCommand+` "$d"; else sudo -n `+bin+` `+AgentCommand+` "$d"; fi`)
}

// deployedLine starts the line the host says its folder on.
const deployedLine = "DIR "

// agentDirRE is what a deployed folder's path must look like: mktemp's
// name beneath an absolute temporary directory.
var agentDirRE = regexp.MustCompile(`^/[A-Za-z0-9._/-]*/[a-z0-9-]+` + regexp.QuoteMeta(agentName) + `[A-Za-z0-9]{8}$`)

// Deploy copies this executable to a private folder on the host s
// reaches and starts it there as an agent, over one ssh connection (see
// deployScript), and returns the hold on it. prefix is the session's
// (DefaultPrefix when ""): the folder is named by it. A session killed
// at any point of it leaves nothing on the host: the copy cut short is
// removed, the agent tears down.
func Deploy(ctx context.Context, s SSH, prefix string) (*Remote, error) {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	if err := validatePrefix(prefix); err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find own executable: %w", err)
	}
	bin, err := os.ReadFile(self)
	if err != nil {
		return nil, fmt.Errorf("read own executable: %w", err)
	}
	sum := sha256.Sum256(bin)
	argv := s.Argv(deployScript(prefix, len(bin), hex.EncodeToString(sum[:])))
	cmd := exec.Command(argv[0], argv[1:]...)
	r := &Remote{SSH: s, cmd: cmd, stderr: &cappedBuffer{}, exited: make(chan struct{}), stop: make(chan struct{})}
	cmd.Stderr = r.stderr
	if r.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := startChild(cmd); err != nil {
		return nil, fmt.Errorf("%s: start ssh: %w", s.Dest, err)
	}
	go func() {
		cmd.Wait()
		close(r.exited)
	}()
	if err := r.deploy(ctx, bin, bufio.NewReader(stdout)); err != nil {
		r.stdin.Close()
		r.cmd.Process.Kill()
		<-r.exited
		return nil, err
	}
	go r.heartbeat()
	return r, nil
}

// deploy sends the binary, reads the folder the host says, and starts
// the calls on the same connection with the host's facts.
func (r *Remote) deploy(ctx context.Context, bin []byte, out *bufio.Reader) error {
	go r.stdin.Write(bin)
	said := make(chan string, 1)
	go func() {
		line, _ := out.ReadString('\n')
		said <- line
	}()
	var line string
	select {
	case line = <-said:
	case <-ctx.Done():
		return ctx.Err()
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(line), deployedLine)
	if !ok || !agentDirRE.MatchString(dir) {
		<-r.exited
		if e := sshError(r.SSH.Dest, r.stderr.bytes()); e.Fault != FaultSSH || r.cmd.ProcessState.ExitCode() == 255 {
			return e
		}
		return fmt.Errorf("%s: copy bench to the host and start it: %s", r.SSH.Dest, lastLines(string(r.stderr.bytes())+line, 3))
	}
	r.Dir = dir
	r.client = rpc.NewClientWithCodec(jsonrpc.NewClientCodec(pipeConn{out, r.stdin}))
	var f AgentFacts
	if err := r.Call(ctx, "Facts", struct{}{}, &f); err != nil {
		r.client.Close()
		return err
	}
	return nil
}

// pipeConn is ssh's standard output and input as the codec's connection.
type pipeConn struct {
	io.Reader
	io.WriteCloser
}

// heartbeat pings the agent every AgentPing until Close, so that it
// knows the session is there.
func (r *Remote) heartbeat() {
	t := time.NewTicker(AgentPing)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-r.exited:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), AgentIdle)
			r.ping(ctx)
			cancel()
		}
	}
}

// clockSample is one ping's reading of the host's clock: when it was
// sent, its round trip, and the host's clock less this one's at its
// middle.
type clockSample struct {
	sent   time.Time
	rtt    time.Duration
	offset time.Duration
}

// clockMemory is how long a ping's reading of the host's clock is kept:
// long enough that one of the heartbeat's went through quickly where a
// loaded machine held the others up (a real-time task holding a CPU a
// fifth of a second), short enough that two clocks drift apart by
// little more than microseconds meanwhile (50 ppm: 0.5 ms).
const clockMemory = 10 * time.Second

// ping reads the host's clock once and keeps the reading.
func (r *Remote) ping(ctx context.Context) error {
	var at int64
	sent := time.Now()
	if err := r.Call(ctx, "Ping", struct{}{}, &at); err != nil {
		return err
	}
	took := time.Since(sent)
	r.clockMu.Lock()
	defer r.clockMu.Unlock()
	r.clock = append(r.clock, clockSample{sent: sent, rtt: took, offset: time.Unix(0, at).Sub(sent.Add(took / 2))})
	for len(r.clock) > 0 && time.Since(r.clock[0].sent) > clockMemory {
		r.clock = r.clock[1:]
	}
	return nil
}

// Call calls the agent's method (Agent's exported methods) with args and
// fills reply. It fails with ErrHostLost, and what ssh said, where the
// connection is gone, and when ctx ends first.
func (r *Remote) Call(ctx context.Context, method string, args, reply any) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, callLimit)
		defer cancel()
	}
	c := r.client.Go("Agent."+method, args, reply, make(chan *rpc.Call, 1))
	select {
	case <-c.Done:
		var said rpc.ServerError
		switch {
		case c.Error == nil:
			return nil
		case errors.As(c.Error, &said):
			return fmt.Errorf("%s: %s", r.SSH.Dest, said)
		}
		// the connection failed under the call: a write to ssh gone,
		// its output closed, the codec shut down
		return r.lost()
	case <-r.exited:
		return r.lost()
	case <-ctx.Done():
		return fmt.Errorf("%s: %s: %w", r.SSH.Dest, method, ctx.Err())
	}
}

// callLimit bounds a call given no deadline: an agent that answers the
// heartbeat but not a call (stuck) fails the run rather than holding
// the session for good. The longest call, a file's transfer or a stop
// of a process with its grace, takes seconds.
const callLimit = 2 * time.Minute

// lost is the error of a call to a host whose connection ended.
func (r *Remote) lost() error {
	said := lastLines(string(r.stderr.bytes()), 3)
	if said == "" {
		return fmt.Errorf("%s: %w", r.SSH.Dest, ErrHostLost)
	}
	return fmt.Errorf("%s: %w (%s)", r.SSH.Dest, ErrHostLost, said)
}

// Clock measures the host's clock against this one's: n pings now, the
// one of the shortest round trip taken, the host's time read at its
// middle. offset is the host's clock less this one's.
//
// The heartbeat's pings of the last clockMemory count too: a loaded
// machine may hold up every one of a burst.
func (r *Remote) Clock(ctx context.Context, n int) (offset, rtt time.Duration, err error) {
	for range max(n, 1) {
		if err := r.ping(ctx); err != nil {
			return 0, 0, err
		}
	}
	r.clockMu.Lock()
	defer r.clockMu.Unlock()
	best := bestClock(r.clock)
	return best.offset, best.rtt, nil
}

// bestClock is the reading of the shortest round trip, the first of
// those as short.
func bestClock(samples []clockSample) clockSample {
	best := samples[0]
	for _, s := range samples[1:] {
		if s.rtt < best.rtt {
			best = s
		}
	}
	return best
}

// Close ends the agent: its input closed, it tears down what it made and
// removes its folder, and ssh exits with it. It waits up to a grace for
// that, then ends ssh (the agent then tears down all the same).
func (r *Remote) Close() error {
	var err error
	r.once.Do(func() {
		close(r.stop)
		r.stdin.Close()
		select {
		case <-r.exited:
		case <-time.After(closeGrace + AgentIdle):
			r.cmd.Process.Kill()
			<-r.exited
			err = fmt.Errorf("%s: the agent did not end within %v; its ssh was ended", r.SSH.Dest, closeGrace+AgentIdle)
		}
		r.client.Close()
	})
	return err
}

// HostCleaned is what CleanHosts removed on a host, or why it could not.
type HostCleaned struct {
	Dest    Destination
	Removed []string
	Err     error
}

// CleanHosts removes from each host of h, all at once, what sessions
// with prefix left there (Agent.Clean): bench is copied to the host and
// run as an agent that cleans, then ends and removes its own copy.
func CleanHosts(ctx context.Context, h Hosts, sshOf func(Destination) SSH, prefix string) []HostCleaned {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	dests := h.Destinations()
	out := make([]HostCleaned, len(dests))
	var wg sync.WaitGroup
	for i, d := range dests {
		c := &out[i]
		c.Dest = d
		wg.Go(func() {
			r, err := Deploy(ctx, sshOf(d), prefix)
			if err != nil {
				c.Err = err
				return
			}
			c.Err = errors.Join(r.Call(ctx, "Clean", prefix, &c.Removed), r.Close())
		})
	}
	wg.Wait()
	return out
}

package host

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The perf record of a role's CPUs over a measured window. perf runs in
// the client's namespace and cgroup, on the client's CPUs, so that its
// own work is not the proxy's; it samples the role's CPUs system-wide
// (-a -C), every process and thread on them, the kernel's network work
// included, as the role's CPU time counts it. It starts with its events
// disabled and is enabled and disabled through its control FIFO
// (--control), so that its samples cover the window and not its own
// start-up or the load tool's.

// PerfProgram is the program that records and reads the profiles, and
// what installs it.
const (
	PerfProgram = "perf"
	perfInstall = "apt-get install linux-perf (dnf install perf)"
)

// perfParanoid is the kernel's rule for who may use perf: above -1 a
// process without CAP_PERFMON (or CAP_SYS_ADMIN) may not sample every
// process of a CPU.
const perfParanoid = "/proc/sys/kernel/perf_event_paranoid"

// perfAck is how long perf has to acknowledge a command on its FIFO:
// its set-up of the events of a CPU takes milliseconds.
const perfAck = 10 * time.Second

// PerfSpec is what to record.
type PerfSpec struct {
	Role      Role   // whose CPUs
	Freq      int    // samples a second a CPU
	CallGraph string // perf record's --call-graph mode, "fp" (frame pointers, the default when empty) or "dwarf"
	Dir       string // where perf.data and perf's log go
}

// Perf is a perf record started with its events disabled.
type Perf struct {
	remote   *remotePerf // on the host of the role, where it is one of its own
	proc     *Proc
	data     string
	ctl, ack *os.File
	acks     *bufio.Reader
	enabled  bool
}

// PerfError is a profile that could not be made: perf is missing, refused
// or failed. The run goes on without its profile; the error says why.
type PerfError struct{ Reason string }

func (e *PerfError) Error() string { return e.Reason }

// StartPerf starts perf record on spec.Role's CPUs, its events disabled
// until Enable. An error is a *PerfError.
func (h *Host) StartPerf(spec PerfSpec) (p *Perf, err error) {
	if on := h.remotes[spec.Role]; on != nil {
		return startRemotePerf(on, spec)
	}
	if _, err := exec.LookPath(PerfProgram); err != nil {
		return nil, &PerfError{fmt.Sprintf("perf not found: %s", perfInstall)}
	}
	if err := perfAllowed(); err != nil {
		return nil, &PerfError{err.Error()}
	}
	cpus := h.layout.cpus(spec.Role)
	if len(cpus) == 0 {
		return nil, &PerfError{fmt.Sprintf("no CPUs of %s to profile", spec.Role)}
	}
	if err := os.MkdirAll(spec.Dir, 0o755); err != nil {
		return nil, &PerfError{fmt.Sprintf("perf: %v", err)}
	}
	p = &Perf{data: filepath.Join(spec.Dir, "perf.data")}
	defer func() {
		if err != nil {
			p.Close()
			p = nil
		}
	}()
	ctl, ack := filepath.Join(spec.Dir, "perf.ctl"), filepath.Join(spec.Dir, "perf.ack")
	for _, f := range []string{ctl, ack} {
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			return p, &PerfError{fmt.Sprintf("perf: make FIFO %q: %v", f, err)}
		}
	}
	// Opened for reading and writing, a FIFO opens without waiting for
	// its other end, and stays open if perf exits.
	if p.ctl, err = os.OpenFile(ctl, os.O_RDWR, 0); err != nil {
		return p, &PerfError{fmt.Sprintf("perf: %v", err)}
	}
	if p.ack, err = os.OpenFile(ack, os.O_RDWR, 0); err != nil {
		return p, &PerfError{fmt.Sprintf("perf: %v", err)}
	}
	p.acks = bufio.NewReader(p.ack)
	argv := append([]string{PerfProgram, "record", "-F", strconv.Itoa(spec.Freq), "-a", "-C", CPUList(cpus)}, callGraphArgs(spec.CallGraph)...)
	argv = append(argv, "-D", "-1", "--control", "fifo:"+ctl+","+ack, "-o", p.data)
	p.proc, err = h.Start(h.perfRole(), ProcSpec{Argv: argv, Dir: spec.Dir, Log: filepath.Join(spec.Dir, "perf.log")})
	if err != nil {
		return p, &PerfError{fmt.Sprintf("perf record: %v", err)}
	}
	return p, nil
}

// callGraphArgs are perf record's flags for a call graph.
func callGraphArgs(cg string) []string {
	if cg == "" {
		cg = "fp"
	}
	return []string{"--call-graph", cg}
}

// perfAllowed says why this process may not sample every process of a
// CPU, or nil where it may.
func perfAllowed() error {
	b, err := os.ReadFile(perfParanoid)
	return perfRule(b, err, os.Geteuid() == 0)
}

// perfRule is the kernel's rule on perf_event_paranoid's contents (or
// the error reading it): root, which has CAP_PERFMON, may sample every
// process of a CPU; anyone else only at -1.
func perfRule(paranoid []byte, readErr error, root bool) error {
	if readErr != nil {
		return fmt.Errorf("perf: the kernel has no perf events (%s: %v)", perfParanoid, readErr)
	}
	text := strings.TrimSpace(string(paranoid))
	level, err := strconv.Atoi(text)
	if err != nil {
		return fmt.Errorf("perf: %s reads %q", perfParanoid, text)
	}
	if level > -1 && !root {
		return fmt.Errorf("perf refused: %s is %d and bench is not root (sudo, or sysctl kernel.perf_event_paranoid=-1)", perfParanoid, level)
	}
	return nil
}

// command sends perf a command on its control FIFO and waits for its
// acknowledgement; an exit of perf's is its log's end.
func (p *Perf) command(cmd string) error {
	if _, err := fmt.Fprintln(p.ctl, cmd); err != nil {
		return &PerfError{fmt.Sprintf("perf %s: %v", cmd, err)}
	}
	got := make(chan error, 1)
	go func() {
		line, err := p.acks.ReadString('\n')
		// perf writes "ack\n" with its C string's NUL.
		if err == nil && strings.Trim(line, "\x00\n ") != "ack" {
			err = fmt.Errorf("perf answered %q", line)
		}
		got <- err
	}()
	select {
	case err := <-got:
		if err != nil {
			return &PerfError{fmt.Sprintf("perf %s: %v", cmd, err)}
		}
		return nil
	case <-p.proc.Done():
		return &PerfError{fmt.Sprintf("perf record exited: %v; log: %s", p.proc.Err(), p.proc.LogTail(3))}
	case <-time.After(perfAck):
		return &PerfError{fmt.Sprintf("perf %s: no answer in %s; log: %s", cmd, perfAck, p.proc.LogTail(3))}
	}
}

// Enable starts the sampling: the window's start.
func (p *Perf) Enable() error {
	if p.remote != nil {
		return p.remote.call("PerfEnable", struct{}{}, nil)
	}
	if err := p.command("enable"); err != nil {
		return err
	}
	p.enabled = true
	return nil
}

// Stop ends the sampling, the window's end, and perf with SIGINT, which
// writes its file; it returns once perf has exited.
func (p *Perf) Stop() error {
	if p != nil && p.remote != nil {
		return p.remote.call("PerfStop", struct{}{}, nil)
	}
	if p == nil || p.proc == nil {
		return nil
	}
	var err error
	if p.enabled {
		err = p.command("disable")
		p.enabled = false
	}
	if ierr := p.proc.Interrupt(perfAck); ierr != nil && err == nil {
		err = &PerfError{fmt.Sprintf("perf record: %v", ierr)}
	}
	// perf record ends by raising the SIGINT it was sent, so that its
	// status says nothing: perf script tells a broken file.
	return err
}

// Script runs perf script on the recording, resolving its symbols on
// the machine it recorded (the role's host), and returns its output with the fields given (perf
// script -F).
func (p *Perf) Script(ctx context.Context, fields string) ([]byte, error) {
	if p.remote != nil {
		var out []byte
		err := p.remote.call("PerfScript", fields, &out)
		return out, err
	}
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, PerfProgram, "script", "-i", p.data, "-F", fields)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := runChild(cmd); err != nil {
		return nil, &PerfError{fmt.Sprintf("perf script: %v: %s", err, lastLines(errb.String(), 1))}
	}
	return out.Bytes(), nil
}

// Close stops perf if it still runs and closes the FIFOs; the files stay
// in the recording's folder. It is safe to call again.
func (p *Perf) Close() error {
	if p == nil {
		return nil
	}
	if p.remote != nil {
		err := p.remote.call("PerfClose", struct{}{}, nil)
		if errors.Is(err, ErrHostLost) {
			return nil // its agent tore it down
		}
		return err
	}
	var errs []error
	if p.proc != nil {
		errs = append(errs, p.proc.Stop(perfAck))
	}
	for _, f := range []*os.File{p.ctl, p.ack} {
		if f != nil {
			if err := f.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// CheckPerf is bench check's line on perf's events: whether this process
// may sample every process of a CPU, as a profile asked for needs.
func CheckPerf() CheckItem {
	it := CheckItem{Name: "perf events"}
	if err := perfAllowed(); err != nil {
		it.Status, it.Advice = "refused", advise("%v; a session with %s runs without profiles", err, SettingProfileOn)
		it.Detail = it.Advice.Error()
		return it
	}
	it.Status, it.OK = "allowed", true
	return it
}

// Package child starts processes that die with the process that started
// them, however it ends (a signal, SIGKILL, a panic, a test's timeout): a
// test binary stopped halfway, or a bench mix killed, leaves no spinner
// or load tool running to hold the machine's CPUs and spoil every
// measurement after it.
//
// The kernel sends a child its parent-death signal (PR_SET_PDEATHSIG)
// when the thread that forked it ends, not the process
// (https://go.dev/issue/27505), and the Go runtime ends a thread whose
// locked goroutine returns without unlocking it (as a sampler's or a
// namespace's does). So every child here is forked by one goroutine that
// locks its thread and never returns: that thread lives as long as the
// process.
package child

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// ParentEnv carries the starter's PID to a child, so that a child which
// imports this package (a test binary run again as a helper, bench)
// checks at its start that its parent is still the one that started it.
const ParentEnv = "BENCH_CHILD_PARENT"

func init() {
	// The main goroutine runs init on the main thread, which the runtime
	// never ends.
	holdParent()
}

// holdParent sets the parent-death signal again and checks the parent:
// a program in between (a set-user-ID one, a shell that forked rather
// than executed) may have cleared it, and a parent that died before it
// was set again sent nothing. A process further down (a shell's child,
// which inherited ParentEnv) dies with its own parent; it exits only
// when the starter is gone.
func holdParent() {
	want, err := strconv.Atoi(os.Getenv(ParentEnv))
	if err != nil {
		return
	}
	os.Unsetenv(ParentEnv)
	unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0)
	if os.Getppid() != want && syscall.Kill(want, 0) == syscall.ESRCH {
		os.Exit(1)
	}
}

// forker runs the functions sent to it on a thread that never ends.
var forker = sync.OnceValue(func() chan<- func() {
	c := make(chan func())
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the process
		for f := range c {
			f()
		}
	}()
	return c
})

// Start starts cmd as cmd.Start does, with SIGKILL as its parent-death
// signal, forked by a thread that lives as long as this process, and
// ParentEnv in its environment.
func Start(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	env = slices.DeleteFunc(slices.Clone(env), func(e string) bool { return strings.HasPrefix(e, ParentEnv+"=") })
	cmd.Env = append(env, ParentEnv+"="+strconv.Itoa(os.Getpid()))
	errc := make(chan error, 1)
	forker() <- func() { errc <- cmd.Start() }
	return <-errc
}

// Run starts cmd as Start does and waits for it, as cmd.Run.
func Run(cmd *exec.Cmd) error {
	if err := Start(cmd); err != nil {
		return err
	}
	return cmd.Wait()
}

// Output runs cmd as Run does and returns its standard output, as
// cmd.Output: its standard error, unless set, is the ExitError's.
func Output(cmd *exec.Cmd) ([]byte, error) {
	if cmd.Stdout != nil {
		return nil, errors.New("child: Stdout already set")
	}
	var out, stderr bytes.Buffer
	cmd.Stdout = &out
	captured := cmd.Stderr == nil
	if captured {
		cmd.Stderr = &stderr
	}
	err := Run(cmd)
	var ee *exec.ExitError
	if captured && errors.As(err, &ee) {
		ee.Stderr = stderr.Bytes()
	}
	return out.Bytes(), err
}

// CombinedOutput runs cmd as Run does and returns its standard output
// and standard error together, as cmd.CombinedOutput.
func CombinedOutput(cmd *exec.Cmd) ([]byte, error) {
	if cmd.Stdout != nil || cmd.Stderr != nil {
		return nil, errors.New("child: Stdout or Stderr already set")
	}
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err := Run(cmd)
	return b.Bytes(), err
}

package host

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// forker runs the functions sent to it on a thread that never ends. It
// is the process's, not a Host's: the thread must outlive every child
// started by startChild, of every Host and of none (CheckSystem, perf),
// and a thread locked for good cannot be handed back.
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

// startChild starts cmd with SIGKILL as its parent-death signal, so that
// a harness killed (SIGKILL, a panic) before its teardown takes its
// children with it. The kernel sends that signal when the thread that
// forked the child ends, not the process (https://go.dev/issue/27505),
// and the runtime ends a thread whose locked goroutine returns locked
// (the sampler's loop, a namespace's switch that failed): so every child
// is forked by one locked thread that lives as long as the process.
func startChild(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	errc := make(chan error, 1)
	forker() <- func() { errc <- cmd.Start() }
	return <-errc
}

// runChild runs cmd as startChild starts it, and waits for it.
func runChild(cmd *exec.Cmd) error {
	if err := startChild(cmd); err != nil {
		return err
	}
	return cmd.Wait()
}

package child

import (
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// The main goroutine keeps the main thread, which the runtime never
// ends: the test's goroutine below gets a thread that does end.
func init() { runtime.LockOSThread() }

// A child started from a goroutine whose thread then ends (a locked
// goroutine that returns locked, as the sampler's loop does) lives on:
// the signal is tied to the forking thread, which is Start's own.
func TestChildOutlivesCallersThread(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		errc <- Start(cmd)
	}()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if cmd.SysProcAttr.Pdeathsig != syscall.SIGKILL {
		t.Fatalf("parent-death signal %v; want SIGKILL", cmd.SysProcAttr.Pdeathsig)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	select {
	case <-exited:
		t.Fatalf("the child ended with the thread of the goroutine that started it: %v", cmd.ProcessState)
	case <-time.After(time.Second):
	}
}

package host

import (
	"bytes"
	"testing"
	"time"
)

// waitingAgent is an agent holding one process, number 1, that has not
// exited, its standard output out.
func waitingAgent() (*Agent, *cappedBuffer) {
	out := &cappedBuffer{}
	a := &Agent{procs: map[int]*agentProc{1: {p: &Proc{done: make(chan struct{})}, out: out}}}
	return a, out
}

// TestAgentWaitAnswersOutput: the session's Wait for a process answers as
// soon as the process prints more than the session has, not when its
// wait runs out: the line bench mix prints once its connections are
// open starts the window's sampling, which the session's follow of a
// process on a host of its own once passed on up to a second late (the
// threads' polls of a one-second window all came after its end).
func TestAgentWaitAnswersOutput(t *testing.T) {
	a, out := waitingAgent()
	answered := make(chan AgentExit, 1)
	go func() {
		var x AgentExit
		if err := a.Wait(AgentWait{ID: 1, Wait: time.Hour}, &x); err != nil {
			t.Error(err)
		}
		answered <- x
	}()
	out.Write([]byte("opened at 1\n"))
	x := <-answered // an hour's wait: the test's own timeout says it never came
	if x.Exited || string(x.Stdout) != "opened at 1\n" {
		t.Errorf("Wait answered exited %v, stdout %q; want the line printed, not exited", x.Exited, x.Stdout)
	}
}

// TestAgentWaitHasSeen: what the session has seen wakes no Wait; more
// does, already there or yet to come; a buffer at its cap wakes none.
func TestAgentWaitHasSeen(t *testing.T) {
	a, out := waitingAgent()
	out.Write([]byte("a\n"))
	var x AgentExit
	if err := a.Wait(AgentWait{ID: 1, Wait: 10 * time.Millisecond, Seen: 2}, &x); err != nil || string(x.Stdout) != "a\n" {
		t.Errorf("Wait having seen it all: %q, %v; want the same output after the wait", x.Stdout, err)
	}
	if err := a.Wait(AgentWait{ID: 1, Wait: time.Hour, Seen: 1}, &x); err != nil || string(x.Stdout) != "a\n" {
		t.Errorf("Wait having seen a byte of two: %q, %v; want the output at once", x.Stdout, err)
	}
	full := &cappedBuffer{}
	full.Write(bytes.Repeat([]byte("x"), maxStdout+1))
	wake := full.longer(maxStdout)
	full.Write([]byte("more\n")) // past the cap: kept nowhere
	select {
	case <-wake:
		t.Error("a write past the cap woke a waiter; want none, nothing was added")
	default:
	}
}

package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	sd "github.com/coreos/go-systemd/v22/dbus"
	godbus "github.com/godbus/dbus/v5"
)

// Under systemd on cgroup v2 a session's cgroups go in a transient scope
// unit that systemd delegates to it (Delegate=yes): systemd owns every
// other cgroup, a login session's scope or a service's holds other
// processes, and neither has the cpuset controller to hand on. The scope
// holds this process while the session runs, in the slice of the unit
// bench was started in and bound to that unit; bench moves back to where
// it was when the session ends, and the emptied scope goes.

// delegator asks the service manager for a cgroup of the session's own.
type delegator interface {
	// delegate starts the transient scope unit req asks for, holding
	// req.pid with its cgroup delegated (every controller), and returns
	// the scope's cgroup path (in req.slice). started says whether
	// systemd took the request: from then on the scope may hold the
	// process and must be stopped, even when err says that its start
	// was not seen to complete.
	delegate(req scopeRequest) (cgroup string, started bool, err error)
	// stopping says whether a unit is being stopped: the session's scope
	// is when the unit bench was started in was stopped.
	stopping(unit string) (bool, error)
	// stop stops a unit and waits for it to go, killing what is left in
	// it, and reports whether it was loaded; a unit not loaded is no
	// error.
	stop(unit string) (bool, error)
}

// scopeUnit is the name of a session's scope: one per prefix, as the lock
// allows one session per prefix.
func scopeUnit(prefix string) string {
	return prefix + "session.scope"
}

// agentScope is the name of the scope of a host's roles that an agent
// places: named by the agent's process too, since hosts may share one
// systemd (containers, the tests' lab of hosts), each with its own /run
// and so its own lock. A killed agent's scope is found by the name its
// lock recorded.
func agentScope(prefix string, pid int) string {
	return prefix + "session-" + strconv.Itoa(pid) + ".scope"
}

// scopeRequest is the scope a session asks systemd for.
type scopeRequest struct {
	unit   string // the scope's name (scopeUnit)
	pid    int    // the process it holds: bench
	caller string // the unit bench was started in, which the scope is bound to; "" for none
	slice  string // the slice the scope goes in, the caller's; "" for systemd's default
}

// newScopeRequest is the scope named unit for process pid, started in
// cgroup own (its v2 path): bound to the unit own is in, in that unit's
// slice.
func newScopeRequest(unit string, pid int, own string) scopeRequest {
	caller, slice := cgroupUnit(own)
	return scopeRequest{unit: unit, pid: pid, caller: caller, slice: slice}
}

// cgroupUnit returns the systemd unit a v2 cgroup path is in and the
// slice that unit is in, read off the path as systemd reads it
// (cg_path_get_unit and cg_path_get_slice, which systemd-run
// --slice-inherit uses): the leading components named *.slice are the
// slices, the last of them the unit's (the root slice, "-.slice", when
// there is none), and the component after them is the unit; what is
// beneath the unit (a delegated unit's own cgroups) does not matter. A
// path in no unit (the root cgroup, a slice, a cgroup named as no unit
// that holds processes) returns "" and "".
func cgroupUnit(path string) (unit, slice string) {
	slice = "-.slice"
	for _, c := range strings.Split(strings.Trim(path, "/"), "/") {
		// systemd escapes a name the kernel's files could clash with
		// ("cpu.service") with a leading underscore.
		c = strings.TrimPrefix(c, "_")
		switch {
		case len(c) > len(".slice") && strings.HasSuffix(c, ".slice"):
			slice = c
		case strings.HasSuffix(c, ".service"), strings.HasSuffix(c, ".scope"):
			return c, slice
		default:
			return "", ""
		}
	}
	return "", ""
}

// scopeProperties are the properties of the transient scope req asks
// for, its caller being in state callerState (its ActiveState).
//
// The scope is bound to the unit bench was started in, so that stopping
// that unit (a CI runner's service stopped as its job is cancelled, a
// login session terminated) stops the session too: systemd sends SIGTERM
// to everything in the scope, bench tears down as on Ctrl-C, and the
// lock is free once it exits.
//
//   - A service: BindsTo=, which stops the scope when the service is
//     stopped and when it ends on its own (its main process exited). A
//     service's state follows its main process, so bench leaving the
//     service's cgroup does not end it.
//   - A scope (a login session's, one of systemd-run --scope): PartOf=,
//     which stops the scope when that scope is stopped. Not BindsTo=: a
//     scope ends when its cgroup empties, and one that held bench alone
//     (systemd-run --scope bench run) ends as bench moves to the
//     session's scope, which BindsTo= would then stop.
//   - After= the caller when it is active (no start pending): stopping
//     the caller stops the session's scope first and the caller only once
//     the scope is gone, so that `systemctl stop` returns when bench has
//     torn down. Not while the caller is starting (a Type=oneshot service
//     runs its command while it activates): the scope's start would wait
//     for the caller's, which waits for bench.
//
// Slice= is the caller's, so that what the slice sets (AllowedCPUs=,
// MemoryMax=, ...) holds for the session as for the unit that started
// it; systemd's default would put the scope in system.slice.
//
// A caller inactive or failed is none that bench runs in (a cgroup named
// as a unit systemd does not know): the scope is bound to nothing.
func scopeProperties(req scopeRequest, callerState string) []sd.Property {
	props := []sd.Property{
		sd.PropDescription("bench session (" + req.unit + ")"),
		sd.PropPids(uint32(req.pid)),
		{Name: "Delegate", Value: godbus.MakeVariant(true)},
		// A scope that failed goes too, not only one that ended well.
		{Name: "CollectMode", Value: godbus.MakeVariant("inactive-or-failed")},
	}
	if req.slice != "" {
		props = append(props, sd.PropSlice(req.slice))
	}
	switch {
	case req.caller == "", callerState == "inactive", callerState == "failed":
		return props
	case strings.HasSuffix(req.caller, ".service"):
		props = append(props, sd.PropBindsTo(req.caller))
	default:
		props = append(props, sd.Property{Name: "PartOf", Value: godbus.MakeVariant([]string{req.caller})})
	}
	if callerState == "active" {
		props = append(props, sd.PropAfter(req.caller))
	}
	return props
}

// systemdBooted says whether systemd is the init (sd_booted(3)).
func systemdBooted() bool {
	fi, err := os.Stat("/run/systemd/system")
	return err == nil && fi.IsDir()
}

// systemdManager is systemd's manager, reached over D-Bus: its private
// socket, which root reaches without a bus daemon, else the system bus.
type systemdManager struct{}

// systemdTimeout bounds each call to systemd.
const systemdTimeout = 30 * time.Second

func (systemdManager) connect(ctx context.Context) (*sd.Conn, error) {
	c, err := sd.NewSystemdConnectionContext(ctx)
	if err == nil {
		return c, nil
	}
	c, err2 := sd.NewSystemConnectionContext(ctx)
	if err2 == nil {
		return c, nil
	}
	return nil, fmt.Errorf("reach systemd over D-Bus: %w", errors.Join(err, err2))
}

// activeState returns a unit's ActiveState: "active", "activating",
// "deactivating", "inactive", ...
func activeState(ctx context.Context, c *sd.Conn, unit string) (string, error) {
	p, err := c.GetUnitPropertyContext(ctx, unit, "ActiveState")
	if err != nil {
		return "", fmt.Errorf("state of systemd unit %s: %w", unit, err)
	}
	s, _ := p.Value.Value().(string)
	return s, nil
}

// isDBusReply says whether err is an error systemd replied with, rather
// than a call that got no answer.
func isDBusReply(err error) bool {
	var de godbus.Error
	return errors.As(err, &de)
}

// isNoSuchUnit says whether err is systemd's answer for a unit it has not
// loaded.
func isNoSuchUnit(err error) bool {
	var de godbus.Error
	return errors.As(err, &de) && de.Name == "org.freedesktop.systemd1.NoSuchUnit"
}

// call runs f on a connection to systemd, within systemdTimeout.
func (m systemdManager) call(f func(ctx context.Context, c *sd.Conn) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), systemdTimeout)
	defer cancel()
	c, err := m.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return f(ctx, c)
}

func (m systemdManager) delegate(req scopeRequest) (cgroup string, started bool, err error) {
	err = m.call(func(ctx context.Context, c *sd.Conn) error {
		var state string
		if req.caller != "" {
			var err error
			if state, err = activeState(ctx, c, req.caller); err != nil {
				return err
			}
		}
		done := make(chan string, 1)
		if _, err := c.StartTransientUnitContext(ctx, req.unit, "fail", scopeProperties(req, state), done); err != nil {
			// systemd refused, or the call got no answer and the scope
			// may have started all the same.
			started = !isDBusReply(err)
			return fmt.Errorf("start systemd scope %s: %w", req.unit, err)
		}
		started = true
		select {
		case r := <-done:
			if r != "done" {
				return fmt.Errorf("start systemd scope %s: job %s", req.unit, r)
			}
		case <-ctx.Done():
			return fmt.Errorf("start systemd scope %s: %w", req.unit, ctx.Err())
		}
		p, err := c.GetUnitTypePropertyContext(ctx, req.unit, "Scope", "ControlGroup")
		if err != nil {
			return fmt.Errorf("cgroup of systemd scope %s: %w", req.unit, err)
		}
		cgroup, _ = p.Value.Value().(string)
		if !strings.HasPrefix(cgroup, "/") {
			return fmt.Errorf("cgroup of systemd scope %s: %v is no path", req.unit, p.Value)
		}
		return nil
	})
	if err != nil {
		return "", started, err
	}
	return cgroup, true, nil
}

func (m systemdManager) stopping(unit string) (stopping bool, err error) {
	err = m.call(func(ctx context.Context, c *sd.Conn) error {
		st, err := activeState(ctx, c, unit)
		stopping = st == "deactivating"
		return err
	})
	return stopping, err
}

func (m systemdManager) stop(unit string) (loaded bool, err error) {
	err = m.call(func(ctx context.Context, c *sd.Conn) error {
		done := make(chan string, 1)
		if _, err := c.StopUnitContext(ctx, unit, "replace", done); err != nil {
			if isNoSuchUnit(err) {
				return nil
			}
			return fmt.Errorf("stop systemd scope %s: %w", unit, err)
		}
		select {
		case <-done:
		case <-ctx.Done():
			return fmt.Errorf("stop systemd scope %s: %w", unit, ctx.Err())
		}
		loaded = true
		// A failed scope stays loaded until its failure is reset.
		_ = c.ResetFailedUnitContext(ctx, unit)
		return nil
	})
	return loaded, err
}

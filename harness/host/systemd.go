package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	sd "github.com/coreos/go-systemd/v22/dbus"
	godbus "github.com/godbus/dbus/v5"
)

// Under systemd on cgroup v2 a session's cgroups go in a transient scope
// unit that systemd delegates to it (Delegate=yes): systemd owns every
// other cgroup, a login session's scope or a service's holds other
// processes, and neither has the cpuset controller to hand on. The scope
// holds this process while the session runs; it moves back to where it
// was when the session ends, and the emptied scope goes.

// delegator asks the service manager for a cgroup of the session's own.
type delegator interface {
	// delegate starts a transient scope unit named unit that holds
	// process pid and has its cgroup delegated (every controller), and
	// returns the scope's cgroup path ("/system.slice/<unit>").
	delegate(unit string, pid int) (string, error)
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

func (m systemdManager) delegate(unit string, pid int) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), systemdTimeout)
	defer cancel()
	c, err := m.connect(ctx)
	if err != nil {
		return "", err
	}
	defer c.Close()
	props := []sd.Property{
		sd.PropDescription("bench session (" + unit + ")"),
		sd.PropPids(uint32(pid)),
		{Name: "Delegate", Value: godbus.MakeVariant(true)},
		// A scope that failed goes too, not only one that ended well.
		{Name: "CollectMode", Value: godbus.MakeVariant("inactive-or-failed")},
	}
	done := make(chan string, 1)
	if _, err := c.StartTransientUnitContext(ctx, unit, "fail", props, done); err != nil {
		return "", fmt.Errorf("start systemd scope %s: %w", unit, err)
	}
	select {
	case r := <-done:
		if r != "done" {
			return "", fmt.Errorf("start systemd scope %s: job %s", unit, r)
		}
	case <-ctx.Done():
		return "", fmt.Errorf("start systemd scope %s: %w", unit, ctx.Err())
	}
	p, err := c.GetUnitTypePropertyContext(ctx, unit, "Scope", "ControlGroup")
	if err != nil {
		return "", fmt.Errorf("cgroup of systemd scope %s: %w", unit, err)
	}
	cg, _ := p.Value.Value().(string)
	if !strings.HasPrefix(cg, "/") {
		return "", fmt.Errorf("cgroup of systemd scope %s: %v is no path", unit, p.Value)
	}
	return cg, nil
}

func (m systemdManager) stop(unit string) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), systemdTimeout)
	defer cancel()
	c, err := m.connect(ctx)
	if err != nil {
		return false, err
	}
	defer c.Close()
	done := make(chan string, 1)
	if _, err := c.StopUnitContext(ctx, unit, "replace", done); err != nil {
		var de godbus.Error
		if errors.As(err, &de) && de.Name == "org.freedesktop.systemd1.NoSuchUnit" {
			return false, nil
		}
		return false, fmt.Errorf("stop systemd scope %s: %w", unit, err)
	}
	select {
	case <-done:
	case <-ctx.Done():
		return false, fmt.Errorf("stop systemd scope %s: %w", unit, ctx.Err())
	}
	// A failed scope stays loaded until its failure is reset.
	_ = c.ResetFailedUnitContext(ctx, unit)
	return true, nil
}

package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// SSH runs commands on a host over OpenSSH as the user has it: its keys
// or agent and its config, never a prompt (BatchMode), the host's key
// checked against known_hosts, where an unknown one refuses the host
// unless AcceptNewKeys.
type SSH struct {
	Dest Destination
	// AcceptNewKeys takes an unknown host's key and records it in
	// known_hosts (StrictHostKeyChecking=accept-new); a key that changed
	// is refused all the same.
	AcceptNewKeys bool
	// Config is ssh's config file instead of the user's (ssh -F): its
	// keys, known_hosts and options; "" for the user's own.
	Config string
	// Options are more of ssh's -o options, "Key=value".
	Options []string
	// ConnectTimeout bounds the connection's opening; 0 for
	// DefaultConnectTimeout.
	ConnectTimeout time.Duration
}

// DefaultConnectTimeout is how long ssh may take to open a connection: a
// host on a lab's network answers within a second.
const DefaultConnectTimeout = 10 * time.Second

// SSHProgram is OpenSSH's client.
const SSHProgram = "ssh"

// Argv is the command line that runs command on the host: ssh with
// bench's options, the destination's user and port, and the command as
// one argument (the remote shell reads it).
func (s SSH) Argv(command string) []string {
	timeout := s.ConnectTimeout
	if timeout <= 0 {
		timeout = DefaultConnectTimeout
	}
	strict := "yes"
	if s.AcceptNewKeys {
		strict = "accept-new"
	}
	argv := []string{SSHProgram, "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=" + strict,
		"-o", "ConnectTimeout=" + strconv.Itoa(int((timeout+time.Second-1)/time.Second)),
		// a connection whose host stops answering ends within 3 s
		"-o", "ServerAliveInterval=1", "-o", "ServerAliveCountMax=3"}
	if s.Config != "" {
		argv = append(argv, "-F", s.Config)
	}
	for _, o := range s.Options {
		argv = append(argv, "-o", o)
	}
	if s.Dest.Port != 0 {
		argv = append(argv, "-p", strconv.Itoa(s.Dest.Port))
	}
	if s.Dest.User != "" {
		argv = append(argv, "-l", s.Dest.User)
	}
	return append(argv, "--", s.Dest.Host, command)
}

// SSHFault is what kept ssh from running a command on a host.
type SSHFault string

// The faults ssh reports on its standard error (it exits 255).
const (
	FaultHostKeyUnknown SSHFault = "its host key is not in known_hosts"
	FaultHostKeyChanged SSHFault = "its host key is not the one known_hosts has for it"
	FaultUnreachable    SSHFault = "it cannot be reached"
	FaultAuth           SSHFault = "it refuses the login"
	FaultSSH            SSHFault = "ssh failed"
)

// sshFaults tell ssh's messages apart, the first that matches.
var sshFaults = []struct {
	re    *regexp.Regexp
	fault SSHFault
}{
	{regexp.MustCompile(`REMOTE HOST IDENTIFICATION HAS CHANGED|Host key for .* has changed`), FaultHostKeyChanged},
	{regexp.MustCompile(`No \S+ host key is known for|Host key verification failed`), FaultHostKeyUnknown},
	{regexp.MustCompile(`Permission denied|Too many authentication failures`), FaultAuth},
	{regexp.MustCompile(`Connection refused|Connection timed out|No route to host|Network is unreachable|Could not resolve hostname|Connection closed by|Connection reset by|timed out`), FaultUnreachable},
}

// SSHError is a command ssh could not run on a host: the fault and what
// ssh said.
type SSHError struct {
	Dest  Destination
	Fault SSHFault
	Said  string // ssh's standard error, its last lines
}

func (e *SSHError) Error() string {
	return fmt.Sprintf("%s: %s (ssh: %s)", e.Dest, e.Fault, e.Said)
}

// sshError reads ssh's standard error after it exited 255.
func sshError(dest Destination, stderr []byte) *SSHError {
	said := strings.TrimSpace(strings.ReplaceAll(string(stderr), "ssh: ", ""))
	e := &SSHError{Dest: dest, Fault: FaultSSH, Said: lastLines(said, 3)}
	for _, f := range sshFaults {
		if f.re.MatchString(said) {
			e.Fault = f.fault
			break
		}
	}
	return e
}

// lastLines are the last n lines of s, joined with "; ".
func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	lines = lines[max(0, len(lines)-n):]
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(slices.DeleteFunc(lines, func(l string) bool { return l == "" }), "; ")
}

// Run runs command on the host and returns its standard output. It fails
// with an *SSHError where ssh could not run it, and with the command's
// exit status and standard error where it failed.
func (s SSH) Run(ctx context.Context, command string) ([]byte, error) {
	argv := s.Argv(command)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return stdout.Bytes(), nil
	case errors.As(err, &exit) && exit.ExitCode() == 255:
		return stdout.Bytes(), sshError(s.Dest, stderr.Bytes())
	case errors.As(err, &exit):
		return stdout.Bytes(), fmt.Errorf("%s: %q exited %d: %s", s.Dest, command, exit.ExitCode(), lastLines(stderr.String(), 3))
	}
	return stdout.Bytes(), fmt.Errorf("%s: %w", s.Dest, err)
}

// RemoteFacts are what a host says of itself to a check: its kernel
// ("Linux 6.1.0-28-amd64 x86_64"), its CPU model ("" where /proc/cpuinfo
// names none), its online CPUs, and where each program asked for is,
// "" for none.
type RemoteFacts struct {
	Kernel   string
	CPUModel string
	Online   []int
	Programs map[string]string
}

// Label is the label the tables give the host when the user gives none:
// its CPU model shortened, or its architecture.
func (f RemoteFacts) Label() string {
	arch := ""
	if k := strings.Fields(f.Kernel); len(k) > 0 {
		arch = k[len(k)-1]
	}
	return ModelLabel(f.CPUModel, arch)
}

// MachineItem is the name of a host's check item whose status is the
// label the tables give the host when the user gives none (RemoteFacts.Label).
const MachineItem = "machine"

// factsScript is the command that prints a host's facts, a line each:
// "kernel ...", "cpu MODEL", "online 0-7", "program NAME PATH" or
// "program NAME -" (a program is an executable file in PATH), and for
// an absolute path, "path + PATH" or "path - PATH" (an executable file
// there or not). Its programs are names validName takes or paths
// validPath takes, each quoted; it runs in sh whatever the user's shell.
func factsScript(programs []string) string {
	var b strings.Builder
	b.WriteString(`echo "kernel $(uname -srm)"; echo "cpu $(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo | head -n 1)"; echo "online $(cat /sys/devices/system/cpu/online)"; `)
	for _, p := range programs {
		if filepath.IsAbs(p) {
			fmt.Fprintf(&b, `if [ -f %[1]s ] && [ -x %[1]s ]; then printf 'path + %%s\n' %[1]s; else printf 'path - %%s\n' %[1]s; fi; `, shellQuote(p))
			continue
		}
		fmt.Fprintf(&b, `if p=$(command -v '%s') && [ -f "$p" ] && [ -x "$p" ]; then echo "program %s $p"; else echo "program %s -"; fi; `, p, p, p)
	}
	return "exec sh -c " + shellQuote(b.String())
}

// validPath says whether p is an absolute path a line of the facts
// carries whole: no newline, no NUL, at most 4096 bytes.
func validPath(p string) bool {
	return filepath.IsAbs(p) && len(p) <= 4096 && !strings.ContainsAny(p, "\n\x00")
}

// shellQuote quotes s for the remote user's shell: in single quotes, a
// single quote written '\”.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Facts asks the host for its facts and where programs are: a name is
// looked for in PATH, an absolute path is the file's own (Programs has
// it, "" for none there).
func (s SSH) Facts(ctx context.Context, programs []string) (RemoteFacts, error) {
	for _, p := range programs {
		if !validName(p, ".-_+") && !validPath(p) {
			return RemoteFacts{}, fmt.Errorf("program %q: not a program's name", p)
		}
	}
	out, err := s.Run(ctx, factsScript(programs))
	if err != nil {
		return RemoteFacts{}, err
	}
	return parseFacts(out)
}

// parseFacts reads what factsScript printed.
func parseFacts(out []byte) (RemoteFacts, error) {
	f := RemoteFacts{Programs: map[string]string{}}
	for _, line := range strings.Split(string(out), "\n") {
		key, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
		switch key {
		case "kernel":
			f.Kernel = rest
		case "cpu":
			f.CPUModel = rest
		case "online":
			cpus, err := parseCPUList(rest)
			if err != nil {
				return f, fmt.Errorf("the host's online CPUs %q: %w", rest, err)
			}
			f.Online = cpus
		case "program":
			name, path, _ := strings.Cut(rest, " ")
			if path == "-" {
				path = ""
			}
			f.Programs[name] = path
		case "path":
			there, path, _ := strings.Cut(rest, " ")
			f.Programs[path] = ""
			if there == "+" {
				f.Programs[path] = path
			}
		}
	}
	if f.Online == nil {
		return f, fmt.Errorf("the host did not say its online CPUs: %q", lastLines(string(out), 3))
	}
	return f, nil
}

// CheckHosts says of each host of h whether a session can use it, as
// bench check does of this machine, changing nothing: whether it is
// reached (ssh as the user has it, through sshOf), whether it has the
// programs its roles need (programs; a required one missing fails), and
// whether it has the CPUs its lines name. Each item is named by the host
// ("bench@10.0.0.2: wrk"). The hosts are asked at once.
func CheckHosts(ctx context.Context, h Hosts, sshOf func(Destination) SSH, programs func(Role) (required, optional []string)) []CheckItem {
	dests := h.Destinations()
	type asked struct {
		required, optional []string
		facts              RemoteFacts
		err                error
	}
	answers := make([]asked, len(dests))
	var wg sync.WaitGroup
	for i, dest := range dests {
		a := &answers[i]
		for _, l := range h.RolesOf(dest) {
			r, o := programs(l.Role)
			a.required, a.optional = appendNew(a.required, r...), appendNew(a.optional, o...)
		}
		a.optional = slices.DeleteFunc(a.optional, func(p string) bool { return slices.Contains(a.required, p) })
		wg.Go(func() { a.facts, a.err = sshOf(dest).Facts(ctx, append(slices.Clone(a.required), a.optional...)) })
	}
	wg.Wait()
	var items []CheckItem
	for i, dest := range dests {
		lines, name := h.RolesOf(dest), dest.String()
		required, optional, facts, err := answers[i].required, answers[i].optional, answers[i].facts, answers[i].err
		if err != nil {
			items = append(items, CheckItem{Name: name, Status: "unreached", Detail: reachAdvice(err), Required: true})
			continue
		}
		items = append(items, CheckItem{Name: name, Status: "reached: " + facts.Kernel, OK: true, Required: true,
			Detail: "roles " + rolesText(lines)})
		items = append(items, CheckItem{Name: name + ": " + MachineItem, Status: facts.Label(), OK: true,
			Detail: "the tables' label of a session whose proxy it holds, unless --machine gives one"})
		for _, p := range required {
			items = append(items, programItem(name, p, facts.Programs[p], true))
		}
		for _, p := range optional {
			items = append(items, programItem(name, p, facts.Programs[p], false))
		}
		for _, l := range lines {
			if missing := slices.DeleteFunc(slices.Clone(l.CPUs), func(c int) bool { return slices.Contains(facts.Online, c) }); len(missing) > 0 {
				items = append(items, CheckItem{Name: name + ": cpus", Status: "online " + CPUList(facts.Online), Required: true,
					Detail: fmt.Sprintf("%s, line %d: cpus=%s names CPUs it does not have: %s", h.Name, l.Line, CPUList(l.CPUs), CPUList(missing))})
			}
		}
	}
	return items
}

// programItem is the check of program p on the host name: found at path
// ("" for not found).
func programItem(name, p, path string, required bool) CheckItem {
	it := CheckItem{Name: name + ": " + p, Status: path, OK: path != "", Required: required}
	if path == "" {
		it.Status, it.Detail = "missing", "install it on "+name
		if !required {
			it.Detail += "; its column is left out without it"
		}
	}
	return it
}

// reachAdvice says what to do about a host ssh could not reach.
func reachAdvice(err error) string {
	var e *SSHError
	if !errors.As(err, &e) {
		return err.Error()
	}
	switch e.Fault {
	case FaultHostKeyUnknown:
		return fmt.Sprintf("%s; check its fingerprint and add it to known_hosts (ssh %s true), or let the session take it (--accept-new-host-keys)", e, e.Dest)
	case FaultAuth:
		return fmt.Sprintf("%s; ssh %s must log in with a key or an agent, no password", e, e.Dest)
	}
	return e.Error()
}

// rolesText names the roles of lines: "client, origin".
func rolesText(lines []HostLine) string {
	var rs []string
	for _, l := range lines {
		rs = append(rs, string(l.Role))
	}
	return strings.Join(rs, ", ")
}

func appendNew(to []string, items ...string) []string {
	for _, it := range items {
		if !slices.Contains(to, it) {
			to = append(to, it)
		}
	}
	return to
}

// Package profile reads what perf recorded of a proxy's CPUs and gives
// it as the files a run keeps: folded stacks (a "frame;frame;frame count"
// line a stack, root first, as flame graph tools read them), a pprof
// profile.proto (go tool pprof reads it), and the top view, the
// functions of most self time. It is pure: perf itself runs in
// harness/host.
package profile

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
)

// ScriptFields are the fields 'perf script -F' is asked for, the ones
// ParseScript reads: a sample's header line "comm pid/tid period", then a
// line a frame of its call chain, leaf first, "ip sym (dso)", and a blank
// line.
const ScriptFields = "comm,pid,tid,period,ip,sym,dso"

// Unknown is what perf prints for a symbol or a mapping it could not name.
const Unknown = "[unknown]"

// Frame is a frame of a sample's call chain.
type Frame struct {
	Addr uint64 // the instruction pointer, as perf gives it
	Func string // the function; "[dso]" where perf named none in a known mapping, Unknown where neither is known
	DSO  string // the mapping: a binary's or library's path, "[kernel.kallsyms]", or Unknown
}

// Sample is one of perf's samples: the thread it hit and its call chain.
type Sample struct {
	Comm   string
	PID    int
	TID    int
	Period int64   // the sample's weight: nanoseconds of CPU for the cpu-clock event
	Stack  []Frame // leaf first, as perf gives it
}

// SyntaxError is a line of perf script's output that does not read.
type SyntaxError struct {
	Line int
	Text string
	Err  error
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("perf script:%d: %q: %v", e.Line, clip(e.Text), e.Err)
}

func (e *SyntaxError) Unwrap() error { return e.Err }

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}

// ParseScript reads the output of 'perf script -F ScriptFields'.
func ParseScript(r io.Reader) ([]Sample, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	var out []Sample
	var cur *Sample
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		switch {
		case strings.TrimSpace(line) == "":
			cur = nil
		case line[0] == ' ' || line[0] == '\t':
			if cur == nil {
				return nil, &SyntaxError{n, line, fmt.Errorf("a frame outside a sample")}
			}
			f, err := parseFrame(line)
			if err != nil {
				return nil, &SyntaxError{n, line, err}
			}
			cur.Stack = append(cur.Stack, f)
		default:
			s, err := parseHeader(line)
			if err != nil {
				return nil, &SyntaxError{n, line, err}
			}
			out = append(out, s)
			cur = &out[len(out)-1]
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read perf script: %w", err)
	}
	return out, nil
}

// parseHeader reads "comm pid/tid period"; comm may hold spaces.
func parseHeader(line string) (Sample, error) {
	f := strings.Fields(line)
	if len(f) < 3 {
		return Sample{}, fmt.Errorf("a sample's header is comm pid/tid period")
	}
	period, err := strconv.ParseInt(f[len(f)-1], 10, 64)
	if err != nil || period <= 0 {
		return Sample{}, fmt.Errorf("period %q is not a positive number", f[len(f)-1])
	}
	pid, tid, ok := strings.Cut(f[len(f)-2], "/")
	p, err1 := strconv.Atoi(pid)
	t, err2 := strconv.Atoi(tid)
	// -1: perf knew no thread for the sample (comm ":-1"), as of a thread
	// that ended before perf read its name.
	if !ok || err1 != nil || err2 != nil || p < -1 || t < -1 {
		return Sample{}, fmt.Errorf("%q is not pid/tid", f[len(f)-2])
	}
	return Sample{Comm: strings.Join(f[:len(f)-2], " "), PID: p, TID: t, Period: period}, nil
}

// parseFrame reads "ip sym (dso)"; sym may hold spaces and parentheses
// (C++'s), the dso is the last parenthesized part.
func parseFrame(line string) (Frame, error) {
	s := strings.TrimSpace(line)
	ip, rest, _ := strings.Cut(s, " ")
	addr, err := strconv.ParseUint(ip, 16, 64)
	if err != nil {
		return Frame{}, fmt.Errorf("address %q is not hexadecimal", ip)
	}
	rest = strings.TrimSpace(rest)
	i := strings.LastIndex(rest, " (")
	if i < 0 || !strings.HasSuffix(rest, ")") {
		return Frame{}, fmt.Errorf("a frame is ip sym (dso)")
	}
	sym, dso := rest[:i], rest[i+2:len(rest)-1]
	if dso == "" {
		dso = Unknown
	}
	if sym == "" || sym == Unknown {
		sym = Unknown
		if dso != Unknown {
			// A stripped binary's function: named by its binary,
			// as flame graph tools do, not an address each.
			sym = "[" + filepath.Base(dso) + "]"
		}
	}
	return Frame{Addr: addr, Func: sym, DSO: dso}, nil
}

// Folded writes the samples as folded stacks: a line a distinct stack,
// the thread's command first, then its frames from the root to the leaf,
// separated by ';', and the number of samples of that stack, in the order
// the stacks first appear.
func Folded(w io.Writer, samples []Sample) error {
	var order []string
	count := map[string]int{}
	var b strings.Builder
	for _, s := range samples {
		b.Reset()
		b.WriteString(foldName(s.Comm))
		for i := len(s.Stack) - 1; i >= 0; i-- {
			b.WriteByte(';')
			b.WriteString(foldName(s.Stack[i].Func))
		}
		k := b.String()
		if count[k] == 0 {
			order = append(order, k)
		}
		count[k]++
	}
	var buf bytes.Buffer
	for _, k := range order {
		fmt.Fprintf(&buf, "%s %d\n", k, count[k])
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// foldName keeps a name from breaking a folded line: ';' parts frames and
// the last space the count, a newline the line.
func foldName(s string) string {
	return strings.NewReplacer(";", ":", "\n", " ", "\r", " ").Replace(s)
}

// OfProcesses is the samples of the processes pids.
func OfProcesses(samples []Sample, pids []int) []Sample {
	keep := map[int]bool{}
	for _, p := range pids {
		keep[p] = true
	}
	var out []Sample
	for _, s := range samples {
		if keep[s.PID] {
			out = append(out, s)
		}
	}
	return out
}

package report

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Modes are the values the mode column may hold.
var Modes = []string{
	"http", "connect", "socks", "relay", "tls-term", "tls-init",
	"mix-http", "mix-connect", "mix-socks", "mix-relay",
	"tls-tunnel", "tls-handshake",
}

// Groups are the values the group column may hold: which side of the
// tables' ‖ a column sits on.
var Groups = []string{"baseline", "copy", "splice"}

// required lists the columns without which a file cannot be reported; the
// others (latencies, the client's and origin's figures, the note) may be
// missing and read as zero or empty.
var required = []string{
	"machine", "session", "proxy", "group", "mode", "load", "rep",
	"seconds", "requests", "bytes", "cpu_proxy_s", "bound", "peak_mem_bytes", "status",
}

// SyntaxError is bad input at a place in a file.
type SyntaxError struct {
	File string
	Line int
	Err  error
}

func (e *SyntaxError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %v", e.File, e.Err)
	}
	return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
}

func (e *SyntaxError) Unwrap() error { return e.Err }

// ReadFiles reads the session files at paths, in order, and returns their
// runs. The first bad file or line ends the reading with its error.
func ReadFiles(paths []string) ([]Row, error) {
	var rows []Row
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("read session file: %w", err)
		}
		rs, err := Read(f, p)
		f.Close()
		if err != nil {
			return nil, err
		}
		rows = append(rows, rs...)
	}
	return rows, nil
}

// Read reads one session file from r; name is the file's name in errors.
// Columns are matched by their header name, unknown ones are ignored, and a
// missing required column, an empty or non-numeric figure of an ok run, or
// an unknown mode, group, bound or status is an error naming its line.
func Read(r io.Reader, name string) ([]Row, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err == io.EOF {
		return nil, &SyntaxError{File: name, Err: errors.New("empty file: want a header line with the columns of DESIGN.md")}
	}
	if err != nil {
		return nil, csvError(name, err)
	}
	col := make(map[string]int, len(header))
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		if _, dup := col[h]; !dup {
			col[h] = i
		}
	}
	for _, c := range required {
		if _, ok := col[c]; !ok {
			return nil, &SyntaxError{File: name, Line: 1, Err: fmt.Errorf("missing required column %q", c)}
		}
	}
	var rows []Row
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return nil, csvError(name, err)
		}
		line, _ := cr.FieldPos(0)
		p := rowParser{rec: rec, col: col}
		row := p.parse()
		if p.err != nil {
			return nil, &SyntaxError{File: name, Line: line, Err: p.err}
		}
		row.Source, row.Line = name, line
		rows = append(rows, row)
	}
}

func csvError(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &SyntaxError{File: name, Line: pe.Line, Err: pe.Err}
	}
	return fmt.Errorf("read %s: %w", name, err)
}

// rowParser turns one record into a Row, keeping the first error.
type rowParser struct {
	rec    []string
	col    map[string]int
	failed bool // the run failed: its figures may be empty
	err    error
}

func (p *rowParser) field(name string) (string, bool) {
	i, ok := p.col[name]
	if !ok {
		return "", false
	}
	return strings.TrimSpace(p.rec[i]), true
}

func (p *rowParser) fail(name, format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf("column %q: "+format, append([]any{name}, args...)...)
	}
}

// text returns a text column; required ones must not be empty.
func (p *rowParser) text(name string, nonEmpty bool) string {
	s, _ := p.field(name)
	if s == "" && nonEmpty {
		p.fail(name, "is empty")
	}
	return s
}

// oneOf returns a column that must hold one of allowed.
func (p *rowParser) oneOf(name string, allowed []string, what string) string {
	s, present := p.field(name)
	if !present {
		return ""
	}
	for _, a := range allowed {
		if s == a {
			return s
		}
	}
	p.fail(name, "unknown %s %q (want %s)", what, s, strings.Join(allowed, ", "))
	return s
}

// number parses a numeric column. An empty value is zero when the column
// is optional or the run failed, an error otherwise.
func (p *rowParser) number(name string, isInt bool) (float64, int64, bool) {
	s, present := p.field(name)
	if s == "" {
		if present && !p.failed && slices.Contains(required, name) {
			p.fail(name, "is empty")
		}
		return 0, 0, false
	}
	if isInt {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			p.fail(name, "%q is not a whole number", s)
		}
		return float64(v), v, true
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		p.fail(name, "%q is not a number", s)
	}
	return v, int64(v), true
}

func (p *rowParser) float(name string) float64 {
	v, _, _ := p.number(name, false)
	return v
}

func (p *rowParser) int(name string) int64 {
	_, v, _ := p.number(name, true)
	return v
}

func (p *rowParser) parse() Row {
	var r Row
	r.Status = p.oneOf("status", []string{"ok", "failed"}, "status")
	p.failed = r.Status == "failed"
	r.Machine = p.text("machine", true)
	r.Session = p.text("session", true)
	r.Proxy = p.text("proxy", true)
	r.Kind = p.text("kind", false)
	r.Group = p.oneOf("group", Groups, "group")
	r.Mode = p.oneOf("mode", Modes, "mode")
	r.Load = p.text("load", true)
	r.Rep = int(p.int("rep"))
	if s := p.text("started", false); s != "" {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			p.fail("started", "%q is not an RFC 3339 time", s)
		}
		r.Started = t
	}
	r.Seconds = p.float("seconds")
	if !p.failed && r.Seconds <= 0 {
		p.fail("seconds", "%v is not a positive length of a window", r.Seconds)
	}
	r.Requests = p.int("requests")
	r.Bytes = p.int("bytes")
	r.Errors = p.int("errors")
	r.Timeouts = p.int("timeouts")
	var has50, has99 bool
	r.P50Ms, _, has50 = p.number("p50_ms", false)
	r.P99Ms, _, has99 = p.number("p99_ms", false)
	r.HasLatency = has50 || has99
	r.CPUProxy = p.float("cpu_proxy_s")
	r.CPUClient = p.float("cpu_client_s")
	r.CPUOrigin = p.float("cpu_origin_s")
	r.BusyProxy = p.float("busy_proxy")
	r.BusyClient = p.float("busy_client")
	r.BusyOrigin = p.float("busy_origin")
	r.ThreadProxy = p.float("thread_proxy")
	r.ThreadClient = p.float("thread_client")
	r.ThreadOrigin = p.float("thread_origin")
	if s, _ := p.field("bound"); s != "" {
		r.Bound = p.oneOf("bound", []string{"proxy", "client", "origin", "none"}, "bound")
	}
	r.PeakMemBytes = p.int("peak_mem_bytes")
	r.Note = p.text("note", false)
	return r
}

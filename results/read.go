package results

import (
	"bench/inputerr"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The columns the reader knows, as indexes into a file's column map.
const (
	cMachine = iota
	cSession
	cProxy
	cKind
	cGroup
	cMode
	cLoad
	cRep
	cStarted
	cSeconds
	cRequests
	cBytes
	cErrors
	cTimeouts
	cP50
	cP99
	cCPUProxy
	cCPUClient
	cCPUOrigin
	cBusyProxy
	cBusyClient
	cBusyOrigin
	cThreadProxy
	cThreadClient
	cThreadOrigin
	cBound
	cPeakMem
	cStatus
	cNote
	cThrottledPeriods
	cThrottledS
	cSplicePipes
	cP999
	cOffered
	cClosed
	nColumns
)

// required lists the columns without which a file cannot be reported; the
// others (latencies, the client's and origin's figures, the note) may be
// missing and read as zero or empty.
var required = [nColumns]bool{
	cMachine: true, cSession: true, cProxy: true, cGroup: true, cMode: true, cLoad: true, cRep: true,
	cSeconds: true, cRequests: true, cBytes: true, cCPUProxy: true, cBound: true, cPeakMem: true, cStatus: true,
}

// ReadInput reads a file bench was given, or found beside one, of at
// most MaxInput bytes; when it cannot, the error is an inputerr.Error naming
// it.
func ReadInput(path string) ([]byte, error) { return readInput(path, MaxInput) }

// readInput is ReadInput of a file of at most limit bytes: a larger one is
// refused, read no further than the limit.
func readInput(path string, limit int64) ([]byte, error) {
	refuse := func(err error) error {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is the inputerr.Error's
		}
		return &inputerr.Error{File: path, Err: err}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, refuse(err)
	}
	defer f.Close()
	var b bytes.Buffer
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		b.Grow(int(min(st.Size(), limit)) + bytes.MinRead)
	}
	if _, err := b.ReadFrom(io.LimitReader(f, limit+1)); err != nil {
		return nil, refuse(err)
	}
	if int64(b.Len()) > limit {
		return nil, refuse(fmt.Errorf("larger than %d bytes, more than bench writes in such a file", limit))
	}
	return b.Bytes(), nil
}

// ErrNoRuns is the error of a session file with its header alone: there is
// nothing to report of it. A session killed in its first run leaves one,
// which the session continued reads as no runs done.
var ErrNoRuns = errors.New("no runs: the header and no line after it")

// ReadFiles reads the session files at paths, in order, and returns their
// runs. A file given twice, under any name, is refused, and so is a run
// (a cell's repetition in a session of a machine, and a sweep's step in
// it: RunID) that two lines hold, a sweep's row whose note begins with a
// step it cannot read (ParseStep), and a file without a run
// (ErrNoRuns). The first bad file or line ends the reading with its
// inputerr.Error.
func ReadFiles(paths []string) ([]Row, error) {
	var rd reader
	read := make([]fs.FileInfo, len(paths))
	for i, p := range paths {
		read[i], _ = os.Stat(p) // one that cannot be is ReadInput's error
		for j, prev := range read[:i] {
			if read[i] != nil && prev != nil && os.SameFile(read[i], prev) {
				return nil, &inputerr.Error{File: p, Err: fmt.Errorf("the same file as %s, given before it: give each file once", paths[j])}
			}
		}
		data, err := readInput(p, MaxCSV)
		if err != nil {
			return nil, err
		}
		if err := rd.read(data, p); err != nil {
			return nil, err
		}
	}
	return rd.rows, nil
}

// reader reads session files one after another into their rows, keeping
// where each run was seen so that no run is read twice.
type reader struct {
	rows []Row
	seen map[RunID]int // the index in rows of each run read
}

// read appends the runs of one file's data, named name, to rd.rows.
func (rd *reader) read(data []byte, name string) error {
	if n := longLine(data); n > 0 {
		return &inputerr.Error{File: name, Line: n, Err: fmt.Errorf("a line longer than %d bytes: no run's row is so long", MaxLine)}
	}
	cr := csv.NewReader(bytes.NewReader(data))
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err == io.EOF {
		return &inputerr.Error{File: name, Err: errors.New("empty file: want a header line with the columns of DESIGN.md")}
	}
	if err != nil {
		return csvError(name, err)
	}
	p := rowParser{strs: make(map[string]string)}
	for i := range p.col {
		p.col[i] = -1
	}
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		for c, col := range Header {
			if h != col {
				continue
			}
			if p.col[c] >= 0 {
				return &inputerr.Error{File: name, Line: 1, Err: fmt.Errorf("column %q is named twice, as columns %d and %d: which one holds the runs' is not known", col, p.col[c]+1, i+1)}
			}
			p.col[c] = i
		}
	}
	for c, req := range required {
		if req && p.col[c] < 0 {
			return &inputerr.Error{File: name, Line: 1, Err: fmt.Errorf("missing required column %q", Header[c])}
		}
	}
	// A row a line: size the result once rather than grow it, for as
	// many rows as the file can hold (a row is a byte a column at least:
	// its commas and its newline), and no more than preRows.
	lines := min(bytes.Count(data, []byte{'\n'}), len(data)/len(header), preRows)
	rd.rows = slices.Grow(rd.rows, lines)
	if rd.seen == nil {
		rd.seen = make(map[RunID]int, lines)
	}
	for n := 0; ; n++ {
		rec, err := cr.Read()
		if err == io.EOF && n == 0 {
			return &inputerr.Error{File: name, Err: ErrNoRuns}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return csvError(name, err)
		}
		line, _ := cr.FieldPos(0)
		p.rec, p.err = rec, nil
		rd.rows = append(rd.rows, Row{})
		row := &rd.rows[len(rd.rows)-1]
		p.parse(row)
		if p.err != nil {
			return &inputerr.Error{File: name, Line: line, Err: p.err}
		}
		row.Source, row.Line = name, line
		id := row.ID()
		if i, ok := rd.seen[id]; ok {
			first := &rd.rows[i]
			return &inputerr.Error{File: name, Line: line, Err: fmt.Errorf("%s is also at %s:%d (a run is one line of one file)", describeRun(id), first.Source, first.Line)}
		}
		rd.seen[id] = len(rd.rows) - 1
	}
}

// preRows is the most rows the reader makes room for before it reads
// them: a session's, some megabytes; a file of more grows as it is read.
const preRows = 1 << 14

// longLine is the number of data's first line longer than MaxLine, 0
// where there is none.
func longLine(data []byte) int {
	for n := 1; len(data) > 0; n++ {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			i = len(data)
		}
		if i > MaxLine {
			return n
		}
		data = data[min(i+1, len(data)):]
	}
	return 0
}

// describeRun names a run as an error does: "the run of nginx in
// http-ka-1k, rep 1, of session s on machine m"; a sweep's step after its
// repetition, "rep 1, step 3 at 2000.0/s".
func describeRun(id RunID) string {
	rep := strconv.Itoa(id.Rep)
	if id.Step != "" {
		rep += ", " + id.Step
	}
	return fmt.Sprintf("the run of %s in %s, rep %s, of session %s on machine %s", id.Proxy, ScenarioName(id.Mode, id.Load), rep, id.Session, id.Machine)
}

func csvError(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &inputerr.Error{File: name, Line: pe.Line, Err: pe.Err}
	}
	return &inputerr.Error{File: name, Err: err}
}

// rowParser turns one record into a Row, keeping the first error.
type rowParser struct {
	col    [nColumns]int // the record's index of each column, -1 if absent
	rec    []string
	failed bool // the run failed: its figures may be empty
	err    error
	// strs holds one copy of each text value, so that rows share their
	// machine, proxy, load, ... and not the record each was read from.
	strs map[string]string
}

func (p *rowParser) field(c int) (string, bool) {
	i := p.col[c]
	if i < 0 {
		return "", false
	}
	return strings.TrimSpace(p.rec[i]), true
}

func (p *rowParser) fail(c int, format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf("column %q: "+format, append([]any{Header[c]}, args...)...)
	}
}

// text returns a text column; required ones must not be empty.
func (p *rowParser) text(c int) string {
	s, _ := p.field(c)
	if s == "" {
		if required[c] {
			p.fail(c, "is empty")
		}
		return ""
	}
	if v, ok := p.strs[s]; ok {
		return v
	}
	s = strings.Clone(s)
	p.strs[s] = s
	return s
}

// oneOf returns a column that must hold one of allowed, or be absent.
func oneOf[T ~string](p *rowParser, c int, allowed []T) T {
	s, present := p.field(c)
	if !present {
		return ""
	}
	for _, a := range allowed {
		if s == string(a) {
			return a
		}
	}
	want := make([]string, len(allowed))
	for i, a := range allowed {
		want[i] = string(a)
	}
	p.fail(c, "unknown %s %q (want %s)", Header[c], s, strings.Join(want, ", "))
	return T(s)
}

// The numeric columns. An empty value is zero when the column is
// optional or the run failed, an error otherwise. Every figure of a run
// is a count, a length of time, a share or a size: one that is negative,
// infinite, not a number or past MaxCount is refused.

// value is column c's value, and whether it has one.
func (p *rowParser) value(c int) (string, bool) {
	s, present := p.field(c)
	if s == "" {
		if present && !p.failed && required[c] {
			p.fail(c, "is empty")
		}
		return "", false
	}
	return s, true
}

// whole parses a count, and says whether the column has one.
func (p *rowParser) whole(c int) (int64, bool) {
	s, ok := p.value(c)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(s, 10, 64)
	switch {
	case errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(s, "-"), err == nil && v > MaxCount:
		p.fail(c, "%q is past 2^53: no run counts so many", s)
		v = 0
	case err != nil:
		p.fail(c, "%q is not a whole number", s)
	case v < 0:
		p.fail(c, "%q is negative: want 0 or more", s)
	}
	return v, true
}

// real parses any other figure, and says whether the column has one.
func (p *rowParser) real(c int) (float64, bool) {
	s, ok := p.value(c)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange):
		p.fail(c, "%q is not a number", s)
	case math.IsInf(v, 0), math.IsNaN(v): // ParseFloat's ErrRange too, but for an underflow to 0
		p.fail(c, "%q is not a finite number", s)
		v = 0
	case v < 0:
		p.fail(c, "%q is negative: want 0 or more", s)
	case v > MaxCount:
		p.fail(c, "%q is past 2^53: no run's figure is so large", s)
		v = 0
	}
	return v, true
}

func (p *rowParser) float(c int) float64 {
	v, _ := p.real(c)
	return v
}

func (p *rowParser) int(c int) int64 {
	v, _ := p.whole(c)
	return v
}

func (p *rowParser) parse(r *Row) {
	r.Status = oneOf(p, cStatus, Statuses)
	p.failed = r.Status == Failed
	r.Machine = p.text(cMachine)
	r.Session = p.text(cSession)
	r.Proxy = p.text(cProxy)
	r.Kind = p.text(cKind)
	r.Group = oneOf(p, cGroup, Groups)
	r.Mode = oneOf(p, cMode, Modes)
	r.Load = p.text(cLoad)
	r.Rep = int(p.int(cRep))
	if s, _ := p.field(cStarted); s != "" {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			p.fail(cStarted, "%q is not an RFC 3339 time", s)
		}
		r.Started = t
	}
	r.Seconds = p.float(cSeconds)
	switch {
	case !p.failed && r.Seconds <= 0:
		p.fail(cSeconds, "%v is not a positive length of a window", r.Seconds)
	case r.Seconds != 0 && (r.Seconds < MinSeconds || r.Seconds > MaxSeconds):
		// a failed run's window may be 0, none measured
		p.fail(cSeconds, "%v is not the length of a run's window: want %v s to %v s", r.Seconds, MinSeconds, MaxSeconds)
	}
	r.Requests = p.int(cRequests)
	r.Bytes = p.int(cBytes)
	r.Errors = p.int(cErrors)
	r.Timeouts = p.int(cTimeouts)
	var has50, has99 bool
	r.P50Ms, has50 = p.real(cP50)
	r.P99Ms, has99 = p.real(cP99)
	r.HasLatency = has50 || has99
	r.CPUProxy = p.float(cCPUProxy)
	r.CPUClient = p.float(cCPUClient)
	r.CPUOrigin = p.float(cCPUOrigin)
	r.BusyProxy = p.float(cBusyProxy)
	r.BusyClient = p.float(cBusyClient)
	r.BusyOrigin = p.float(cBusyOrigin)
	r.ThreadProxy = p.float(cThreadProxy)
	r.ThreadClient = p.float(cThreadClient)
	r.ThreadOrigin = p.float(cThreadOrigin)
	if s, _ := p.field(cBound); s != "" {
		r.Bound = oneOf(p, cBound, Bounds)
	}
	r.PeakMemBytes = p.int(cPeakMem)
	r.Note = p.text(cNote)
	p.checkTexts(r)
	var hasPeriods, hasThrottled bool
	r.ThrottledPeriods, hasPeriods = p.whole(cThrottledPeriods)
	r.ThrottledS, hasThrottled = p.real(cThrottledS)
	r.Throttling = hasPeriods || hasThrottled
	r.SplicePipes, r.HasPipes = p.whole(cSplicePipes)
	r.P999Ms, r.HasP999 = p.real(cP999)
	r.OfferedRate, r.HasOffered = p.real(cOffered)
	r.ClosedReads, r.HasClosed = p.whole(cClosed)
	if r.Load == LoadSweep {
		if _, _, err := ParseStep(r.Note); err != nil {
			p.fail(cNote, "%v", err)
		}
	}
	if !p.failed && p.err == nil && !r.Measured() {
		c := cRequests
		switch {
		case r.Load == LoadSweep:
			c = cOffered
		case r.Cell().Unit() == Gbits:
			c = cBytes
		}
		p.fail(c, "is 0 in an ok run: a run that measured nothing its figure counts is failed")
	}
}

package results

import (
	"bench/inputerr"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// readFrom reads one session file's text from r as ReadFiles reads a
// file; name is the file's name in errors.
func readFrom(r io.Reader, name string) ([]Row, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	var rd reader
	err = rd.read(data, name)
	return rd.rows, err
}

const minimalHeader = "machine,session,proxy,group,mode,load,rep,seconds,requests,bytes,cpu_proxy_s,bound,peak_mem_bytes,status"

func TestReadByName(t *testing.T) {
	// columns in another order, an unknown one, the optional ones missing
	in := "extra,status,machine,session,proxy,group,mode,load,rep,seconds,requests,bytes,cpu_proxy_s,bound,peak_mem_bytes,note\n" +
		"x,ok,ARM (M4),s1,nginx,copy,http,ka-1k,2,10,150000,0,1.5,client,30000000,\n" +
		"y,failed,ARM (M4),s1,squid,copy,http,ka-1k,1,,,,,,,connection reset\n"
	rows, err := readFrom(strings.NewReader(in), "m4.csv")
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if len(rows) != 2 {
		t.Fatalf("Read gave %d rows; want 2", len(rows))
	}
	r := rows[0]
	if r.Machine != "ARM (M4)" || r.Proxy != "nginx" || r.Rep != 2 || r.Requests != 150000 || r.Bound != "client" ||
		r.PeakMemBytes != 30000000 || r.CPUProxy != 1.5 || r.HasLatency || r.Source != "m4.csv" || r.Line != 2 {
		t.Errorf("Read row 1 = %+v", r)
	}
	if f := rows[1]; f.Status != "failed" || f.Note != "connection reset" || f.Line != 3 {
		t.Errorf("Read row 2 = %+v", f)
	}
	// A file from before the throttling and pipe columns: unknown, not
	// none.
	if r.Throttling || r.HasPipes {
		t.Errorf("Read row 1 without the columns = %+v; want the throttling and the pipes unknown", r)
	}
}

func TestReadThrottlingAndPipes(t *testing.T) {
	in := minimalHeader + ",throttled_periods,throttled_s,splice_pipes\n" +
		"ARM,s1,haproxy splice-auto,splice,http,ka-1m,1,10,0,1000000000,1,proxy,1000,ok,95,4.750,0\n" +
		"ARM,s1,haproxy splice,splice,http,ka-1m,1,10,0,1000000000,1,proxy,1000,ok,,,3\n"
	rows, err := readFrom(strings.NewReader(in), "q.csv")
	if err != nil {
		t.Fatal(err)
	}
	a, b := rows[0], rows[1]
	if !a.Throttling || a.ThrottledPeriods != 95 || a.ThrottledS != 4.75 || !a.HasPipes || a.SplicePipes != 0 {
		t.Errorf("row 1 = %+v; want 95 periods, 4.75 s throttled, 0 pipes known", a)
	}
	if sp, known := a.Spliced(); sp || !known {
		t.Errorf("row 1 Spliced = %v, %v; want false, true", sp, known)
	}
	if b.Throttling || !b.HasPipes || b.SplicePipes != 3 {
		t.Errorf("row 2 = %+v; want no quota, 3 pipes", b)
	}
	if sp, known := b.Spliced(); !sp || !known {
		t.Errorf("row 2 Spliced = %v, %v; want true, true", sp, known)
	}
	// Written back, the empty cells stay empty.
	rec := b.Record()
	if got := strings.Join(rec[len(rec)-6:], ","); got != ",,3,,," {
		t.Errorf("Record of row 2 ends %q; want \",,3,,,\"", got)
	}
}

// TestReadP999: the 99.9th percentile reads where the column has it and is
// unknown where the cell is empty or the file predates the column; written
// back, it is what was read.
func TestReadP999(t *testing.T) {
	in := minimalHeader + ",p50_ms,p99_ms,p999_ms\n" +
		"ARM,s1,squid,copy,mix-connect,mix-3k,1,10,100,0,1,proxy,1000,ok,1.5,23.7,2001.250\n" +
		"ARM,s1,nginx,copy,http,ka-1k,1,10,100,0,1,proxy,1000,ok,0.2,0.9,\n"
	rows, err := readFrom(strings.NewReader(in), "p.csv")
	if err != nil {
		t.Fatal(err)
	}
	mix, wrk := rows[0], rows[1]
	if !mix.HasLatency || !mix.HasP999 || mix.P999Ms != 2001.25 || mix.P99Ms != 23.7 {
		t.Errorf("row 1 = %+v; want p99 23.7 ms and p99.9 2001.25 ms", mix)
	}
	if !wrk.HasLatency || wrk.HasP999 {
		t.Errorf("row 2 = %+v; want latency without a p99.9", wrk)
	}
	for i, want := range []string{"2001.250", ""} {
		rec := rows[i].Record()
		if got := rec[slices.Index(Header, "p999_ms")]; got != want {
			t.Errorf("Record of row %d: p999_ms %q; want %q", i+1, got, want)
		}
	}
	old, err := readFrom(strings.NewReader(minimalHeader+",p50_ms,p99_ms\n"+"ARM,s1,squid,copy,mix-connect,mix-3k,1,10,100,0,1,proxy,1000,ok,1.5,23.7\n"), "old.csv")
	if err != nil {
		t.Fatal(err)
	}
	if old[0].HasP999 || !old[0].HasLatency {
		t.Errorf("a row of a file without p999_ms = %+v; want the p99.9 unknown", old[0])
	}
}

// TestReadSweep: the steps of a sweep's repetition are runs of their
// own, each told apart by its step and the rate it offered, the
// confirming windows of one search too.
func TestReadSweep(t *testing.T) {
	in := minimalHeader + ",note,offered_rate\n"
	for _, step := range []struct {
		note    string
		offered string
	}{
		{"sweep step 1: pass", "500"},
		{"sweep step 2: fail: p99 63.2 ms over 50 ms", "1000"},
		{"sweep confirm: fail: errors 0.4% over 0.1%", "750"},
		{"sweep step 3: pass; 3 connections did not open", "700"},
		{"sweep confirm: pass", "700"},
	} {
		in += "ARM,s1,nginx,copy,mix-http,sweep,1,10,100,0,1,proxy,1000,ok," + step.note + "," + step.offered + "\n"
	}
	rows, err := readFrom(strings.NewReader(in), "sweep.csv")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		got = append(got, r.ID().Step)
	}
	want := []string{"step 1 at 500.0/s", "step 2 at 1000.0/s", "confirm at 750.0/s", "step 3 at 700.0/s", "confirm at 700.0/s"}
	if !slices.Equal(got, want) {
		t.Errorf("the steps' IDs = %q; want %q", got, want)
	}
	if id := rows[0]; id.Load != LoadSweep || !id.HasOffered || id.OfferedRate != 500 {
		t.Errorf("row 1 = %+v; want a sweep's step at 500/s", id)
	}
	other := Row{Load: "mix-3k", Note: "sweep step 1: pass", OfferedRate: 500}
	if s := other.ID().Step; s != "" {
		t.Errorf("the ID of a mix-3k run has step %q; want none", s)
	}
}

func TestReadRoundTrip(t *testing.T) {
	// what the harness writes with Record reads back the same
	rows, err := ReadFiles([]string{filepath.Join("..", "report", "testdata", "csv", "000-https-arm.csv")})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	b.WriteString(strings.Join(Header, ",") + "\n")
	for _, r := range rows {
		b.WriteString(strings.Join(r.Record(), ",") + "\n")
	}
	again, err := readFrom(&b, "again.csv")
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		a, b := rows[i], again[i]
		a.Source, b.Source = "", ""
		if a != b {
			t.Fatalf("row %d: read %+v, read again %+v", i, a, b)
		}
	}
}

func TestReadErrors(t *testing.T) {
	ok := "ARM,s1,nginx,copy,http,ka-1k,1,10,100,0,1,proxy,1000,ok"
	cases := []struct {
		name string
		in   string
		want string
	}{
		// no header at all
		{"empty", "", "m4.csv: empty file"},
		// the file and the column are named
		{"missing column", strings.Replace(minimalHeader, ",seconds", "", 1) + "\n", `m4.csv:1: missing required column "seconds"`},
		{"not a number", minimalHeader + "\n" + ok + "\n" + strings.Replace(ok, ",10,", ",ten,", 1) + "\n",
			`m4.csv:3: column "seconds": "ten" is not a number`},
		{"not a whole number", minimalHeader + "\n" + strings.Replace(ok, ",100,", ",1e3,", 1) + "\n",
			`m4.csv:2: column "requests": "1e3" is not a whole number`},
		{"unknown mode", minimalHeader + "\n" + strings.Replace(ok, ",http,", ",gopher,", 1) + "\n",
			`m4.csv:2: column "mode": unknown mode "gopher"`},
		{"unknown group", minimalHeader + "\n" + strings.Replace(ok, ",copy,", ",both,", 1) + "\n",
			`m4.csv:2: column "group": unknown group "both" (want baseline, copy, splice)`},
		{"unknown status", minimalHeader + "\n" + strings.Replace(ok, ",ok", ",fine", 1) + "\n",
			`m4.csv:2: column "status": unknown status "fine"`},
		{"unknown bound", minimalHeader + "\n" + strings.Replace(ok, ",proxy,", ",cpu,", 1) + "\n",
			`m4.csv:2: column "bound": unknown bound "cpu"`},
		// an ok run needs its figures
		{"empty figure", minimalHeader + "\n" + strings.Replace(ok, ",100,", ",,", 1) + "\n",
			`m4.csv:2: column "requests": is empty`},
		{"zero window", minimalHeader + "\n" + strings.Replace(ok, ",10,", ",0,", 1) + "\n",
			`m4.csv:2: column "seconds": 0 is not a positive length`},
		{"empty proxy", minimalHeader + "\n" + strings.Replace(ok, ",nginx,", ",,", 1) + "\n",
			`m4.csv:2: column "proxy": is empty`},
		{"short line", minimalHeader + "\n" + "ARM,s1\n", "m4.csv:2: wrong number of fields"},
		{"bad time", minimalHeader + ",started\n" + ok + ",yesterday\n", `m4.csv:2: column "started": "yesterday" is not an RFC 3339 time`},
		// a figure is a count, a time, a share or a size: never negative,
		// always finite
		{"negative requests", minimalHeader + "\n" + strings.Replace(ok, ",100,", ",-5,", 1) + "\n",
			`m4.csv:2: column "requests": "-5" is negative: want 0 or more`},
		{"negative bytes", minimalHeader + "\n" + strings.Replace(ok, ",100,0,", ",100,-1,", 1) + "\n",
			`m4.csv:2: column "bytes": "-1" is negative: want 0 or more`},
		{"negative window", minimalHeader + "\n" + strings.Replace(ok, ",10,", ",-10,", 1) + "\n",
			`m4.csv:2: column "seconds": "-10" is negative: want 0 or more`},
		{"negative CPU", minimalHeader + "\n" + strings.Replace(ok, ",1,proxy,", ",-0.5,proxy,", 1) + "\n",
			`m4.csv:2: column "cpu_proxy_s": "-0.5" is negative: want 0 or more`},
		{"NaN window", minimalHeader + "\n" + strings.Replace(ok, ",10,", ",NaN,", 1) + "\n",
			`m4.csv:2: column "seconds": "NaN" is not a finite number`},
		{"NaN latency", minimalHeader + ",p50_ms,p99_ms\n" + ok + ",0.2,NaN\n",
			`m4.csv:2: column "p99_ms": "NaN" is not a finite number`},
		{"infinite CPU", minimalHeader + "\n" + strings.Replace(ok, ",1,proxy,", ",+Inf,proxy,", 1) + "\n",
			`m4.csv:2: column "cpu_proxy_s": "+Inf" is not a finite number`},
		{"overflowing figure", minimalHeader + ",p50_ms,p99_ms\n" + ok + ",1e400,2\n",
			`m4.csv:2: column "p50_ms": "1e400" is not a finite number`},
		{"failed run's NaN", minimalHeader + "\n" + "ARM,s1,nginx,copy,http,ka-1k,1,NaN,,,,,,failed\n",
			`m4.csv:2: column "seconds": "NaN" is not a finite number`},
		// figures no run can have: a window of less than a microsecond
		// (every figure a second infinite) or more than a day, counts
		// and figures past 2^53, an ok run that counted nothing
		{"tiny window", minimalHeader + "\n" + strings.Replace(ok, ",10,", ",1e-320,", 1) + "\n",
			`m4.csv:2: column "seconds": 1e-320 is not the length of a run's window: want 1e-06 s to 86400 s`},
		{"failed run's tiny window", minimalHeader + "\n" + "ARM,s1,nginx,copy,http,ka-1k,1,1e-320,,,,,,failed\n",
			`m4.csv:2: column "seconds": 1e-320 is not the length of a run's window`},
		{"window of days", minimalHeader + "\n" + strings.Replace(ok, ",10,", ",864000,", 1) + "\n",
			`m4.csv:2: column "seconds": 864000 is not the length of a run's window`},
		{"huge window", minimalHeader + "\n" + strings.Replace(ok, ",10,", ",1.7e308,", 1) + "\n",
			`m4.csv:2: column "seconds": "1.7e308" is past 2^53`},
		{"requests past 2^53", minimalHeader + "\n" + strings.Replace(ok, ",100,", ",9007199254740993,", 1) + "\n",
			`m4.csv:2: column "requests": "9007199254740993" is past 2^53`},
		{"bytes past int64", minimalHeader + "\n" + strings.Replace(ok, ",100,0,", ",100,99999999999999999999,", 1) + "\n",
			`m4.csv:2: column "bytes": "99999999999999999999" is past 2^53`},
		{"errors past 2^53", minimalHeader + ",errors\n" + ok + ",9223372036854775807\n",
			`m4.csv:2: column "errors": "9223372036854775807" is past 2^53`},
		{"rep past 2^53", minimalHeader + "\n" + strings.Replace(ok, ",1,10,", ",9007199254740993,10,", 1) + "\n",
			`m4.csv:2: column "rep": "9007199254740993" is past 2^53`},
		{"latency past 2^53", minimalHeader + ",p50_ms,p99_ms\n" + ok + ",0.2,1e300\n",
			`m4.csv:2: column "p99_ms": "1e300" is past 2^53`},
		{"ok run of no exchange", minimalHeader + "\n" + strings.Replace(ok, ",100,", ",0,", 1) + "\n",
			`m4.csv:2: column "requests": is 0 in an ok run`},
		{"ok stream of no byte", minimalHeader + "\n" + strings.Replace(ok, ",ka-1k,", ",stream1,", 1) + "\n",
			`m4.csv:2: column "bytes": is 0 in an ok run`},
		// a column named twice: which one is the run's is not known
		{"column twice", minimalHeader + ",requests\n" + ok + ",7\n",
			`m4.csv:1: column "requests" is named twice, as columns 9 and 15`},
		// a line longer than any row
		{"long line", minimalHeader + "\n" + ok + "\n" + strings.Replace(ok, ",ok", ",ok,"+strings.Repeat("x", MaxLine), 1) + "\n",
			fmt.Sprintf("m4.csv:3: a line longer than %d bytes", MaxLine)},
		// a header and no run: nothing to report
		{"no runs", minimalHeader + "\n", "m4.csv: no runs: the header and no line after it"},
		// a sweep's step that cannot be read, and a step on two lines
		{"bad step", minimalHeader + ",note,offered_rate\n" + strings.Replace(ok, "http,ka-1k", "mix-http,sweep", 1) + ",sweep step x: pass,500\n",
			`m4.csv:2: column "note": sweep note "sweep step x: pass": step "x" is not a number from 1`},
		{"step twice", minimalHeader + ",note,offered_rate\n" + strings.Replace(ok, "http,ka-1k", "mix-http,sweep", 1) + ",sweep step 1: pass,500\n" +
			strings.Replace(ok, "http,ka-1k", "mix-http,sweep", 1) + ",sweep step 1: pass,500\n",
			"m4.csv:3: the run of nginx in mix-http-sweep, rep 1, step 1 at 500.0/s, of session s1 on machine ARM is also at m4.csv:2"},
		// one run, two lines: both are named
		{"run twice", minimalHeader + "\n" + ok + "\n" + strings.Replace(ok, ",0,1,", ",1,1,", 1) + "\n",
			"m4.csv:3: the run of nginx in http-ka-1k, rep 1, of session s1 on machine ARM is also at m4.csv:2 (a run is one line of one file)"},
	}
	for _, c := range cases {
		_, err := readFrom(strings.NewReader(c.in), "m4.csv")
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: reading %q = %v; want an error starting %q", c.name, c.in, err, c.want)
		}
		var ie *inputerr.Error
		if err != nil && !errors.As(err, &ie) {
			t.Errorf("%s: error %v is not an *inputerr.Error", c.name, err)
		}
	}
}

// What a run can be still reads: a failed run's window of 0 or none,
// and its figures empty; windows of a microsecond and of a day; counts of
// 2^53; an ok stream of bytes and no exchange.
func TestReadWithinBounds(t *testing.T) {
	ok := "ARM,s1,nginx,copy,http,ka-1k,1,10,100,0,1,proxy,1000,ok"
	in := minimalHeader + ",errors\n" +
		"ARM,s1,squid,copy,http,ka-1k,1,0.000,0,0,0.000,,0,failed,0\n" +
		"ARM,s1,tinyproxy,copy,http,ka-1k,1,,,,,,,failed,\n" +
		strings.Replace(ok, ",10,", ",0.000001,", 1) + ",0\n" +
		strings.Replace(ok, ",1,10,", ",2,86400,", 1) + ",9007199254740992\n" +
		strings.Replace(strings.Replace(ok, ",ka-1k,", ",stream1,", 1), ",100,0,", ",0,9007199254740992,", 1) + ",0\n"
	rows, err := readFrom(strings.NewReader(in), "m4.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 || rows[0].Seconds != 0 || rows[2].Seconds != MinSeconds || rows[3].Seconds != MaxSeconds ||
		rows[3].Errors != MaxCount || rows[4].Bytes != MaxCount {
		t.Errorf("read %+v", rows)
	}
}

// A file of a header and empty lines is no run, and the reader makes no
// room for a run a line of it: a megabyte of newlines made half a
// gigabyte of rows.
func TestReadEmptyLines(t *testing.T) {
	data := []byte(minimalHeader + "\n" + strings.Repeat("\n", 1<<20))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var rd reader
	err := rd.read(data, "m4.csv")
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrNoRuns) {
		t.Errorf("read of a header and empty lines: %v; want ErrNoRuns", err)
	}
	if made := after.TotalAlloc - before.TotalAlloc; made > 32<<20 {
		t.Errorf("read of %d bytes made %d MiB", len(data), made>>20)
	}
}

// A session file, a metadata file or a run's data file larger than any
// bench writes is refused unread, naming it.
func TestReadInputBound(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.csv")
	if err := os.WriteFile(p, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := readInput(p, 10); err != nil || string(b) != "0123456789" {
		t.Errorf("readInput of 10 bytes, at most 10: %q, %v", b, err)
	}
	_, err := readInput(p, 9)
	if ie := (*inputerr.Error)(nil); !errors.As(err, &ie) || ie.File != p || !strings.Contains(err.Error(), "larger than 9 bytes") {
		t.Errorf("readInput of 10 bytes, at most 9: %v; want an inputerr.Error naming %s", err, p)
	}
}

// TestReadFilesRefuses: across the files read together, a file given
// twice under any name and a run two of them hold are refused, naming both
// places; a file of no run is refused as ErrNoRuns.
func TestReadFilesRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	run := "ARM,s1,nginx,copy,http,ka-1k,1,10,100,0,1,proxy,1000,ok\n"
	a := write("a.csv", minimalHeader+"\n"+run)
	b := write("b.csv", minimalHeader+"\n"+strings.Replace(run, ",1,10,", ",2,10,", 1)+run)
	empty := write("empty.csv", minimalHeader+"\n")
	again := dir + "/./sub/../a.csv" // a.csv by another name
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		paths []string
		want  string
	}{
		// bench report a.csv a.csv
		{"a file twice", []string{a, a}, a + ": the same file as " + a + ", given before it: give each file once"},
		// bench report a.csv ./sub/../a.csv
		{"a file by two names", []string{a, again}, again + ": the same file as " + a + ", given before it: give each file once"},
		// a run in two files, at line 3 of the second
		{"a run in two files", []string{a, b}, b + ":3: the run of nginx in http-ka-1k, rep 1, of session s1 on machine ARM is also at " + a + ":2 (a run is one line of one file)"},
		// a header alone, after a good file
		{"a file of no run", []string{a, empty}, empty + ": no runs: the header and no line after it"},
	} {
		_, err := ReadFiles(c.paths)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: ReadFiles(%q) = %v; want %s", c.name, c.paths, err, c.want)
		}
		if ie := (*inputerr.Error)(nil); err != nil && !errors.As(err, &ie) {
			t.Errorf("%s: ReadFiles(%q) = %v; want an *inputerr.Error", c.name, c.paths, err)
		}
	}
	if _, err := ReadFiles([]string{empty}); !errors.Is(err, ErrNoRuns) {
		t.Errorf("ReadFiles(%q) = %v; want ErrNoRuns", empty, err)
	}
}

func TestReadFilesMissing(t *testing.T) {
	_, err := ReadFiles([]string{filepath.Join(t.TempDir(), "none.csv")})
	if ie := (*inputerr.Error)(nil); !errors.Is(err, os.ErrNotExist) || !errors.As(err, &ie) || !strings.Contains(err.Error(), "none.csv") {
		t.Errorf("ReadFiles(missing) = %v; want a not-exist error naming the file", err)
	}
}

func TestColumnsMatchHeader(t *testing.T) {
	if len(Header) != nColumns {
		t.Fatalf("Header has %d columns, the reader knows %d", len(Header), nColumns)
	}
	for c, name := range map[int]string{cMachine: "machine", cGroup: "group", cStarted: "started", cP50: "p50_ms",
		cThreadOrigin: "thread_origin", cBound: "bound", cPeakMem: "peak_mem_bytes", cNote: "note",
		cThrottledPeriods: "throttled_periods", cThrottledS: "throttled_s", cSplicePipes: "splice_pipes", cP999: "p999_ms", cOffered: "offered_rate"} {
		if Header[c] != name {
			t.Errorf("column %d is %q in Header; the reader takes it for %q", c, Header[c], name)
		}
	}
}

func TestWriterAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.csv")
	r := Row{Machine: "ARM", Session: "s1", Proxy: "nginx", Group: Copy, Mode: HTTP, Load: "ka-1k", Rep: 1,
		Seconds: 10, Requests: 5, Bound: BoundProxy, Status: OK, Note: "a, \"quoted\" note"}
	for i := 0; i < 2; i++ { // the second opening appends without a header
		w, err := Append(path)
		if err != nil {
			t.Fatal(err)
		}
		r.Rep = i + 1
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil || w.Close() != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	rows, err := ReadFiles([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Rep != 1 || rows[1].Rep != 2 || rows[1].Note != r.Note || rows[1].Line != 3 {
		t.Errorf("read back %+v", rows)
	}
}

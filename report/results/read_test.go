package results

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
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
	return read(nil, data, name)
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
		"ARM,s1,haproxy splice-auto,splice,http,ka-1m,1,10,100,0,1,proxy,1000,ok,95,4.750,0\n" +
		"ARM,s1,haproxy splice,splice,http,ka-1m,1,10,100,0,1,proxy,1000,ok,,,3\n"
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
	if got := strings.Join(rec[len(rec)-4:], ","); got != ",,3," {
		t.Errorf("Record of row 2 ends %q; want \",,3,\"", got)
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

func TestReadRoundTrip(t *testing.T) {
	// what the harness writes with Record reads back the same
	rows, err := ReadFiles([]string{filepath.Join("..", "testdata", "csv", "000-https-arm.csv")})
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
	}
	for _, c := range cases {
		_, err := readFrom(strings.NewReader(c.in), "m4.csv")
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: reading %q = %v; want an error starting %q", c.name, c.in, err, c.want)
		}
		var se *SyntaxError
		if err != nil && !errors.As(err, &se) {
			t.Errorf("%s: error %v is not a *SyntaxError", c.name, err)
		}
	}
}

func TestReadFilesMissing(t *testing.T) {
	_, err := ReadFiles([]string{filepath.Join(t.TempDir(), "none.csv")})
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "none.csv") {
		t.Errorf("ReadFiles(missing) = %v; want a not-exist error naming the file", err)
	}
}

func TestColumnsMatchHeader(t *testing.T) {
	if len(Header) != nColumns {
		t.Fatalf("Header has %d columns, the reader knows %d", len(Header), nColumns)
	}
	for c, name := range map[int]string{cMachine: "machine", cGroup: "group", cStarted: "started", cP50: "p50_ms",
		cThreadOrigin: "thread_origin", cBound: "bound", cPeakMem: "peak_mem_bytes", cNote: "note",
		cThrottledPeriods: "throttled_periods", cThrottledS: "throttled_s", cSplicePipes: "splice_pipes", cP999: "p999_ms"} {
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

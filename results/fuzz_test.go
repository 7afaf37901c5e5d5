package results

import (
	"bench/inputerr"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// The reader of session files takes any file: it reads it or refuses it
// with an error naming the file, and every row it reads has a status,
// mode and group of those the columns may hold, a bound of theirs or none
// given, figures that are finite and not negative, and a run of its own.
// go test runs the seeds (the report's and the CLI's test files and the
// reference session); a longer run is in docs/tests.md.
func FuzzRead(f *testing.F) {
	var files []string
	for _, g := range []string{"../report/testdata/csv/*.csv", "../testdata/*/*.csv", "../data/*.csv"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	if len(files) == 0 {
		f.Fatal("no session files to seed with")
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var rd reader
		if err := rd.read(data, "fuzz.csv"); err != nil {
			if ie := (*inputerr.Error)(nil); !errors.As(err, &ie) || ie.File != "fuzz.csv" {
				t.Errorf("read refused the file with %v; want an inputerr.Error naming fuzz.csv", err)
			}
			return
		}
		if len(rd.rows) == 0 {
			t.Errorf("read a file of no runs without an error")
		}
		seen := map[RunID]bool{}
		for _, r := range rd.rows {
			if !slices.Contains(Statuses, r.Status) || !slices.Contains(Modes, r.Mode) || !slices.Contains(Groups, r.Group) ||
				r.Bound != "" && !slices.Contains(Bounds, r.Bound) {
				t.Errorf("line %d read as %+v", r.Line, r)
			}
			for _, v := range []float64{r.Seconds, r.P50Ms, r.P99Ms, r.P999Ms, r.CPUProxy, r.CPUClient, r.CPUOrigin,
				r.BusyProxy, r.BusyClient, r.BusyOrigin, r.ThreadProxy, r.ThreadClient, r.ThreadOrigin, r.ThrottledS,
				r.OfferedRate, float64(r.Requests), float64(r.Bytes), float64(r.Errors), float64(r.Timeouts), float64(r.PeakMemBytes),
				float64(r.ThrottledPeriods), float64(r.SplicePipes), float64(r.ClosedReads), float64(r.Rep)} {
				if !(v >= 0 && v <= MaxCount) {
					t.Errorf("line %d read with a figure %v: %+v", r.Line, v, r)
				}
			}
			if (r.Status == OK || r.Seconds != 0) && !(r.Seconds >= MinSeconds && r.Seconds <= MaxSeconds) {
				t.Errorf("line %d read with a window of %v s: %+v", r.Line, r.Seconds, r)
			}
			if r.Status == OK {
				if f := r.Figure(); !r.Measured() || !(f > 0) || math.IsInf(f, 0) {
					t.Errorf("line %d, an ok run, read with a figure of %v: %+v", r.Line, f, r)
				}
			}
			if seen[r.ID()] {
				t.Errorf("line %d read as a run read before: %+v", r.Line, r)
			}
			seen[r.ID()] = true
		}
	})
}

// seedFiles are the files matching globs, from this package's folder;
// want says there must be some.
func seedFiles(f *testing.F, globs ...string) []string {
	var files []string
	for _, g := range globs {
		m, err := filepath.Glob(g)
		if err != nil {
			f.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		f.Fatalf("no files %q to seed with", globs)
	}
	return files
}

// The metadata reader takes any text: it reads it or refuses it, and
// metadata it reads has its counts and figures from 0 to 2^53 and its
// lengths of time from 0 to a day. Its seeds are every metadata file of
// the tests and the reference sessions, each of which must read.
func FuzzReadMeta(f *testing.F) {
	for _, p := range seedFiles(f, "testdata/*"+MetaSuffix, "../report/testdata/*/*"+MetaSuffix, "../testdata/*/*"+MetaSuffix,
		"../testdata/history/*/*/*"+MetaSuffix, "../data/*"+MetaSuffix, "../data/*/*"+MetaSuffix) {
		if _, err := ReadMeta(p); err != nil {
			f.Fatal(err)
		}
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseMeta(data)
		if err != nil {
			return
		}
		for _, v := range []float64{float64(m.Machine.CPUs), float64(m.Machine.MemoryBytes), float64(m.Reps), float64(m.RepsMax),
			float64(m.MixConns), float64(m.Rows), m.ProxyCPU, m.Precision} {
			if !(v >= 0 && v <= MaxCount) {
				t.Errorf("read with a figure %v: %+v", v, m)
			}
		}
		spans := []Span{m.Window, m.Warmup}
		for _, own := range m.Methods {
			spans = append(spans, own.Window, own.Warmup)
			if own.Reps < 0 || own.Reps > MaxCount {
				t.Errorf("read with a method of %d reps", own.Reps)
			}
		}
		if sw := m.Sweep; sw != nil {
			spans = append(spans, sw.SLO.P99)
			for _, v := range []float64{sw.From, sw.Precision, sw.SLO.Errors} {
				if !(v >= 0 && v <= MaxCount) {
					t.Errorf("read with a sweep's figure %v: %+v", v, sw)
				}
			}
		}
		for _, s := range spans {
			if s < 0 || time.Duration(s) > MaxSeconds*time.Second {
				t.Errorf("read with a length of time %v", time.Duration(s))
			}
		}
	})
}

// The reader of a run's data takes any text: it reads it or refuses it,
// and data it reads have intervals whose figures are finite, counts from
// 0 to 2^53, busy shares from 0 to 2^53, and a histogram that decodes
// into at most 2^53 values. Its seeds are run data of the tests and of
// the reference sessions, every one of which must read.
func FuzzReadRunData(f *testing.F) {
	files := seedFiles(f, "../testdata/*/*.runs/*"+RunDataSuffix, "../testdata/*/*/*.runs/*"+RunDataSuffix,
		"../data/*.runs/*"+RunDataSuffix, "../data/*/*.runs/*"+RunDataSuffix)
	for i, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		if _, err := parseRunData(b); err != nil {
			f.Fatalf("%s: %v", p, err)
		}
		if i%50 == 0 { // some of each kind: a run of wrk, of iperf3, of bench mix, a sweep's step
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := parseRunData(data)
		if err != nil {
			return
		}
		if d.Rep < 0 || d.Rep > MaxCount {
			t.Errorf("read with rep %d", d.Rep)
		}
		for _, iv := range d.Intervals {
			for _, u := range []Unit{Gbits, KReqs, Conns} {
				if v := iv.Of(u); !(v >= 0) || math.IsInf(v, 0) {
					t.Errorf("read an interval %+v of %v %s", iv, v, u)
				}
			}
			if iv.Requests < 0 || iv.Requests > MaxCount || iv.Bytes < 0 || iv.Bytes > MaxCount {
				t.Errorf("read an interval %+v", iv)
			}
		}
		for role, series := range d.CPU {
			for _, v := range series {
				if !(v >= 0 && v <= MaxCount) {
					t.Errorf("read a busy share of %s of %v", role, v)
				}
			}
		}
		if p := d.Profile; p != nil && (p.Samples < 0 || p.Samples > MaxCount || p.Others < 0 || p.Others > MaxCount) {
			t.Errorf("read a profile of %+v", *p)
		}
		h, err := d.Latency()
		if err != nil {
			t.Fatalf("read a histogram Latency refuses: %v", err)
		}
		if h != nil {
			if n := h.TotalCount(); n < 0 || n > MaxCount {
				t.Errorf("read a histogram of %d values", n)
			}
			for _, q := range []float64{50, 99, 99.9} {
				if v := h.ValueAtQuantile(q); v < 0 {
					t.Errorf("read a histogram whose p%v is %d", q, v)
				}
			}
		}
	})
}

package results

import (
	"bench/inputerr"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// A run's data written beside a session file is read back by the run it
// names; a session without a runs directory has none, and a bad file is
// an error naming it.
func TestRunData(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "arm-m4-s.csv")
	if got := RunsDir(csv); got != filepath.Join(dir, "arm-m4-s.runs") {
		t.Errorf("RunsDir(%q) = %q", csv, got)
	}
	if err := os.Mkdir(RunsDir(csv), 0o755); err != nil {
		t.Fatal(err)
	}
	row := Row{Machine: "ARM (M4)", Session: "s", Proxy: "nginx", Mode: MixHTTP, Load: "mix-3k", Rep: 2}
	d := RunData{RunID: row.ID(), Started: time.Date(2026, 10, 13, 18, 0, 0, 0, time.UTC),
		Intervals: []Interval{{Seconds: 1, Requests: 3000, Bytes: 1.3e8}, {Seconds: 0.5, Requests: 1500, Bytes: 6.5e7}},
		CPU:       map[string][]float64{"proxy": {0.9, 0.95}, "client": {0.3, 0.3}, "origin": {0.2, 0.1}},
		Histogram: encodeHist(t, 1, 3600e6, 3, 120, 950, 1800)}
	if err := WriteRunData(RunsDir(csv), "0007-nginx-mix-http-3k-2", d); err != nil {
		t.Fatal(err)
	}
	got, err := ReadRunData([]string{csv, filepath.Join(dir, "none.csv")})
	if err != nil {
		t.Fatal(err)
	}
	// what was read names where the run's files are
	d.Files = filepath.Join(RunsDir(csv), "0007-nginx-mix-http-3k-2")
	if len(got) != 1 || !reflect.DeepEqual(got[row.ID()], &d) {
		t.Errorf("ReadRunData = %+v; want %+v", got, d)
	}
	// 3000 exchanges in the first second: 3 k req/s.
	if v := d.Intervals[0].Of(KReqs); v != 3 {
		t.Errorf("Interval.Of(k req/s) = %v; want 3", v)
	}
	bad := filepath.Join(RunsDir(csv), "0008-x"+RunDataSuffix)
	if err := os.WriteFile(bad, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRunData([]string{csv}); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("ReadRunData of a bad file: %v; want an error naming %s", err, bad)
	}
}

// encodeHist is the encoding bench mix prints of a histogram from lowest
// to highest of digits significant digits holding values.
func encodeHist(t testing.TB, lowest, highest int64, digits int, values ...int64) string {
	h := hdrhistogram.New(lowest, highest, digits)
	for _, v := range values {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A run's data file of figures no run can have is refused, naming it: an
// interval of no time (its figure a second infinite), counts past 2^53
// or negative, a histogram of more counts than bench mix's could hold
// (5 digits over the widest range: 50 MB of counts from a few bytes) or
// more values than 2^53, a file larger than MaxRunData.
func TestRunDataBounds(t *testing.T) {
	id := `"machine":"m","session":"s","proxy":"p","mode":"mix-http","load":"mix","rep":1`
	huge := hdrhistogram.New(1, 3600e6, 3)
	huge.RecordValues(1000, MaxCount)
	huge.RecordValues(2000, 1)
	hugeEnc, err := huge.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, json, want string }{
		{"interval of no time", `{` + id + `,"intervals":[{"seconds":0,"requests":5,"bytes":10}]}`, "interval 1: 0 s"},
		{"interval of a week", `{` + id + `,"intervals":[{"seconds":1,"bytes":10},{"seconds":604800,"bytes":10}]}`, "interval 2: 604800 s"},
		{"requests past 2^53", `{` + id + `,"intervals":[{"seconds":1,"requests":9007199254740993,"bytes":10}]}`, "interval 1: 1 s, 9007199254740993 requests"},
		{"negative bytes", `{` + id + `,"intervals":[{"seconds":1,"bytes":-10}]}`, "-10 bytes"},
		{"negative busy", `{` + id + `,"cpu":{"proxy":[0.5,-1]}}`, "cpu of proxy, second 2: -1"},
		{"negative rep", `{"machine":"m","rep":-1}`, "rep -1"},
		{"negative samples", `{` + id + `,"profile":{"samples":-3}}`, "profile of -3 samples"},
		{"not a histogram", `{` + id + `,"histogram":"HISTFAAAA"}`, "histogram: "},
		{"histogram of 5 digits", `{` + id + `,"histogram":"` + encodeHist(t, 1, 1<<62, 5, 1) + `"}`, "histogram: 5 significant digits: want at most 3"},
		{"histogram past 2^53", `{` + id + `,"histogram":"` + string(hugeEnc) + `"}`, "histogram: 9007199254740993 values"},
		{"too large", `{` + id + `,"machine":"` + strings.Repeat("x", MaxRunData) + `"}`, fmt.Sprintf("larger than %d bytes", MaxRunData)},
	} {
		dir := t.TempDir()
		csv := filepath.Join(dir, "s.csv")
		if err := os.Mkdir(RunsDir(csv), 0o755); err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(RunsDir(csv), "0001-p-mix-http-1"+RunDataSuffix)
		if err := os.WriteFile(f, []byte(c.json), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadRunData([]string{csv})
		if ie := (*inputerr.Error)(nil); !errors.As(err, &ie) || ie.File != f || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: ReadRunData = %v; want an inputerr.Error naming %s and saying %q", c.name, err, f, c.want)
		}
	}
}

// A session's runs' data files are refused together past MaxRunsData,
// each within MaxRunData: the runs directory is named.
func TestRunDataTotalBound(t *testing.T) {
	csv := filepath.Join(t.TempDir(), "s.csv")
	if err := os.Mkdir(RunsDir(csv), 0o755); err != nil {
		t.Fatal(err)
	}
	one := `{"machine":"m","session":"s","proxy":"p","mode":"http","load":"ka-1k","rep":1}`
	first := filepath.Join(RunsDir(csv), "0000-p"+RunDataSuffix)
	if err := os.WriteFile(first, []byte(one+strings.Repeat(" ", MaxRunData-len(one))), 0o644); err != nil {
		t.Fatal(err)
	}
	// the same file by more names (no more disk), one more than fit
	for i := 1; i <= MaxRunsData/MaxRunData; i++ {
		if err := os.Link(first, filepath.Join(RunsDir(csv), fmt.Sprintf("%04d-p", i)+RunDataSuffix)); err != nil {
			t.Fatal(err)
		}
	}
	_, err := ReadRunData([]string{csv})
	if ie := (*inputerr.Error)(nil); !errors.As(err, &ie) || ie.File != RunsDir(csv) || !strings.Contains(err.Error(), fmt.Sprintf("more than %d bytes", MaxRunsData)) {
		t.Errorf("ReadRunData of %d files of %d bytes = %v; want an inputerr.Error naming %s", MaxRunsData/MaxRunData+1, MaxRunData, err, RunsDir(csv))
	}
}

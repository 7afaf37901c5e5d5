package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// readCaptured returns a tool's output recorded by TestCapture.
func readCaptured(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(captured, name))
	if err != nil {
		t.Fatalf("%v (go test ./scenarios -run TestCapture -capture records it)", err)
	}
	return b
}

// wrkPrinted is the "Requests/sec:" figure wrk printed, read here
// independently of the parser.
func wrkPrinted(t *testing.T, out []byte) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^Requests/sec:\s+([0-9.]+)$`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no Requests/sec line in %q", out)
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestWrkParse(t *testing.T) {
	cases := []struct {
		file    string
		wantErr string                 // substring of the error; "" for none
		check   func(Measurement) bool // what must hold beyond the golden
	}{
		// 64 kept-alive connections, 1 KB answers: no errors.
		{"wrk-ka-1k.out", "", func(m Measurement) bool { return m.Requests > 0 && m.Errors == 0 && m.HasLatency }},
		// 1 MB answers: about a megabyte per request.
		{"wrk-ka-1m.out", "", func(m Measurement) bool { return m.Bytes/m.Requests > 1<<20 }},
		// 2000 connections posting 2 KB: 50 KB answers, no status errors.
		{"wrk-ka-2k-50k-2000.out", "", func(m Measurement) bool { return m.Bytes/m.Requests > 50<<10 && m.Errors == 0 }},
		// A new connection per request.
		{"wrk-close-1k.out", "", func(m Measurement) bool { return m.Requests > 0 && m.Errors == 0 }},
		// Absolute URIs through tinyproxy, which closes every connection
		// after its answer without saying so: wrk counts a read error each.
		{"wrk-http-proxy-ka-1k.out", "", func(m Measurement) bool { return m.Requests > 0 && m.Errors > m.Requests/2 }},
		// 16 threads under proxychains through a CONNECT tunnel.
		{"wrk-connect-ka-1k.out", "", func(m Measurement) bool { return m.Requests > 0 && m.Errors == 0 }},
		{"wrk-connect-close-1k.out", "", func(m Measurement) bool { return m.Requests > 0 && m.Errors == 0 }},
		// Every answer a 404: each one is a failed exchange, none completed.
		{"wrk-404.out", "", func(m Measurement) bool { return m.Errors > 0 && m.Requests == 0 }},
		// Answers later than --timeout: counted as timeouts, no latency.
		{"wrk-timeout.out", "", func(m Measurement) bool { return m.Timeouts > 0 && m.Errors == 0 && !m.HasLatency }},
		// Nothing listening: wrk gives up before its summary.
		{"wrk-refused.out", "no \"bench-wrk:\" line", nil},
		// Under proxychains, the proxy not listening.
		{"wrk-connect-refused.out", "no \"bench-wrk:\" line", nil},
	}
	for _, c := range cases {
		out := readCaptured(t, c.file)
		m, err := Wrk{}.Parse(out)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("Parse(%s) error = %v; want one containing %q", c.file, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%s) error: %v", c.file, err)
			continue
		}
		if !c.check(m) {
			t.Errorf("Parse(%s) = %+v; fails the case's check", c.file, m)
		}
		// The requests per second the CSV derives are wrk's own, which
		// count the answers with status errors too.
		if got, want := float64(m.Requests+statusErrors(t, out))/m.Seconds, wrkPrinted(t, out); math.Abs(got-want) > 0.005 {
			t.Errorf("Parse(%s): %.4f requests/s; wrk printed %.2f", c.file, got, want)
		}
		checkGolden(t, filepath.Join("parsed", strings.TrimSuffix(c.file, ".out")+".golden"), []byte(fmt.Sprintf("%+v\n", m)))
	}
}

// statusErrors reads the status count of the summary line.
func statusErrors(t *testing.T, out []byte) int64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^bench-wrk:.* status=(\d+)`).FindSubmatch(out)
	if m == nil {
		t.Fatal("no status count in the summary line")
	}
	n, err := strconv.ParseInt(string(m[1]), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestWrkParseBroken(t *testing.T) {
	good := readCaptured(t, "wrk-ka-1k.out")
	line := regexp.MustCompile(`(?m)^bench-wrk:.*$`)
	cases := []struct {
		name, out, wantErr string
	}{
		// wrk's figure disagrees with the script's: the wrong output.
		{"rps mismatch", regexp.MustCompile(`Requests/sec:\s+\S+`).ReplaceAllString(string(good), "Requests/sec: 1.00"), "wrk printed 1.00"},
		// No Requests/sec line.
		{"no rps", regexp.MustCompile(`(?m)^Requests/sec:.*\n`).ReplaceAllString(string(good), ""), "no Requests/sec"},
		// A field missing from the script's line.
		{"short line", line.ReplaceAllString(string(good), "bench-wrk: requests=1 bytes=2"), "has no duration_us"},
		// A field that is not a number.
		{"bad number", line.ReplaceAllString(string(good), "bench-wrk: requests=x"), `"x" is not a whole number`},
		// Empty output.
		{"empty", "", "no \"bench-wrk:\" line"},
	}
	for _, c := range cases {
		m, err := Wrk{}.Parse([]byte(c.out))
		if err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("%s: Parse = %+v, %v; want an error containing %q", c.name, m, err, c.wantErr)
		}
	}
}

func TestIperf3Parse(t *testing.T) {
	cases := []struct {
		file    string
		wantErr string
	}{
		{"iperf3-stream1.out", ""},
		{"iperf3-stream1-down.out", ""},
		{"iperf3-stream16.out", ""},
		// 16 streams under proxychains through a CONNECT tunnel.
		{"iperf3-connect-stream16.out", ""},
		// Nothing listening: iperf3 says so in the JSON.
		{"iperf3-refused.out", "iperf3: unable to connect to server: Connection refused"},
		// The server still serves another test (it exits 0): the run
		// is made again (ErrServerBusy).
		{"iperf3-busy.out", "iperf3: the server is busy running a test. try again later: " + ErrServerBusy.Error()},
	}
	for _, c := range cases {
		out := readCaptured(t, c.file)
		m, err := Iperf3{}.Parse(out)
		if c.wantErr != "" {
			if err == nil || err.Error() != c.wantErr {
				t.Errorf("Parse(%s) error = %v; want %q", c.file, err, c.wantErr)
			}
			if busy := strings.Contains(c.file, "busy"); errors.Is(err, ErrServerBusy) != busy {
				t.Errorf("Parse(%s) error %v is ErrServerBusy: %v; want %v", c.file, err, !busy, busy)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%s) error: %v", c.file, err)
			continue
		}
		if m.Bytes <= 0 || m.Seconds < 1 || m.Requests != 0 || m.HasLatency {
			t.Errorf("Parse(%s) = %+v; want bytes over the window, no requests, no latency", c.file, m)
		}
		checkGolden(t, filepath.Join("parsed", strings.TrimSuffix(c.file, ".out")+".golden"), []byte(fmt.Sprintf("%+v\n", m)))
	}
	// iperf3 killed while writing its report.
	out := readCaptured(t, "iperf3-stream1.out")
	cut := out[:len(out)/2]
	if m, err := (Iperf3{}).Parse(cut); err == nil {
		t.Errorf("Parse(truncated) = %+v; want an error", m)
	}
	// A test that ended before its summary: no end.sum_received.
	noEnd := bytes.Replace(out, []byte(`"sum_received"`), []byte(`"sum_x"`), 1)
	if m, err := (Iperf3{}).Parse(noEnd); err == nil || !strings.Contains(err.Error(), "sum_received") {
		t.Errorf("Parse(no sum_received) = %+v, %v; want an error naming sum_received", m, err)
	}
}

func BenchmarkWrkParse(b *testing.B) {
	out, err := os.ReadFile(filepath.Join(captured, "wrk-ka-1k.out"))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := (Wrk{}).Parse(out); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkIperf3Parse(b *testing.B) {
	out, err := os.ReadFile(filepath.Join(captured, "iperf3-stream16.out"))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := (Iperf3{}).Parse(out); err != nil {
			b.Fatal(err)
		}
	}
}

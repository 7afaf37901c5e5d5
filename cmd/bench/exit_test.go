package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/harness/host"
	"bench/internal/testenv"
)

// TestBadInputExits: every wrong command line, and every input file that
// cannot be read or holds what bench cannot take, exits 2 with a message
// that names what was refused (a file's place as file:line, and the
// column); a regression past --fail-over exits 1 with its own. bench
// run's are refused before anything is planned, so that they hold as any
// user.
func TestBadInputExits(t *testing.T) {
	dir := t.TempDir()
	m4 := filepath.Join(reportDir, "m4.csv")
	old, new := filepath.Join(compareDir, "old.csv"), filepath.Join(compareDir, "new.csv")
	lines := strings.SplitAfter(readFile(t, m4), "\n")
	header, first := lines[0], lines[1]
	// write makes a session file in dir of text.
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// set is line with its column col set to v.
	set := func(line, col, v string) string {
		f := strings.Split(line, ",")
		f[strings.Count(header[:strings.Index(header, ","+col+",")+1], ",")] = v
		return strings.Join(f, ",")
	}
	// withField is m4.csv's header and first run, its column col set to v.
	withField := func(name, col, v string) string { return write(name, header+set(first, col, v)) }
	// again holds a run m4.csv has not, then m4.csv's first.
	again := write("again.csv", header+set(first, "rep", "9")+first)
	badMeta := write("meta.csv", header+first)
	write("meta.csv.meta.json", "{")
	badColumns := write("columns.conf", "# a column needs a kind\nlonely\n")

	cases := []struct {
		args   []string
		status int
		says   string // the start of what main prints
	}{
		// bench report: options it does not know, or no file
		{[]string{"report", "--format", "pdf", m4}, exitUsage, `bench: unknown format "pdf" (want md, tsv, json or html)`},
		{[]string{"report", "--layout", "foo", m4}, exitUsage, `bench: unknown layout "foo" (want machine or combined)`},
		{[]string{"report", "--session", "2026-01-01", m4}, exitUsage, `bench: no session "2026-01-01" in the files; they hold 2026-10-12, 2026-10-13`},
		{[]string{"report"}, exitUsage, "bench: report: no session files given: bench report data/*.csv"},
		// a file given twice, under its name or another
		{[]string{"report", m4, m4}, exitUsage, "bench: testdata/report/m4.csv: the same file as testdata/report/m4.csv, given before it: give each file once"},
		{[]string{"report", m4, "./" + m4}, exitUsage, "bench: ./testdata/report/m4.csv: the same file as testdata/report/m4.csv, given before it: give each file once"},
		// a run in two files: both places
		{[]string{"report", m4, again}, exitUsage, "bench: again.csv:3: the run of devel -s0 in http-ka-1k, rep 1, of session 2026-10-12 on machine ARM (M4) is also at testdata/report/m4.csv:2 (a run is one line of one file)"},
		// figures that cannot be: the place and the column
		{[]string{"report", withField("requests.csv", "requests", "-5")}, exitUsage, `bench: requests.csv:2: column "requests": "-5" is negative: want 0 or more`},
		{[]string{"report", withField("bytes.csv", "bytes", "-166100000")}, exitUsage, `bench: bytes.csv:2: column "bytes": "-166100000" is negative: want 0 or more`},
		{[]string{"report", withField("seconds.csv", "seconds", "NaN")}, exitUsage, `bench: seconds.csv:2: column "seconds": "NaN" is not a finite number`},
		{[]string{"report", withField("p99.csv", "p99_ms", "NaN")}, exitUsage, `bench: p99.csv:2: column "p99_ms": "NaN" is not a finite number`},
		{[]string{"report", withField("cpu.csv", "cpu_proxy_s", "Inf")}, exitUsage, `bench: cpu.csv:2: column "cpu_proxy_s": "Inf" is not a finite number`},
		// a header and no run
		{[]string{"report", write("empty.csv", header)}, exitUsage, "bench: empty.csv: no runs: the header and no line after it"},
		// files that cannot be read
		{[]string{"report", filepath.Join(dir, "none.csv")}, exitUsage, "bench: none.csv: no such file or directory"},
		{[]string{"report", badMeta}, exitUsage, "bench: meta.csv.meta.json: unexpected end of JSON input"},

		// bench compare: the same, and its gate
		{[]string{"compare", "--metric", "p95", old, new}, exitUsage, `bench: unknown metric "p95" (want throughput, p50, p99 or p99.9)`},
		{[]string{"compare", old, old, "--", new, new}, exitUsage, "bench: testdata/compare/old.csv: the same file as testdata/compare/old.csv, given before it: give each file once"},
		{[]string{"compare", old, filepath.Join(compareDir, "intel.csv")}, exitUsage, "bench: different machines: old runs are from ARM (M4), new from Intel (i7); comparing across machines needs --across-machines"},
		{[]string{"compare", "--fail-over", "10%", old, filepath.Join(dir, "none.csv")}, exitUsage, "bench: none.csv: no such file or directory"},
		{[]string{"compare", "--fail-over", "10%", old, withField("new-bad.csv", "seconds", "-10")}, exitUsage, `bench: new-bad.csv:2: column "seconds": "-10" is negative: want 0 or more`},
		{[]string{"compare", "--fail-over", "10%", old, new}, exitError, "bench: compare: 1 cell regressed beyond 10%:\n  ARM (M4), HTTP proxy ka-1k, nginx: 37.3 → 33.1 k req/s (-11.3% ±2%, p=0.008 n=5+5)"},

		// bench run: settings that cannot run, refused before the plan,
		// with --dry-run or without
		{[]string{"run", "--duration", "-5s", "--dry-run"}, exitUsage, "bench: a window of -5s: need at least 1s"},
		{[]string{"run", "--duration", "-5s", "--scenario", "relay-ka-1k", "--proxy", "no proxy", "--prefix", testenv.Prefix(t)}, exitUsage, "bench: a window of -5s: need at least 1s"},
		{[]string{"run", "--cpus", "garbage", "--dry-run"}, exitUsage, `bench: cpu layout "garbage": "garbage" is not role=cpus`},
		{[]string{"run", "--scenario", "nosuch", "--dry-run"}, exitUsage, `bench: no such scenario "nosuch": did you mean `},
		{[]string{"run", "--proxy", "nosuch", "--dry-run"}, exitUsage, `bench: no column "nosuch" (columns: `},
		{[]string{"run", "--dry-run", "extra"}, exitUsage, `bench: run: unexpected argument "extra"`},
		{[]string{"run", "--reps", "0", "--dry-run"}, exitUsage, `bench: invalid value "0" for flag -reps: want a number of repetitions of 1 or more, or auto; got "0"`},
		{[]string{"run", "--columns", filepath.Join(dir, "none.conf"), "--dry-run"}, exitUsage, "bench: columns file: none.conf: no such file or directory"},
		{[]string{"run", "--columns", badColumns, "--dry-run"}, exitUsage, "bench: columns.conf:2: want a name and a kind"},
		{[]string{"run", "--prefix", "bench", "--dry-run"}, exitUsage, `bench: prefix "bench": want 2 to 13 lower-case letters, digits or dashes, ending with a dash`},
		{[]string{"run", "--resume", "--out", dir}, exitUsage, "bench: --resume: no session to resume: no unfinished session in " + dir + "; name one with --session"},
		// a sweep: a bound that does not parse, a first rate of 0 or
		// below, a closed loop, its flags without one
		{[]string{"run", "--sweep", "--scenario", "mix-http", "--slo", "p99=fast", "--dry-run"}, exitUsage, `bench: run: --slo: bound "p99=fast": p99 "fast": want a duration above 0, e.g. 50ms`},
		{[]string{"run", "--sweep", "--scenario", "mix-http", "--slo", "p99=50ms,errors=0.1", "--dry-run"}, exitUsage, `bench: run: --slo: bound "p99=50ms,errors=0.1": errors "0.1": want a percentage`},
		{[]string{"run", "--sweep", "--scenario", "mix-http", "--sweep-from", "0", "--dry-run"}, exitUsage, "bench: run: --sweep-from, --sweep-precision: a first rate of 0 a second: want a whole number, 1 or more"},
		{[]string{"run", "--sweep", "--scenario", "mix-http", "--sweep-from", "-500", "--dry-run"}, exitUsage, "bench: run: --sweep-from, --sweep-precision: a first rate of -500 a second: want a whole number, 1 or more"},
		{[]string{"run", "--sweep", "--scenario", "mix-http", "--sweep-from", "333.33", "--dry-run"}, exitUsage, "bench: run: --sweep-from, --sweep-precision: a first rate of 333.33 a second: want a whole number, 1 or more"},
		{[]string{"run", "--sweep", "--scenario", "http-ka-1k", "--dry-run"}, exitUsage, `bench: --sweep: no sweep of "http-ka-1k": http-ka-1k is wrk, 64 connections, GET /1k kept alive, a closed loop with no rate to step`},
		{[]string{"run", "--sweep", "--scenario", "http-ka-1k", "--proxy", "no proxy", "--prefix", testenv.Prefix(t)}, exitUsage, `bench: --sweep: no sweep of "http-ka-1k"`},
		{[]string{"run", "--scenario", "mix-http", "--slo", "p99=10ms", "--dry-run"}, exitUsage, "bench: --sweep-from, --sweep-precision and --slo go with --sweep"},
		{[]string{"run", "--sweep", "--scenario", "mix-http", "--reps", "auto", "--dry-run"}, exitUsage, "bench: --reps auto repeats a cell until its median settles"},
		{[]string{"run", "--call-graph", "dwarf", "--dry-run"}, exitUsage, "bench: --call-graph goes with --profile=on"},
		{[]string{"run", "--session", "a/b", "--machine", "..", "--dry-run"}, exitUsage, `bench: --session "a/b" holds a slash or a backslash: the history files a session in folders by its id and machine; want a name without them` + "\n" + `--machine ".." names a folder: want a name`},
		{[]string{"mix", "--sweep", "--mode", "relay", "--proxy", "127.0.0.1:1", "--origin", "127.0.0.1:1", "--mix-active", "10"}, exitUsage, "bench: mix: --sweep over a closed loop (--mix-active): a closed loop (exchanges at a time) has no rate to step"},
		{[]string{"mix", "--sweep", "--mode", "relay", "--proxy", "127.0.0.1:1", "--origin", "127.0.0.1:1", "--slo", "p95=1ms"}, exitUsage, `bench: mix: --slo: bound "p95=1ms": unknown key "p95": want p99 and errors`},
		{[]string{"mix", "--sweep", "--mode", "relay", "--proxy", "127.0.0.1:1", "--origin", "127.0.0.1:1", "--sweep-from", "0"}, exitUsage, "bench: mix: --sweep-from, --sweep-precision: a first rate of 0 a second"},
		// bench mix's CA: a file that is not there, or holds no certificate
		{[]string{"mix", "--mode", "relay", "--proxy", "127.0.0.1:1", "--origin", "127.0.0.1:1", "--mix-active", "10", "--tls-ca", filepath.Join(dir, "none.pem")}, exitUsage, "bench: mix: --tls-ca: CA: open none.pem: no such file or directory"},
		{[]string{"mix", "--mode", "relay", "--proxy", "127.0.0.1:1", "--origin", "127.0.0.1:1", "--mix-active", "10", "--tls-ca", badColumns}, exitUsage, "bench: mix: --tls-ca: CA columns.conf: no PEM certificate in it"},

		// the other commands
		{[]string{"list", "--scenario", "nosuch"}, exitUsage, `bench: no such scenario "nosuch": did you mean `},
		{[]string{"check", "--cpus", "garbage"}, exitUsage, `bench: --cpus: cpu layout "garbage": "garbage" is not role=cpus`},
		{[]string{"clean", "extra"}, exitUsage, `bench: clean: unexpected argument "extra"`},
		{[]string{"no-such-command"}, exitUsage, `bench: unknown command "no-such-command"`},
	}
	for _, c := range cases {
		args := c.args
		if args[0] == "run" {
			args = append(args, "--out", dir)
		}
		var cmdErr, stderr bytes.Buffer
		status := exitStatus(dispatch(&bytes.Buffer{}, &cmdErr, args), &stderr)
		says := strings.NewReplacer(dir+string(filepath.Separator), "", reportDir+string(filepath.Separator), "testdata/report/",
			compareDir+string(filepath.Separator), "testdata/compare/").Replace(stderr.String())
		if status != c.status || !strings.HasPrefix(says, c.says) {
			t.Errorf("bench %s: exit %d, %q; want %d, %q", strings.Join(c.args, " "), status, says, c.status, c.says)
		}
		if args[0] == "run" && strings.Contains(cmdErr.String(), "\nscenarios: ") { // the plan's second line
			t.Errorf("bench %s planned the session before refusing it:\n%s", strings.Join(c.args, " "), cmdErr.String())
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestHostFlags: every setting harness/host's advice names is put as a
// flag bench run has.
func TestHostFlags(t *testing.T) {
	var help bytes.Buffer
	dispatch(&bytes.Buffer{}, &help, []string{"run", "--help"})
	for s := host.SettingCPUs; s <= host.SettingProfileOn; s++ {
		flag := hostFlagOf(s)
		name, _, _ := strings.Cut(strings.TrimPrefix(flag, "-"), "=") // the flag package lists -name
		if flag == s.String() || !strings.Contains(help.String(), "\n  "+name+" ") && !strings.Contains(help.String(), "\n  "+name+"\n") {
			t.Errorf("host's %q is put as %q, which bench run --help does not list", s, flag)
		}
	}
}

package host

import (
	"encoding/hex"
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"bench/internal/testenv"

	"golang.org/x/sys/unix"
)

// unhex reads the bytes written as hex in s, a group of bytes a word,
// ignoring what follows "|" on a line.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	var b []byte
	for line := range strings.SplitSeq(s, "\n") {
		line, _, _ = strings.Cut(line, "|")
		for _, w := range strings.Fields(line) {
			v, err := hex.DecodeString(w)
			if err != nil {
				t.Fatalf("unhex %q: %v", w, err)
			}
			b = append(b, v...)
		}
	}
	return b
}

// tsFamily is the taskstats family's number in the answers below.
const tsFamily = 31

// tsAnswer is the kernel's answer (version 16 of struct taskstats, on a
// little-endian machine) for TID 4242, its struct cut after ac_etime.
const tsAnswer = `
bc000000 1f000000 07000000 00000000 | nlmsghdr: 188 bytes, type 31, seq 7, port 0
02010000                            | genlmsghdr: TASKSTATS_CMD_NEW, version 1
a8000400                            | TASKSTATS_TYPE_AGGR_PID, 168 bytes
08000100 92100000                   | TASKSTATS_TYPE_PID: 4242
9c000300                            | TASKSTATS_TYPE_STATS, 156 bytes: struct taskstats
10000000 00000000 00000000 00000000 | version 16, ac_exitcode, ac_flag, ac_nice
00000000 00000000 00000000 00000000 | cpu_count, cpu_delay_total
00000000 00000000 00000000 00000000 | blkio_*
00000000 00000000 00000000 00000000 | swapin_*
5f92d811 00000000 5a44e10f 00000000 | cpu_run_real_total, cpu_run_virtual_total 266421338
70726f78 79000000 00000000 00000000 | ac_comm "proxy"
00000000 00000000 00000000 00000000
00000000 00000000 00000000 00000000 | ac_sched, ac_uid
92100000 68100000 00000000 00000000 | ac_pid 4242, ac_ppid 4200, ac_btime
43b90700 00000000                   | ac_etime 506179 us
`

// tsNoThread is the kernel's answer for a TID no thread has: ESRCH.
const tsNoThread = `
24000000 02000000 08000000 00000000 | nlmsghdr: 36 bytes, NLMSG_ERROR, seq 8
fdffffff                            | error -3 (ESRCH)
1c000000 1f000100 08000000 00000000 | the request's nlmsghdr
`

// tsAck is an acknowledgement (error 0), which a request of taskstats
// does not ask for.
const tsAck = `
24000000 02000000 08000000 00000000 | nlmsghdr: 36 bytes, NLMSG_ERROR, seq 8
00000000                            | error 0
1c000000 1f000100 08000000 00000000 | the request's nlmsghdr
`

// tsVersion1 is an answer with the struct taskstats of version 1, which
// ends at cpu_run_virtual_total: it has no ac_pid nor ac_etime.
const tsVersion1 = `
74000000 1f000000 07000000 00000000 | nlmsghdr: 116 bytes, type 31, seq 7
02010000                            | genlmsghdr
60000400                            | TASKSTATS_TYPE_AGGR_PID, 96 bytes
08000100 92100000                   | TASKSTATS_TYPE_PID: 4242
54000300                            | TASKSTATS_TYPE_STATS, 84 bytes
01000000 00000000 00000000 00000000 | version 1
00000000 00000000 00000000 00000000
00000000 00000000 00000000 00000000
00000000 00000000 00000000 00000000
5f92d811 00000000 5a44e10f 00000000 | cpu_run_real_total, cpu_run_virtual_total
`

func TestParseTaskstats(t *testing.T) {
	answer := unhex(t, tsAnswer)
	withLen := func(b []byte, n uint32) []byte {
		b = append([]byte(nil), b...)
		b[0], b[1], b[2], b[3] = byte(n), byte(n>>8), byte(n>>16), byte(n>>24)
		return b
	}
	otherFamily := append([]byte(nil), answer...)
	otherFamily[4] = tsFamily + 1
	otherPID := append([]byte(nil), answer...)
	otherPID[16+4+4+8+4+128] = 0x93 // ac_pid 4243
	for _, c := range []struct {
		name string
		in   []byte
		seq  uint32
		want taskReading
		bad  bool
	}{
		// An answer: the time on a CPU is cpu_run_virtual_total,
		// the age ac_etime.
		{"answer", answer, 7, taskReading{ns: 266421338, age: 506179 * time.Microsecond}, false},
		// The kernel's error for the thread is the reading's.
		{"no thread", unhex(t, tsNoThread), 8, taskReading{err: syscall.ESRCH}, false},
		// An acknowledgement answers no thread.
		{"ack", unhex(t, tsAck), 8, taskReading{}, true},
		// Another family's message.
		{"other family", otherFamily, 7, taskReading{}, true},
		// A message longer than what was read.
		{"cut", answer[:100], 0, taskReading{}, true},
		// A message cut inside its attributes, which say 168 and 156
		// bytes: refused, not read past its end.
		{"attributes past the end", withLen(answer[:180], 180), 7, taskReading{}, true},
		// The struct of another task than the TID.
		{"other task", otherPID, 7, taskReading{}, true},
		// A struct too short to say whose it is and its age.
		{"version 1", unhex(t, tsVersion1), 7, taskReading{}, true},
		// Nothing.
		{"empty", nil, 0, taskReading{}, true},
	} {
		seq, r, err := parseTaskstats(c.in, tsFamily)
		if (err != nil) != c.bad || !c.bad && (seq != c.seq || r != c.want) {
			t.Errorf("%s: parseTaskstats(%x) = %d, %+v, %v; want %d, %+v, bad %v", c.name, c.in, seq, r, err, c.seq, c.want, c.bad)
		}
	}
}

func TestParseFamilyID(t *testing.T) {
	answer := unhex(t, `
2c000000 10000000 01000000 00000000 | nlmsghdr: 44 bytes, GENL_ID_CTRL, seq 1
01020000                            | CTRL_CMD_NEWFAMILY, version 2
0e000200 5441534b 53544154 53000000 | CTRL_ATTR_FAMILY_NAME "TASKSTATS", padded
06000100 1f000000                   | CTRL_ATTR_FAMILY_ID 31, padded
`)
	if id, err := parseFamilyID(answer); err != nil || id != tsFamily {
		t.Errorf("parseFamilyID = %d, %v; want %d", id, err, tsFamily)
	}
	noFamily := unhex(t, `
24000000 02000000 01000000 00000000 | NLMSG_ERROR
feffffff                            | error -2 (ENOENT)
20000000 10000100 01000000 00000000 | the request's nlmsghdr
`)
	if _, err := parseFamilyID(noFamily); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("parseFamilyID of ENOENT: %v; want %v", err, syscall.ENOENT)
	}
}

// FuzzParseTaskstats checks that no input makes parseTaskstats read out
// of its bounds.
func FuzzParseTaskstats(f *testing.F) {
	f.Add(unhex(f, tsAnswer))
	f.Add(unhex(f, tsNoThread))
	f.Fuzz(func(t *testing.T, b []byte) {
		parseTaskstats(b, tsFamily)
		parseFamilyID(b)
	})
}

// A reading through taskstats is of the thread its TID named, and one
// whose start is not the thread's is another's that the kernel gave the
// TID to.
func TestSameThread(t *testing.T) {
	start := time.Now()
	th := &threadRec{start: start}
	stamp := start.Add(3 * time.Second)
	for _, c := range []struct {
		name string
		age  time.Duration
		span time.Duration
		want bool
	}{
		// Its age puts its start back where it was.
		{"same", 3 * time.Second, 100 * time.Microsecond, true},
		// Within the stamps' errors: half of either call.
		{"within", 3*time.Second - 500*time.Microsecond, 100 * time.Microsecond, true},
		// A thread born 2 ms after it.
		{"later", 3*time.Second - 2*time.Millisecond, 100 * time.Microsecond, false},
		// A thread born before it (the TID is newer than the thread).
		{"earlier", 3*time.Second + 2*time.Millisecond, 100 * time.Microsecond, false},
	} {
		if got := sameThread(th, taskReading{age: c.age}, stamp, c.span); got != c.want {
			t.Errorf("%s: sameThread(age %v, span %v) = %v; want %v", c.name, c.age, c.span, got, c.want)
		}
	}
}

// testTaskstats opens taskstats for a test, closed when it ends.
func testTaskstats(t *testing.T) *taskstatsConn {
	t.Helper()
	testenv.NeedRoot(t, "taskstats answers with CAP_NET_ADMIN")
	c, err := openTaskstats()
	if err != nil {
		t.Fatalf("openTaskstats: %v", err)
	}
	t.Cleanup(c.close)
	return c
}

// Through taskstats each of this process's threads reads the time on a
// CPU its schedstat file gives, between the file's readings before and
// after.
func TestTaskstatsAsSchedstat(t *testing.T) {
	c := testTaskstats(t)
	names, err := readDirNames("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	var tids []int
	for _, n := range names {
		tid, _ := strconv.Atoi(n)
		tids = append(tids, tid)
	}
	tids = tids[:min(len(tids), taskstatsBatch)]
	read := func() []uint64 {
		ns := make([]uint64, len(tids))
		for i, tid := range tids {
			b, _ := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/schedstat")
			ns[i], _ = parseSchedstat(b)
		}
		return ns
	}
	before := read()
	got := make([]taskReading, len(tids))
	if _, _, err := c.read(tids, got); err != nil {
		t.Fatal(err)
	}
	after := read()
	for i, tid := range tids {
		if got[i].err != nil || got[i].ns < before[i] || got[i].ns > after[i] {
			t.Errorf("thread %d: taskstats %d ns, %v; schedstat %d then %d", tid, got[i].ns, got[i].err, before[i], after[i])
		}
	}
	// A TID no thread has.
	if _, _, err := c.read([]int{1 << 30}, got[:1]); err != nil || got[0].err != syscall.ESRCH {
		t.Errorf("taskstats of no thread: %v, %v; want %v", err, got[0].err, syscall.ESRCH)
	}
}

// Without CAP_NET_ADMIN the kernel refuses taskstats, and openTaskstats
// fails: the sampler then reads schedstat.
func TestTaskstatsWithoutCapability(t *testing.T) {
	testenv.NeedRoot(t, "drops a capability root has")
	errc := make(chan error, 1)
	go func() {
		// The thread's capabilities are its own: it ends with the
		// goroutine, locked, never to be reused.
		runtime.LockOSThread()
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var data [2]unix.CapUserData
		if err := unix.Capget(&hdr, &data[0]); err != nil {
			errc <- err
			return
		}
		data[unix.CAP_NET_ADMIN/32].Effective &^= 1 << (unix.CAP_NET_ADMIN % 32)
		if err := unix.Capset(&hdr, &data[0]); err != nil {
			errc <- err
			return
		}
		c, err := openTaskstats()
		c.close()
		if err == nil {
			err = errors.New("opened")
		} else {
			t.Logf("openTaskstats without CAP_NET_ADMIN: %v", err)
			err = nil
		}
		errc <- err
	}()
	if err := <-errc; err != nil {
		t.Errorf("openTaskstats without CAP_NET_ADMIN: %v; want an error", err)
	}
}

// Answers the kernel drops, its socket's buffer full, are left
// unanswered (EAGAIN), and the next batch reads its own answers only.
func TestTaskstatsDropped(t *testing.T) {
	c := testTaskstats(t)
	if err := unix.SetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 4096); err != nil {
		t.Fatal(err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tids := make([]int, taskstatsBatch)
	for i := range tids {
		tids[i] = unix.Gettid()
	}
	got := make([]taskReading, len(tids))
	if _, _, err := c.read(tids, got); err != nil {
		t.Fatal(err)
	}
	answered := 0
	for i, r := range got {
		switch {
		case r.err == nil:
			answered++
		case r.err != unix.EAGAIN:
			t.Errorf("answer %d: %v; want a reading or EAGAIN", i, r.err)
		}
	}
	if answered == 0 || answered == len(tids) {
		t.Errorf("%d of %d answered with a buffer of a few; want some dropped", answered, len(tids))
	}
	if _, _, err := c.read([]int{1 << 30}, got[:1]); err != nil || got[0].err != syscall.ESRCH {
		t.Errorf("the next batch's answer: %v, %v; want %v", err, got[0].err, syscall.ESRCH)
	}
}

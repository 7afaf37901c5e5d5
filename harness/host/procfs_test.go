package host

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// The listing in a kept buffer finds what os.ReadDir does, over several
// getdents64 calls when the buffer is small, and the names it gives open
// relative to the directory.
func TestEachEntry(t *testing.T) {
	dir := t.TempDir()
	var want []string
	for i := range 300 {
		name := strconv.Itoa(i) + strings.Repeat("x", i%40)
		want = append(want, name)
		if err := os.WriteFile(dir+"/"+name, []byte(name+" rest"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	var got []string
	var path, buf []byte
	err = eachEntry(fd, make([]byte, 512), func(name []byte) {
		got = append(got, string(name))
		if name[:len(name)+1][len(name)] != 0 {
			t.Errorf("%q: not NUL-terminated in the buffer", name)
		}
		path = cpath(path, name, "")
		f, err := openAt(fd, path)
		if err != nil {
			t.Errorf("openAt %q: %v", name, err)
			return
		}
		defer unix.Close(f)
		buf = make([]byte, 100)
		n, _ := unix.Read(f, buf)
		if string(buf[:n]) != string(name)+" rest" {
			t.Errorf("%q reads %q", name, buf[:n])
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("eachEntry found %d names, want %d", len(got), len(want))
	}
}

// The descriptors' links read relative to /proc/self/fd are those
// os.Readlink reads, and a pipe's is recognized.
func TestReadlinkAtPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	want, _ := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(r.Fd())))
	dir, err := openProcDir(os.Getpid(), "fd")
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dir)
	var buf [64]byte
	n, err := readlinkAt(dir, cpath(nil, []byte(strconv.Itoa(int(r.Fd()))), ""), buf[:])
	if err != nil || string(buf[:n]) != want {
		t.Fatalf("readlinkAt = %q, %v; want %q", buf[:n], err, want)
	}
	if _, ok := pipeInode(buf[:n]); !ok {
		t.Errorf("%q: not a pipe", buf[:n])
	}
}

// eachLink reads the link of every descriptor of a process, as
// os.Readlink reads them: by number in turn, and through the listing for
// those numbered far above the count.
func TestEachLink(t *testing.T) {
	for _, c := range []struct {
		name string
		high bool // a descriptor numbered far above the count
	}{
		// The process's descriptors as they are.
		{"dense", false},
		// One more at 10000, past twice the count and 64.
		{"far apart", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			defer w.Close()
			if c.high {
				if err := unix.Dup2(int(r.Fd()), 10000); err != nil {
					t.Fatal(err)
				}
				defer unix.Close(10000)
			}
			dir, err := openProcDir(os.Getpid(), "fd")
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(dir)
			// What os.Readlink reads for each descriptor, but dir's own.
			names, err := readDirNames("/proc/self/fd")
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, n := range names {
				if n == strconv.Itoa(dir) {
					continue
				}
				if link, err := os.Readlink("/proc/self/fd/" + n); err == nil {
					want = append(want, link)
				}
			}
			var got []string
			var buf [64]byte
			if err := eachLink(dir, buf[:], make([]byte, dirBufSize), func(link []byte) { got = append(got, string(link)) }); err != nil {
				t.Fatal(err)
			}
			got = slices.DeleteFunc(got, func(l string) bool { return strings.HasSuffix(l, "/fd") }) // dir itself, and the listing's
			want = slices.DeleteFunc(want, func(l string) bool { return strings.HasSuffix(l, "/fd") })
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("eachLink read %q; want %q", got, want)
			}
		})
	}
}

func TestParseUint(t *testing.T) {
	for _, c := range []struct {
		in   string
		v    uint64
		used int
	}{
		{"123 456", 123, 3}, {"0", 0, 1}, {"18446744073709551615", 1<<64 - 1, 20},
		{"18446744073709551616", 0, 0}, {"x1", 0, 0}, {"", 0, 0}, {"42\n", 42, 2},
	} {
		if v, n := parseUint([]byte(c.in)); v != c.v || n != c.used {
			t.Errorf("parseUint(%q) = %d, %d; want %d, %d", c.in, v, n, c.v, c.used)
		}
	}
}

// A thread's start time is field 22 of its stat line, whatever its
// name holds; it agrees with a reading by fields of this process's own.
func TestParseStartTime(t *testing.T) {
	line := "1234 (a) b (c) R 1 1234 1234 0 -1 4194560 100 0 0 0 5 6 0 0 20 0 1 0 987654 1000 100 18446744073709551615"
	if v, err := parseStartTime([]byte(line)); err != nil || v != 987654 {
		t.Errorf("parseStartTime = %d, %v; want 987654", v, err)
	}
	for _, bad := range []string{"1234 no name", "1234 (a) R 1 2 3", ""} {
		if _, err := parseStartTime([]byte(bad)); err == nil {
			t.Errorf("parseStartTime(%q) = nil; want an error", bad)
		}
	}
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Skip(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	want, _ := strconv.ParseUint(f[19], 10, 64)
	if v, err := parseStartTime(b); err != nil || v != want {
		t.Errorf("parseStartTime(/proc/self/stat) = %d, %v; want %d", v, err, want)
	}
}

// A task's state is the field after its name, whatever the name holds.
func TestParseState(t *testing.T) {
	for _, tt := range []struct {
		line string
		want byte
		ok   bool
	}{
		{"1234 (a) b (c) Z 1 1234", 'Z', true}, // a name with ") " in it
		{"1 (systemd) S 0 1 1", 'S', true},
		{"1234 no name", 0, false},
		{"1234 (a)", 0, false},
	} {
		got, err := parseState([]byte(tt.line))
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseState(%q) = %q, %v; want %q, ok %v", tt.line, got, err, tt.want, tt.ok)
		}
	}
}

package host

import (
	"encoding/binary"
	"os"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The sampler's polls read a process's task and fd directories, and a
// file of each thread, thousands of times a poll with a proxy of a
// thread a connection. What follows reads them relative to a descriptor
// of the directory (no walk of /proc/PID/... for each entry), into
// buffers the sampler keeps, without allocating: the names come from
// getdents64's records, NUL-terminated as the kernel wrote them, and go
// to openat and readlinkat as they are.

// dirBufSize is the buffer of a directory's listing: a getdents64 call
// fills it with about 1300 entries of /proc.
const dirBufSize = 32 << 10

// openProcDir opens a directory of a process, /proc/PID/sub, for listing
// and for opening its entries.
func openProcDir(pid int, sub string) (int, error) {
	return unix.Open("/proc/"+strconv.Itoa(pid)+"/"+sub, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
}

// eachEntry calls fn for every entry of dir, a directory opened by
// openProcDir and not yet listed, but . and .., listing it into buf.
// name[:len(name)+1] ends in the NUL that ends the name in buf, for the
// calls below; name is valid until fn returns.
func eachEntry(dir int, buf []byte, fn func(name []byte)) error {
	for {
		n, err := unix.Getdents(dir, buf)
		if err != nil {
			return err
		}
		if n <= 0 {
			return nil
		}
		// struct linux_dirent64: d_ino (8 bytes), d_off (8), d_reclen
		// (2), d_type (1), then the name and its NUL.
		for b := buf[:n]; len(b) >= 19; {
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				break
			}
			name := b[19:reclen]
			for i, c := range name {
				if c == 0 {
					name = name[:i]
					break
				}
			}
			if len(name) > 0 && !(name[0] == '.' && (len(name) == 1 || len(name) == 2 && name[1] == '.')) {
				fn(name)
			}
			b = b[reclen:]
		}
	}
}

// eachLink calls fn with the link of every descriptor of a process, dir
// its /proc/PID/fd opened by openProcDir and not yet listed, read into
// buf (link is valid until fn returns; dents is the listing's buffer).
// Where the directory's size says how many descriptors the process holds
// (Linux 6.2 on), it reads the links of the numbers in turn until it has
// read that many, rather than listing the directory first: a listing
// makes the kernel build an entry for every descriptor, which the
// readlink then looks up again (a third of the readlinks' cost with 4000
// sockets, BenchmarkSampler). Past twice the count and 64 (descriptors
// closed meanwhile, or numbers far apart), it lists the rest.
func eachLink(dir int, buf, dents []byte, fn func(link []byte)) error {
	var st unix.Stat_t
	if err := unix.Fstat(dir, &st); err != nil {
		return err
	}
	open := int(st.Size) // 0 before Linux 6.2
	if open <= 0 {
		return eachEntry(dir, dents, func(name []byte) { readLink(dir, name, buf, fn) })
	}
	var num [24]byte
	found := 0
	for fd := 0; found < open; fd++ {
		if fd > 2*open+64 {
			return eachEntry(dir, dents, func(name []byte) {
				if v, n := parseUint(name); n == len(name) && v >= uint64(fd) {
					readLink(dir, name, buf, fn)
				}
			})
		}
		name := strconv.AppendInt(num[:0], int64(fd), 10)
		name = append(name, 0)
		if readLink(dir, name[:len(name)-1], buf, fn) != unix.ENOENT {
			found++
		}
	}
	return nil
}

// readLink reads the link of name, NUL-terminated in its buffer, in the
// directory dir into buf, and calls fn with it when it could be read.
func readLink(dir int, name, buf []byte, fn func(link []byte)) error {
	n, err := readlinkAt(dir, name[:len(name)+1], buf)
	if err == nil {
		fn(buf[:n])
	}
	return err
}

// cpath is name with suffix, NUL-terminated, in buf (grown when short).
func cpath(buf []byte, name []byte, suffix string) []byte {
	buf = append(buf[:0], name...)
	buf = append(buf, suffix...)
	return append(buf, 0)
}

// openAt opens the file of NUL-terminated path relative to the
// directory dir, for reading.
func openAt(dir int, path []byte) (int, error) {
	fd, _, errno := unix.Syscall6(unix.SYS_OPENAT, uintptr(dir), uintptr(unsafe.Pointer(&path[0])), uintptr(unix.O_RDONLY|unix.O_CLOEXEC), 0, 0, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

// readlinkAt reads the link of NUL-terminated name relative to the
// directory dir into buf.
func readlinkAt(dir int, name []byte, buf []byte) (int, error) {
	n, _, errno := unix.Syscall6(unix.SYS_READLINKAT, uintptr(dir), uintptr(unsafe.Pointer(&name[0])), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// parseUint reads the decimal number that b starts with and returns it
// with how many bytes it took: 0 when b does not start with a digit or
// the number overflows.
func parseUint(b []byte) (uint64, int) {
	var v uint64
	i := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		d := uint64(b[i] - '0')
		if v > (1<<64-1-d)/10 {
			return 0, 0
		}
		v = v*10 + d
	}
	return v, i
}

// readDirNames lists a directory.
func readDirNames(dir string) ([]string, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}

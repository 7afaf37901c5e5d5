package host

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The taskstats family of generic netlink: the kernel's accounting of one
// task, asked for by its TID (the kernel's Documentation/accounting/
// taskstats.rst). Its cpu_run_virtual_total is the task's time on a CPU
// in nanoseconds, the sum_exec_runtime that schedstat's first number is,
// and ac_etime its age. The kernel answers a request inside the sendmsg
// that carries it, so one sendmsg asks for a batch of threads and one
// recvmmsg reads their answers: a poll of 2000 threads makes about 64
// system calls and opens no file, where schedstat takes an open a thread
// once (about 6 us here) and a pread a thread a poll (threads.go); a
// thread's answer costs the kernel about what a pread does (2 to 3.5 us
// here). The family answers only with CAP_NET_ADMIN, and a kernel may
// not have it (built without it, or not registered for the network
// namespace the harness runs in): openTaskstats checks that it answers,
// and answers what schedstat gives, and the sampler reads schedstat
// where it does not.

// taskstatsBatch is how many threads one sendmsg asks for. The kernel
// queues the answers (about 1.3 KB each with the socket buffer's
// overhead) on the socket inside the call and drops those past its
// receive buffer (net.core.rmem_default, 208 KB by default); and the
// batch's readings are stamped with the middle of the call, which must
// stay well within maxReadSpan.
const taskstatsBatch = 64

// taskstatsReplyMax is the buffer of one answer: about 600 bytes with the
// kernel's struct taskstats of version 16, which grows at the end.
const taskstatsReplyMax = 2048

// The offsets in struct taskstats of what the sampler reads, which no
// version has moved: later versions only add fields at the end.
var (
	tsOffRuntime = int(unsafe.Offsetof(unix.Taskstats{}.Cpu_run_virtual_total))
	tsOffPID     = int(unsafe.Offsetof(unix.Taskstats{}.Ac_pid))
	tsOffAge     = int(unsafe.Offsetof(unix.Taskstats{}.Ac_etime))
)

// taskReading is the kernel's answer for one thread.
type taskReading struct {
	ns  uint64        // its time on a CPU, in nanoseconds
	age time.Duration // its age when read, to the microsecond
	err error         // the kernel's error: ESRCH for a thread that ended
}

// taskstatsConn is a generic netlink socket that asks the taskstats
// family, with its buffers.
type taskstatsConn struct {
	fd     int
	family uint16
	seq    uint32 // the sequence number of the next request
	kernel unix.SockaddrNetlink
	req    []byte
	buf    []byte // taskstatsBatch answers of taskstatsReplyMax
	iov    []unix.Iovec
	msgs   []unix.Mmsghdr
	// hold, when set (by the tests), is called inside every call of
	// read: it holds the thread off the CPU while the kernel reads a
	// batch, as a loaded machine does.
	hold func()
}

// openTaskstats opens a socket on the taskstats family and checks that
// the family answers, and answers what schedstat gives: the calling
// thread's time on a CPU in its answer is within the readings of its
// schedstat file just before and after.
func openTaskstats() (c *taskstatsConn, err error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_GENERIC)
	if err != nil {
		return nil, fmt.Errorf("open a generic netlink socket: %w", err)
	}
	c = &taskstatsConn{fd: fd, seq: 1, kernel: unix.SockaddrNetlink{Family: unix.AF_NETLINK}, req: make([]byte, 0, taskstatsBatch*taskstatsReqLen), buf: make([]byte, taskstatsBatch*taskstatsReplyMax),
		iov: make([]unix.Iovec, taskstatsBatch), msgs: make([]unix.Mmsghdr, taskstatsBatch)}
	defer func() {
		if err != nil {
			c.close()
		}
	}()
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, fmt.Errorf("bind a generic netlink socket: %w", err)
	}
	for i := range c.msgs {
		c.iov[i].Base = &c.buf[i*taskstatsReplyMax]
		c.iov[i].SetLen(taskstatsReplyMax)
		c.msgs[i].Hdr.Iov = &c.iov[i]
		c.msgs[i].Hdr.SetIovlen(1)
	}
	if c.family, err = c.resolve(); err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before, err := ownSchedstat()
	if err != nil {
		return nil, err
	}
	var got [1]taskReading
	if _, _, err := c.read([]int{unix.Gettid()}, got[:]); err != nil {
		return nil, err
	}
	after, err := ownSchedstat()
	if err != nil {
		return nil, err
	}
	if got[0].err != nil {
		return nil, fmt.Errorf("taskstats of the sampler's own thread: %w", got[0].err)
	}
	if got[0].ns < before || got[0].ns > after {
		return nil, fmt.Errorf("taskstats gives the sampler's own thread %d ns on a CPU, schedstat %d then %d", got[0].ns, before, after)
	}
	return c, nil
}

// ownSchedstat reads the calling thread's time on a CPU from its
// schedstat file.
func ownSchedstat() (uint64, error) {
	b, err := os.ReadFile("/proc/thread-self/schedstat")
	if err != nil {
		return 0, fmt.Errorf("read the sampler's own schedstat: %w", err)
	}
	ns, ok := parseSchedstat(b)
	if !ok {
		return 0, fmt.Errorf("/proc/thread-self/schedstat: %q: no time on a CPU", strings.TrimSpace(string(b)))
	}
	return ns, nil
}

// close closes the socket; it is safe to call again.
func (c *taskstatsConn) close() {
	if c != nil && c.fd >= 0 {
		unix.Close(c.fd)
		c.fd = -1
	}
}

// resolve asks the generic netlink controller for the taskstats
// family's number.
func (c *taskstatsConn) resolve() (uint16, error) {
	const name = unix.TASKSTATS_GENL_NAME + "\x00"
	m := binary.NativeEndian.AppendUint32(nil, 0) // its length, below
	m = binary.NativeEndian.AppendUint16(m, unix.GENL_ID_CTRL)
	m = binary.NativeEndian.AppendUint16(m, unix.NLM_F_REQUEST)
	m = binary.NativeEndian.AppendUint32(m, 0) // seq
	m = binary.NativeEndian.AppendUint32(m, 0) // port: the kernel's
	m = append(m, unix.CTRL_CMD_GETFAMILY, 1, 0, 0)
	m = appendAttr(m, unix.CTRL_ATTR_FAMILY_NAME, []byte(name))
	binary.NativeEndian.PutUint32(m, uint32(len(m)))
	if err := unix.Sendto(c.fd, m, 0, &c.kernel); err != nil {
		return 0, fmt.Errorf("ask for the taskstats family: %w", err)
	}
	b := c.buf[:taskstatsReplyMax]
	n, _, err := unix.Recvfrom(c.fd, b, 0)
	if err != nil {
		return 0, fmt.Errorf("read the taskstats family: %w", err)
	}
	id, err := parseFamilyID(b[:n])
	if err != nil {
		return 0, fmt.Errorf("the taskstats family: %w", err)
	}
	return id, nil
}

// taskstatsReqLen is the length of one request: the netlink and generic
// netlink headers, and the TID's attribute.
const taskstatsReqLen = unix.NLMSG_HDRLEN + unix.GENL_HDRLEN + unix.SizeofNlAttr + 4

// read asks for the threads tids, at most taskstatsBatch, in one sendmsg,
// and puts their answers in out, by index; t0 and t1 bound the call, in
// which the kernel read them. A thread not answered (its answer dropped)
// has the error EAGAIN.
func (c *taskstatsConn) read(tids []int, out []taskReading) (t0, t1 time.Time, err error) {
	base := c.seq
	c.req = c.req[:0]
	for i, tid := range tids {
		c.req = appendTaskstatsRequest(c.req, c.family, base+uint32(i), tid)
		out[i] = taskReading{err: unix.EAGAIN}
	}
	c.seq += uint32(len(tids))
	t0 = time.Now()
	if c.hold != nil {
		c.hold()
	}
	err = unix.Sendto(c.fd, c.req, 0, &c.kernel)
	t1 = time.Now()
	if err != nil {
		return t0, t1, fmt.Errorf("ask taskstats for %d threads: %w", len(tids), err)
	}
	// Every answer is queued by now; one dropped leaves ENOBUFS once,
	// then the rest.
	for left, tries := len(tids), 0; left > 0 && tries <= len(tids); tries++ {
		n, err := recvmmsg(c.fd, c.msgs[:left], unix.MSG_DONTWAIT)
		if err == unix.ENOBUFS {
			continue
		}
		if err != nil || n == 0 {
			break // EAGAIN: the rest were dropped
		}
		for i := range n {
			if c.msgs[i].Hdr.Flags&unix.MSG_TRUNC != 0 {
				continue
			}
			m := c.buf[i*taskstatsReplyMax:][:c.msgs[i].Len]
			seq, r, err := parseTaskstats(m, c.family)
			if k := int(seq - base); err == nil && k >= 0 && k < len(tids) {
				out[k] = r
			}
		}
		left -= n
	}
	return t0, t1, nil
}

// recvmmsg reads up to len(msgs) datagrams of fd into msgs.
func recvmmsg(fd int, msgs []unix.Mmsghdr, flags int) (int, error) {
	n, _, errno := unix.Syscall6(unix.SYS_RECVMMSG, uintptr(fd), uintptr(unsafe.Pointer(&msgs[0])), uintptr(len(msgs)), uintptr(flags), 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// appendTaskstatsRequest appends to b the request of the taskstats of
// thread tid.
func appendTaskstatsRequest(b []byte, family uint16, seq uint32, tid int) []byte {
	b = binary.NativeEndian.AppendUint32(b, taskstatsReqLen)
	b = binary.NativeEndian.AppendUint16(b, family)
	b = binary.NativeEndian.AppendUint16(b, unix.NLM_F_REQUEST)
	b = binary.NativeEndian.AppendUint32(b, seq)
	b = binary.NativeEndian.AppendUint32(b, 0)
	b = append(b, unix.TASKSTATS_CMD_GET, unix.TASKSTATS_GENL_VERSION, 0, 0)
	return appendAttr(b, unix.TASKSTATS_CMD_ATTR_PID, binary.NativeEndian.AppendUint32(nil, uint32(tid)))
}

// appendAttr appends a netlink attribute, padded to 4 bytes.
func appendAttr(b []byte, typ uint16, v []byte) []byte {
	b = binary.NativeEndian.AppendUint16(b, uint16(unix.SizeofNlAttr+len(v)))
	b = binary.NativeEndian.AppendUint16(b, typ)
	b = append(b, v...)
	for len(b)%unix.NLA_ALIGNTO != 0 {
		b = append(b, 0)
	}
	return b
}

// errNetlink is a netlink message that is not one the sampler can read.
var errNetlink = errors.New("malformed netlink message")

// netlinkMessage splits b's first netlink message into its type, sequence
// number and payload.
func netlinkMessage(b []byte) (typ uint16, seq uint32, payload []byte, err error) {
	if len(b) < unix.NLMSG_HDRLEN {
		return 0, 0, nil, fmt.Errorf("%w: %d bytes", errNetlink, len(b))
	}
	n := int(binary.NativeEndian.Uint32(b))
	if n < unix.NLMSG_HDRLEN || n > len(b) {
		return 0, 0, nil, fmt.Errorf("%w: length %d of %d bytes", errNetlink, n, len(b))
	}
	return binary.NativeEndian.Uint16(b[4:]), binary.NativeEndian.Uint32(b[8:]), b[unix.NLMSG_HDRLEN:n], nil
}

// netlinkError reads the payload of an NLMSG_ERROR message: the errno
// the kernel answered with, nil for 0 (an acknowledgement).
func netlinkError(payload []byte) error {
	if len(payload) < 4 {
		return fmt.Errorf("%w: an error of %d bytes", errNetlink, len(payload))
	}
	if e := -int32(binary.NativeEndian.Uint32(payload)); e != 0 {
		return syscall.Errno(e)
	}
	return nil
}

// eachAttr calls fn for each netlink attribute in b.
func eachAttr(b []byte, fn func(typ uint16, v []byte)) error {
	for len(b) > 0 {
		if len(b) < unix.SizeofNlAttr {
			return fmt.Errorf("%w: %d bytes after the last attribute", errNetlink, len(b))
		}
		n := int(binary.NativeEndian.Uint16(b))
		if n < unix.SizeofNlAttr || n > len(b) {
			return fmt.Errorf("%w: attribute of length %d in %d bytes", errNetlink, n, len(b))
		}
		fn(binary.NativeEndian.Uint16(b[2:])&^(unix.NLA_F_NESTED|unix.NLA_F_NET_BYTEORDER), b[unix.SizeofNlAttr:n])
		b = b[min((n+unix.NLA_ALIGNTO-1)&^(unix.NLA_ALIGNTO-1), len(b)):]
	}
	return nil
}

// parseFamilyID reads the generic netlink controller's answer to
// CTRL_CMD_GETFAMILY: the family's number.
func parseFamilyID(b []byte) (uint16, error) {
	typ, _, p, err := netlinkMessage(b)
	if err != nil {
		return 0, err
	}
	if typ == unix.NLMSG_ERROR {
		if err := netlinkError(p); err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("%w: an acknowledgement, no family", errNetlink)
	}
	if len(p) < unix.GENL_HDRLEN {
		return 0, fmt.Errorf("%w: no generic netlink header", errNetlink)
	}
	var id uint16
	err = eachAttr(p[unix.GENL_HDRLEN:], func(typ uint16, v []byte) {
		if typ == unix.CTRL_ATTR_FAMILY_ID && len(v) >= 2 {
			id = binary.NativeEndian.Uint16(v)
		}
	})
	if err == nil && id == 0 {
		err = fmt.Errorf("%w: no family number", errNetlink)
	}
	return id, err
}

// parseTaskstats reads one answer of the taskstats family (family): its
// sequence number and the thread's reading, or the kernel's error for it
// (in the reading). err is set when b is not such an answer.
func parseTaskstats(b []byte, family uint16) (seq uint32, r taskReading, err error) {
	typ, seq, p, err := netlinkMessage(b)
	if err != nil {
		return 0, r, err
	}
	switch {
	case typ == unix.NLMSG_ERROR:
		r.err = netlinkError(p)
		if r.err == nil {
			return seq, r, fmt.Errorf("%w: an acknowledgement, no taskstats", errNetlink)
		}
		return seq, r, nil
	case typ != family:
		return seq, r, fmt.Errorf("%w: type %d, not taskstats' %d", errNetlink, typ, family)
	case len(p) < unix.GENL_HDRLEN:
		return seq, r, fmt.Errorf("%w: no generic netlink header", errNetlink)
	}
	// TASKSTATS_TYPE_AGGR_PID holds the TID (TASKSTATS_TYPE_PID) and
	// the struct taskstats (TASKSTATS_TYPE_STATS).
	var aggr, stats []byte
	var tid uint32
	err = eachAttr(p[unix.GENL_HDRLEN:], func(typ uint16, v []byte) {
		if typ == unix.TASKSTATS_TYPE_AGGR_PID {
			aggr = v
		}
	})
	if err == nil {
		err = eachAttr(aggr, func(typ uint16, v []byte) {
			switch {
			case typ == unix.TASKSTATS_TYPE_PID && len(v) == 4:
				tid = binary.NativeEndian.Uint32(v)
			case typ == unix.TASKSTATS_TYPE_STATS:
				stats = v
			}
		})
	}
	if err != nil {
		return seq, r, err
	}
	if stats == nil || tid == 0 {
		return seq, r, fmt.Errorf("%w: no TID and taskstats", errNetlink)
	}
	if len(stats) < tsOffAge+8 {
		return seq, r, fmt.Errorf("%w: taskstats of %d bytes", errNetlink, len(stats))
	}
	if pid := binary.NativeEndian.Uint32(stats[tsOffPID:]); pid != tid {
		return seq, r, fmt.Errorf("%w: taskstats of %d for TID %d", errNetlink, pid, tid)
	}
	r.ns = binary.NativeEndian.Uint64(stats[tsOffRuntime:])
	r.age = time.Duration(binary.NativeEndian.Uint64(stats[tsOffAge:])) * time.Microsecond
	return seq, r, nil
}

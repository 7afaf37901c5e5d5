package host

import (
	"bytes"
	"strconv"

	"golang.org/x/sys/unix"
)

// ProxyReady notes the pipes the proxy's processes hold now, once it is
// ready and before any load: they are its own (wake-ups, logs), and the
// sampler counts only the others as the splicing's (Window.Pipes). Call
// it for each run's proxy, once WaitAccepted has seen it take the
// readiness probes' connections: before, it may not have made them yet.
func (h *Host) ProxyReady() {
	if h.remotes[RoleProxy] != nil {
		h.callProxy("ProxyReady", nil)
		return
	}
	own := h.proxyPipes(h.PIDs(RoleProxy), nil, make([]byte, dirBufSize), nil)
	h.pipesMu.Lock()
	h.ownPipes = own
	h.pipesMu.Unlock()
}

// notedPipes are the proxy's own pipes, which ProxyReady noted.
func (h *Host) notedPipes() map[uint64]bool {
	h.pipesMu.Lock()
	defer h.pipesMu.Unlock()
	return h.ownPipes
}

// proxyPipes returns the distinct pipes (by inode) that pids hold, less
// those of except (nil: none); dents is the buffer of the descriptors'
// listing (dirBufSize). step, when not nil, is called before each
// descriptor's link is looked at (the sampler's breather).
func (h *Host) proxyPipes(pids []int, except map[uint64]bool, dents []byte, step func()) map[uint64]bool {
	found := map[uint64]bool{}
	var buf [64]byte
	for _, pid := range pids {
		dir, err := openProcDir(pid, "fd")
		if err != nil {
			continue // gone meanwhile
		}
		_ = eachLink(dir, buf[:], dents, func(link []byte) {
			if step != nil {
				step()
			}
			ino, ok := pipeInode(link)
			if ok && !except[ino] {
				found[ino] = true
			}
		})
		unix.Close(dir)
	}
	return found
}

// pipeInode returns the inode of a descriptor's link when it is a pipe:
// "pipe:[123456]".
func pipeInode(link []byte) (uint64, bool) {
	rest, ok := bytes.CutPrefix(link, []byte("pipe:["))
	if !ok || len(rest) < 2 || rest[len(rest)-1] != ']' {
		return 0, false
	}
	v, err := strconv.ParseUint(string(rest[:len(rest)-1]), 10, 64)
	return v, err == nil
}

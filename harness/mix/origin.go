package mix

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"slices"
	"strconv"
	"sync"

	"bench/internal/accept"
	"bench/scenarios"
)

// Serve is the mix scenarios' origin: it answers GET (or POST) of the
// mix's files (scenarios.MixAnswers) over HTTP/1.1 keep-alive on ln until
// ctx ends. Unlike nginx, which gives up an answer when the client shuts
// its sending side while the answer is still being written ("client
// prematurely closed connection"), it writes every answer whole: the
// mix's half-closed exchanges test the proxy, not the origin.
func Serve(ctx context.Context, ln net.Listener) error {
	answers := map[string]servedAnswer{}
	for _, a := range scenarios.MixAnswers() {
		head := "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: " + strconv.Itoa(a.Size) + "\r\n"
		body := scenarios.OriginAnswer(a.Size)
		answers[a.Path] = servedAnswer{
			keep:    slices.Concat([]byte(head+"\r\n"), body),
			closing: slices.Concat([]byte(head+"Connection: close\r\n\r\n"), body),
		}
	}
	return accept.Serve(ctx, ln, func(c net.Conn) { serveConn(c, answers) })
}

// Listen is the origin's listener on addr: TCP without keep-alive
// probes, as the mix's own connections (20000 connections idle at once
// would send thousands a second), and each connection accepted four
// system calls fewer.
func Listen(addr string) (net.Listener, error) {
	lc := net.ListenConfig{KeepAlive: -1}
	return lc.Listen(context.Background(), "tcp", addr)
}

// servedAnswer is one of the origin's answers, head and body together so
// that one write sends it: kept alive, and the last of its connection.
type servedAnswer struct{ keep, closing []byte }

var notFound = []byte("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")

// readers are the connections' request readers, kept from one
// connection to the next: one in ten of the mix's exchanges opens one.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4096) }}

// serveConn answers the requests of one connection until the client
// closes it or asks for the last answer with Connection: close.
func serveConn(c net.Conn, answers map[string]servedAnswer) {
	r := readers.Get().(*bufio.Reader)
	r.Reset(c)
	defer func() {
		r.Reset(nil)
		readers.Put(r)
	}()
	var q request
	for {
		if err := q.read(r); err != nil {
			return
		}
		if q.body > 0 {
			if _, err := r.Discard(q.body); err != nil {
				return
			}
		}
		a, ok := answers[string(q.path)]
		if !ok {
			if _, err := c.Write(notFound); err != nil {
				return
			}
			continue
		}
		// A half-closed client is written to all the same.
		whole := a.keep
		if q.closing {
			whole = a.closing
		}
		if _, err := c.Write(whole); err != nil || q.closing {
			return
		}
	}
}

// request is what the origin reads of an HTTP/1.1 request's head: its
// target's path, whether it says Connection: close, and the length of
// its body. path is the request's own, its room kept for the next.
type request struct {
	path    []byte
	closing bool
	body    int
}

var (
	absolute         = []byte("http://")
	connectionHeader = []byte("Connection")
	closeValue       = []byte("close")
	lengthHeader     = []byte("Content-Length")
)

// read reads the next request's head from r.
func (q *request) read(r *bufio.Reader) error {
	q.path, q.closing, q.body = q.path[:0], false, 0
	for i := 0; ; i++ {
		l, err := r.ReadSlice('\n')
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				err = errors.New("request header line too long")
			}
			return err
		}
		line := bytes.TrimRight(l, "\r\n")
		if len(line) == 0 {
			if i == 0 {
				return io.ErrUnexpectedEOF
			}
			return nil
		}
		if i == 0 {
			target, good := requestTarget(line)
			if !good {
				return errors.New("bad request line")
			}
			if u, found := bytes.CutPrefix(target, absolute); found { // an absolute URI
				if j := bytes.IndexByte(u, '/'); j >= 0 {
					target = u[j:]
				}
			}
			q.path = append(q.path, target...)
			continue
		}
		k, v, _ := bytes.Cut(line, []byte(":"))
		switch v = bytes.TrimSpace(v); {
		case bytes.EqualFold(k, connectionHeader):
			q.closing = bytes.EqualFold(v, closeValue)
		case bytes.EqualFold(k, lengthHeader):
			var good bool
			if q.body, good = parseLength(v); !good {
				return errors.New("bad Content-Length")
			}
		}
	}
}

// requestTarget is the second of a request line's three fields, those
// parted by spaces or tabs.
func requestTarget(line []byte) (target []byte, good bool) {
	n := 0
	for {
		line = bytes.TrimLeft(line, " \t")
		if len(line) == 0 {
			return target, n == 3
		}
		end := bytes.IndexAny(line, " \t")
		if end < 0 {
			end = len(line)
		}
		if n == 1 {
			target = line[:end]
		}
		line = line[end:]
		if n++; n > 3 {
			return nil, false
		}
	}
}

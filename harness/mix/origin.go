package mix

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"

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
		answers[a.Path] = servedAnswer{
			head: []byte("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: " + strconv.Itoa(a.Size) + "\r\n"),
			body: scenarios.OriginAnswer(a.Size),
		}
	}
	return accept.Serve(ctx, ln, func(c net.Conn) { serveConn(c, answers) })
}

// servedAnswer is one of the origin's answers: its head without the line that
// ends it, and its body.
type servedAnswer struct{ head, body []byte }

var (
	closeHead = []byte("Connection: close\r\n\r\n")
	endHead   = []byte("\r\n")
	notFound  = []byte("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
)

// serveConn answers the requests of one connection until the client
// closes it or asks for the last answer with Connection: close.
func serveConn(c net.Conn, answers map[string]servedAnswer) {
	r := bufio.NewReaderSize(c, 4096)
	for {
		path, closing, body, err := ReadRequest(r)
		if err != nil {
			return
		}
		if body > 0 {
			if _, err := r.Discard(body); err != nil {
				return
			}
		}
		a, ok := answers[path]
		if !ok {
			if _, err := c.Write(notFound); err != nil {
				return
			}
			continue
		}
		// A half-closed client is written to all the same.
		end := endHead
		if closing {
			end = closeHead
		}
		bufs := net.Buffers{a.head, end, a.body}
		if _, err := bufs.WriteTo(c); err != nil || closing {
			return
		}
	}
}

// ReadRequest reads an HTTP/1.1 request head: its target's path, whether
// it says Connection: close, and the length of its body.
func ReadRequest(r *bufio.Reader) (path string, closing bool, body int, err error) {
	for i := 0; ; i++ {
		l, err := r.ReadSlice('\n')
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				err = errors.New("request header line too long")
			}
			return "", false, 0, err
		}
		line := strings.TrimRight(string(l), "\r\n")
		if line == "" {
			if i == 0 {
				return "", false, 0, io.ErrUnexpectedEOF
			}
			return path, closing, body, nil
		}
		if i == 0 {
			f := strings.Fields(line)
			if len(f) != 3 {
				return "", false, 0, errors.New("bad request line")
			}
			path = f[1]
			if u, ok := strings.CutPrefix(path, "http://"); ok { // an absolute URI
				if j := strings.IndexByte(u, '/'); j >= 0 {
					path = u[j:]
				}
			}
			continue
		}
		k, v, _ := strings.Cut(line, ":")
		switch v = strings.TrimSpace(v); {
		case strings.EqualFold(k, "Connection"):
			closing = strings.EqualFold(v, "close")
		case strings.EqualFold(k, "Content-Length"):
			if body, err = strconv.Atoi(v); err != nil || body < 0 {
				return "", false, 0, errors.New("bad Content-Length")
			}
		}
	}
}

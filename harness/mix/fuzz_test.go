package mix

import (
	"io"
	"net"
	"testing"
)

// What a proxy answers is outside input: an answer's head is read or
// found bad, never taken for a negative length. go test runs the seeds;
// a longer run is in docs/tests.md.
func FuzzParseHead(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 1024\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 1024\r\nConnection: close\r\n\r\n"))
	f.Add([]byte("HTTP/1.0 200 Connection established\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 200 OK\r\ncontent-length: -5\r\n\r\n"))
	f.Fuzz(func(t *testing.T, head []byte) {
		if length, _, good := parseHead(head); good && length < 0 {
			t.Errorf("%q read as a good head of %d bytes", head, length)
		}
	})
}

// A SOCKSv5 proxy's replies (RFC 1928), the method's and the CONNECT's:
// whatever they are, the handshake ends, and ok only after a reply that
// grants both.
func FuzzSocksReply(f *testing.F) {
	f.Add([]byte{5, 0, 5, 0, 0, 1, 10, 0, 2, 2, 0x1f, 0x90})      // IPv4 bound address
	f.Add([]byte{5, 0, 5, 0, 0, 3, 4, 'h', 'o', 's', 't', 0, 80}) // a name
	f.Add(append([]byte{5, 0, 5, 0, 0, 4}, make([]byte, 18)...))  // IPv6
	f.Add([]byte{5, 0xff})                                        // no acceptable method
	f.Add([]byte{5, 0, 5, 5, 0, 1, 0, 0, 0, 0, 0, 0})             // connection refused
	f.Add([]byte{5, 0, 5, 0, 0, 9, 0, 0})                         // an unknown address type
	m := &Mix{}
	var err error
	if m.socks, err = socksRequest("10.0.2.2:8080"); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, reply []byte) {
		c, proxy := net.Pipe()
		go io.Copy(io.Discard, proxy)
		go func() { proxy.Write(reply); proxy.Close() }()
		k := m.handshakeSocks(c, make([]byte, 512))
		c.Close()
		granted := len(reply) >= 7 && reply[0] == 5 && reply[1] == 0 && reply[2] == 5 && reply[3] == 0
		if k == ok && !granted {
			t.Errorf("reply %v taken as granted", reply)
		}
	})
}

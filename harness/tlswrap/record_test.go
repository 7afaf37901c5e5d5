package tlswrap

import (
	"bytes"
	"crypto/tls"
	"strings"
	"sync/atomic"
	"testing"
)

// pair returns the two ends of one direction's protection: the sender's
// and the receiver's, from the same secret.
func pair(t *testing.T, suite uint16) (send, recv *protection) {
	t.Helper()
	secret := bytes.Repeat([]byte{7}, 32)
	if suite == tls.TLS_AES_256_GCM_SHA384 {
		secret = bytes.Repeat([]byte{7}, 48)
	}
	send, err := newProtection(suite, secret)
	if err != nil {
		t.Fatal(err)
	}
	recv, err = newProtection(suite, secret)
	if err != nil {
		t.Fatal(err)
	}
	return send, recv
}

// inner is content followed by its content type, as seal takes it.
func inner(content []byte, typ byte) []byte { return append(append([]byte{}, content...), typ) }

// TestSealOpen: data sealed in records of the largest size opens to the
// same bytes, and the byte sealData borrows after the data is put back.
func TestSealOpen(t *testing.T) {
	for _, suite := range []uint16{tls.TLS_AES_128_GCM_SHA256, tls.TLS_AES_256_GCM_SHA384, tls.TLS_CHACHA20_POLY1305_SHA256} {
		send, recv := pair(t, suite)
		data := make([]byte, 3*maxRecord+5+1)
		for i := range data {
			data[i] = byte(i)
		}
		want := bytes.Clone(data[:len(data)-1])
		out := send.sealData(nil, data[:len(data)-1])
		if !bytes.Equal(data[:len(data)-1], want) || data[len(data)-1] != byte(len(data)-1) {
			t.Fatalf("%s: sealData changed its input", tls.CipherSuiteName(suite))
		}
		r := records{inbuf: inbuf{buf: out, end: len(out)}, p: recv, owed: new(atomic.Bool)}
		got, done, err := r.openAll()
		if err != nil || done || len(got) != 4 {
			t.Fatalf("%s: openAll = %d pieces, %v, %v; want 4 records", tls.CipherSuiteName(suite), len(got), done, err)
		}
		if !bytes.Equal(bytes.Join(got, nil), want) {
			t.Errorf("%s: the records opened to other bytes", tls.CipherSuiteName(suite))
		}
	}
}

// TestOpenAll: what the reader does with each kind of record after the
// handshake, and with records that arrive in pieces.
func TestOpenAll(t *testing.T) {
	send, recv := pair(t, tls.TLS_AES_128_GCM_SHA256)
	var stream []byte
	stream = send.seal(stream, inner([]byte("one"), recordApplicationData))
	// A session ticket, sent over two records; then a KeyUpdate that
	// asks for one in return, after which the sender's keys move on.
	ticket := []byte{handshakeNewSessionTicket, 0, 0, 4, 1, 2, 3, 4}
	stream = send.seal(stream, inner(ticket[:3], recordHandshake))
	stream = send.seal(stream, inner(ticket[3:], recordHandshake))
	stream = send.seal(stream, keyUpdate(updateRequested))
	if err := send.update(); err != nil {
		t.Fatal(err)
	}
	stream = send.seal(stream, inner([]byte("two"), recordApplicationData))
	stream = send.seal(stream, closeNotify)

	owed := new(atomic.Bool)
	r := records{inbuf: inbuf{buf: make([]byte, len(stream))}, p: recv, owed: owed}
	var got []byte
	// The bytes arrive 7 at a time.
	for sent := 0; ; {
		n := copy(r.buf[r.end:], stream[sent:min(sent+7, len(stream))])
		r.end += n
		sent += n
		data, done, err := r.openAll()
		if err != nil {
			t.Fatalf("after %d bytes: %v", sent, err)
		}
		got = append(got, bytes.Join(data, nil)...)
		if done {
			if sent != len(stream) {
				t.Errorf("done after %d of %d bytes", sent, len(stream))
			}
			break
		}
		if sent == len(stream) {
			t.Fatal("all sent and no close_notify seen")
		}
	}
	if string(got) != "onetwo" {
		t.Errorf("data %q; want onetwo", got)
	}
	if !owed.Load() {
		t.Errorf("a KeyUpdate asking for one in return left none owed")
	}
}

// TestOpenAllRefuses: what may not come after the handshake ends the
// connection, with a reason.
func TestOpenAllRefuses(t *testing.T) {
	for _, c := range []struct {
		name   string
		stream func(send *protection) []byte
		want   string
	}{
		{"a record longer than TLS allows", func(*protection) []byte { return []byte{recordApplicationData, 3, 3, 0x50, 0} }, "more than TLS allows"},
		{"a plaintext handshake record", func(*protection) []byte { return []byte{recordHandshake, 3, 3, 0, 1, 0} }, "type 22 after the handshake"},
		{"a forged record", func(send *protection) []byte {
			rec := send.seal(nil, inner([]byte("x"), recordApplicationData))
			rec[len(rec)-1] ^= 1
			return rec
		}, "message authentication failed"},
		{"a fatal alert", func(send *protection) []byte { return send.seal(nil, []byte{2, 40, recordAlert}) }, "alert 40"},
		{"a handshake message the wrapper has no part in", func(send *protection) []byte {
			return send.seal(nil, inner([]byte{13, 0, 0, 0}, recordHandshake)) // CertificateRequest
		}, "handshake message 13"},
		{"padding only", func(send *protection) []byte { return send.seal(nil, []byte{0, 0}) }, "no content type"},
		{"change_cipher_spec after Finished", func(*protection) []byte { return []byte{recordChangeCipherSpec, 3, 3, 0, 1, 1} }, "type 20 after the handshake"},
		{"too much content", func(send *protection) []byte {
			return send.seal(nil, inner(make([]byte, maxRecord+1), recordApplicationData))
		}, "more than TLS allows"},
		{"data inside a handshake message", func(send *protection) []byte {
			s := send.seal(nil, inner([]byte{handshakeNewSessionTicket, 0, 0, 4, 1}, recordHandshake))
			return send.seal(s, inner([]byte("x"), recordApplicationData))
		}, "broken by a record of another type"},
		{"a KeyUpdate before more of its record", func(send *protection) []byte {
			return send.seal(nil, inner(append(keyUpdate(updateNotRequested)[:5], handshakeNewSessionTicket, 0, 0, 0), recordHandshake))
		}, "not at the end of its record"},
		{"a huge post-handshake message", func(send *protection) []byte {
			return send.seal(nil, inner([]byte{handshakeNewSessionTicket, 0xff, 0, 0}, recordHandshake))
		}, "post-handshake message of"},
	} {
		send, recv := pair(t, tls.TLS_AES_128_GCM_SHA256)
		s := c.stream(send)
		r := records{inbuf: inbuf{buf: s, end: len(s)}, p: recv, owed: new(atomic.Bool)}
		if _, _, err := r.openAll(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error saying %q", c.name, err, c.want)
		}
	}
}

// TestTrafficSecrets takes the two first application secrets from a key
// log and gives each side the right one to read with.
func TestTrafficSecrets(t *testing.T) {
	var s trafficSecrets
	for _, line := range []string{
		"CLIENT_HANDSHAKE_TRAFFIC_SECRET 00 aaaa\n",
		"CLIENT_TRAFFIC_SECRET_0 00 " + strings.Repeat("01", 32) + "\n",
		"SERVER_TRAFFIC_SECRET_0 00 " + strings.Repeat("02", 32) + "\n",
	} {
		if _, err := s.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	cr, cw, err := s.protections(Client, tls.TLS_AES_128_GCM_SHA256)
	if err != nil {
		t.Fatal(err)
	}
	sr, sw, err := s.protections(Server, tls.TLS_AES_128_GCM_SHA256)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(cr.secret, sw.secret) || !bytes.Equal(cw.secret, sr.secret) || cr.secret[0] != 2 || cw.secret[0] != 1 {
		t.Errorf("the client reads with %x and writes with %x; the server reads with %x and writes with %x", cr.secret[:1], cw.secret[:1], sr.secret[:1], sw.secret[:1])
	}
	var none trafficSecrets
	if _, _, err := none.protections(Client, tls.TLS_AES_128_GCM_SHA256); err == nil {
		t.Errorf("protections with no secrets logged: want an error")
	}
}

package tlswrap

import (
	"bytes"
	"crypto/tls"
	"testing"
)

// The record opener takes what the peer sent: a record sealed by the
// peer opens to what was sealed, and one altered anywhere (or of another
// type) is refused, never opened to other content. go test runs the
// seeds; a longer run is in docs/tests.md.
func FuzzOpen(f *testing.F) {
	f.Add([]byte("GET / HTTP/1.1\r\n\r\n"), byte(recordApplicationData), -1, byte(0))
	f.Add([]byte{}, byte(recordApplicationData), 3, byte(1))
	f.Add(bytes.Repeat([]byte{0}, 100), byte(recordAlert), 20, byte(0x80))
	f.Add(keyUpdate(updateRequested), byte(recordHandshake), 0, byte(recordChangeCipherSpec^recordApplicationData))
	f.Fuzz(func(t *testing.T, content []byte, typ byte, at int, flip byte) {
		if len(content) > maxRecord || typ == 0 {
			return
		}
		send, recv := pair(t, tls.TLS_AES_128_GCM_SHA256)
		rec := send.seal(nil, inner(content, typ))
		altered := at >= 0 && flip != 0
		if altered {
			rec[at%len(rec)] ^= flip
		}
		got, gotTyp, err := recv.open(rec)
		switch {
		case altered && err == nil:
			t.Errorf("a record altered at %d opened to %q, type %d", at%len(rec), got, gotTyp)
		case !altered && err != nil:
			t.Errorf("a sealed record of %d bytes, type %d: %v", len(content), typ, err)
		case !altered && (!bytes.Equal(got, content) || gotTyp != typ):
			t.Errorf("sealed %q, type %d; opened %q, type %d", content, typ, got, gotTyp)
		}
	})
}

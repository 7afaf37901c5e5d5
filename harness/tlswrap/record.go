package tlswrap

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/tls"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"sync"

	"golang.org/x/crypto/chacha20poly1305"
)

// The TLS 1.3 record layer of the relayed data (RFC 8446, section 5).
// crypto/tls does the handshake; the wrapper then protects and
// unprotects the records itself, in place: a batch read from the plain
// side is sealed straight into the buffer that goes out in one write, and
// a batch of records read from the TLS side is opened where it lies and
// its plaintext sent on in one gathered write. Going through tls.Conn
// costs two more copies of every byte each way (into its record buffer
// and out of it), which is what stunnel's lead over a plain tls.Conn
// relay is made of.

// Record content types.
const (
	recordChangeCipherSpec = 20
	recordAlert            = 21
	recordHandshake        = 22
	recordApplicationData  = 23
)

// Handshake message types seen after the handshake.
const (
	handshakeNewSessionTicket = 4
	handshakeKeyUpdate        = 24
)

const (
	headerLen = 5
	// maxCiphertext is the most a record's protected payload may be:
	// 2^14 bytes of plaintext, its content type, padding and the tag.
	maxCiphertext = maxRecord + 256
	// recordOverhead is what a record adds to its data when the
	// wrapper seals it: the header, the content type and the tag.
	recordOverhead = headerLen + 1 + 16
)

// suite is what a TLS 1.3 cipher suite's record protection needs.
type suite struct {
	hash   func() hash.Hash
	keyLen int
	aead   func(key []byte) (cipher.AEAD, error)
}

var suites = map[uint16]suite{
	tls.TLS_AES_128_GCM_SHA256:       {sha256.New, 16, aesGCM},
	tls.TLS_AES_256_GCM_SHA384:       {sha512.New384, 32, aesGCM},
	tls.TLS_CHACHA20_POLY1305_SHA256: {sha256.New, 32, chacha20poly1305.New},
}

func aesGCM(key []byte) (cipher.AEAD, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

// expandLabel is HKDF-Expand-Label with an empty context.
func expandLabel(h func() hash.Hash, secret []byte, label string, length int) ([]byte, error) {
	info := binary.BigEndian.AppendUint16(nil, uint16(length))
	info = append(info, byte(len("tls13 ")+len(label)))
	info = append(info, "tls13 "...)
	info = append(info, label...)
	info = append(info, 0)
	return hkdf.Expand(h, secret, string(info), length)
}

// protection is one direction's record protection: its traffic secret,
// the key and IV made from it, and the sequence number of its next
// record.
type protection struct {
	suite  suite
	secret []byte
	aead   cipher.AEAD
	iv     [12]byte
	seq    uint64
	nonce  [12]byte
}

func newProtection(id uint16, secret []byte) (*protection, error) {
	s, ok := suites[id]
	if !ok {
		return nil, fmt.Errorf("no record protection for %s", tls.CipherSuiteName(id))
	}
	p := &protection{suite: s}
	return p, p.setSecret(secret)
}

func (p *protection) setSecret(secret []byte) error {
	key, err := expandLabel(p.suite.hash, secret, "key", p.suite.keyLen)
	if err != nil {
		return err
	}
	iv, err := expandLabel(p.suite.hash, secret, "iv", len(p.iv))
	if err != nil {
		return err
	}
	if p.aead, err = p.suite.aead(key); err != nil {
		return err
	}
	p.secret = secret
	copy(p.iv[:], iv)
	p.seq = 0
	return nil
}

// update moves to the next generation of traffic keys, as a KeyUpdate
// asks.
func (p *protection) update() error {
	next, err := expandLabel(p.suite.hash, p.secret, "traffic upd", p.suite.hash().Size())
	if err != nil {
		return err
	}
	return p.setSecret(next)
}

// next returns the nonce of the next record: the IV with the sequence
// number XORed into its last 8 bytes.
func (p *protection) next() []byte {
	p.nonce = p.iv
	for i := 0; i < 8; i++ {
		p.nonce[4+i] ^= byte(p.seq >> (56 - 8*i))
	}
	p.seq++
	return p.nonce[:]
}

// seal appends to out a record holding inner, which is the record's
// content followed by one byte more: its content type.
func (p *protection) seal(out, inner []byte) []byte {
	n := len(inner) + p.aead.Overhead()
	out = append(out, recordApplicationData, 3, 3, byte(n>>8), byte(n))
	hdr := out[len(out)-headerLen:]
	return p.aead.Seal(out, p.next(), inner, hdr)
}

// sealData appends data to out as records of the largest size. It
// writes the content type into the byte after each record's data and
// puts that byte back, so that data[len(data)] must be there to borrow.
func (p *protection) sealData(out, data []byte) []byte {
	for off := 0; off < len(data); off += maxRecord {
		end := min(off+maxRecord, len(data))
		inner := data[off : end+1]
		kept := inner[len(inner)-1]
		inner[len(inner)-1] = recordApplicationData
		out = p.seal(out, inner)
		inner[len(inner)-1] = kept
	}
	return out
}

// open unprotects the record rec in place and returns its content and
// content type.
func (p *protection) open(rec []byte) ([]byte, byte, error) {
	if rec[0] != recordApplicationData { // change_cipher_spec too: only before Finished
		return nil, 0, fmt.Errorf("a record of type %d after the handshake", rec[0])
	}
	pt, err := p.aead.Open(rec[headerLen:headerLen], p.next(), rec[headerLen:], rec[:headerLen])
	if err != nil {
		return nil, 0, fmt.Errorf("record %d: %w", p.seq-1, err)
	}
	i := len(pt) - 1
	for i >= 0 && pt[i] == 0 { // padding
		i--
	}
	switch {
	case i < 0:
		return nil, 0, errors.New("a record with no content type")
	case i > maxRecord:
		return nil, 0, fmt.Errorf("a record of %d bytes of content, more than TLS allows", i)
	}
	return pt[:i], pt[i], nil
}

// keyUpdateRequest is a KeyUpdate's request_update (RFC 8446, 4.6.3):
// whether the peer is asked for a KeyUpdate in return.
type keyUpdateRequest byte

const (
	updateNotRequested keyUpdateRequest = 0
	updateRequested    keyUpdateRequest = 1
)

// keyUpdate is a KeyUpdate message with its request_update.
func keyUpdate(req keyUpdateRequest) []byte {
	return []byte{handshakeKeyUpdate, 0, 0, 1, byte(req), recordHandshake}
}

// closeNotify is the close_notify alert, with its content type.
var closeNotify = []byte{1, 0, recordAlert}

// trafficSecrets takes the first application traffic secrets of one
// connection from crypto/tls's key log. They stay in the wrapper's
// memory only, for the record layer.
type trafficSecrets struct {
	mu             sync.Mutex
	client, server []byte
}

func (t *trafficSecrets) Write(line []byte) (int, error) {
	f := bytes.Fields(line)
	if len(f) != 3 {
		return len(line), nil
	}
	var to *[]byte
	switch string(f[0]) {
	case "CLIENT_TRAFFIC_SECRET_0":
		to = &t.client
	case "SERVER_TRAFFIC_SECRET_0":
		to = &t.server
	default:
		return len(line), nil
	}
	secret := make([]byte, hex.DecodedLen(len(f[2])))
	if _, err := hex.Decode(secret, f[2]); err != nil {
		return 0, fmt.Errorf("key log: %w", err)
	}
	t.mu.Lock()
	*to = secret
	t.mu.Unlock()
	return len(line), nil
}

// protections returns the protection of what side reads and of what it
// writes, for suite id.
func (t *trafficSecrets) protections(side Side, id uint16) (read, write *protection, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.client == nil || t.server == nil {
		return nil, nil, errors.New("the handshake gave no application traffic secrets")
	}
	rs, ws := t.server, t.client
	if side == Server {
		rs, ws = ws, rs
	}
	if read, err = newProtection(id, rs); err != nil {
		return nil, nil, err
	}
	if write, err = newProtection(id, ws); err != nil {
		return nil, nil, err
	}
	return read, write, nil
}

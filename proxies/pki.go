package proxies

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"
)

// PKI is the TLS material of a session, PEM-encoded: a CA and a server
// certificate it signed, both ECDSA P-256 as in the reference results. The proxy
// presents it when it ends TLS, and the session's origin presents it too
// (scenarios.OriginTLS).
type PKI struct {
	CACert     []byte // the CA's certificate: what clients and proxies trust
	ServerCert []byte // the server's certificate
	ServerKey  []byte // the server's private key (PKCS#8)

	ca    *x509.Certificate
	caKey crypto.Signer
	hosts []string
}

// CertKeyPEM is the server certificate followed by its key, for an
// Site.CertFile that holds both.
func (p PKI) CertKeyPEM() []byte {
	return append(append([]byte(nil), p.ServerCert...), p.ServerKey...)
}

// GeneratePKI makes a fresh CA and a server certificate for hosts: each
// a DNS name, or an IP address (an IP SAN, and a DNS name for verifiers
// that check names only). It writes no files.
func GeneratePKI(hosts []string) (PKI, error) {
	if len(hosts) == 0 {
		return PKI{}, fmt.Errorf("generate certificates: no host names or addresses")
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return PKI{}, fmt.Errorf("generate CA key: %w", err)
	}
	now := time.Now().Add(-time.Hour) // clocks of the namespaces are one, but be lenient
	ca := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "bench CA", Organization: []string{"bench"}},
		NotBefore:             now,
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return PKI{}, fmt.Errorf("create CA certificate: %w", err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return PKI{}, fmt.Errorf("parse CA certificate: %w", err)
	}
	p := PKI{CACert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), ca: caCert, caKey: caKey, hosts: hosts}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return PKI{}, fmt.Errorf("generate server key: %w", err)
	}
	p.ServerCert, p.ServerKey, err = p.sign(key)
	return p, err
}

// RSAServer makes a server certificate with an RSA key of bits for the
// same hosts, signed by the same CA (stunnel's page's handshakes use RSA
// 3072), and returns it and its key, PEM-encoded.
func (p PKI) RSAServer(bits int) (cert, key []byte, err error) {
	if p.caKey == nil {
		return nil, nil, fmt.Errorf("RSA certificate: the PKI has no CA key")
	}
	k, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		return nil, nil, fmt.Errorf("generate RSA key: %w", err)
	}
	return p.sign(k)
}

// sign makes a server certificate for p's hosts with key, signed by p's CA.
func (p PKI) sign(key crypto.Signer) (cert, keyPEM []byte, err error) {
	hosts := p.hosts
	now := p.ca.NotBefore
	srv := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: hosts[0], Organization: []string{"bench"}},
		NotBefore:    now,
		NotAfter:     now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			srv.IPAddresses = append(srv.IPAddresses, ip)
			// nginx's proxy_ssl_name checks DNS names only, even for
			// an address: it matches the address written as a name.
			srv.DNSNames = append(srv.DNSNames, h)
		} else {
			srv.DNSNames = append(srv.DNSNames, h)
		}
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srv, p.ca, key.Public(), p.caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("create server certificate for %v: %w", hosts, err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("encode server key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srvDER}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}

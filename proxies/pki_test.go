package proxies

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/tls"
	"crypto/x509"
	"testing"
)

// TestGeneratePKI checks the server certificate is ECDSA P-256, signed
// by the CA and valid for every host given, names and addresses.
func TestGeneratePKI(t *testing.T) {
	hosts := []string{"origin.bench", "10.0.2.2", "10.0.1.1"}
	p, err := GeneratePKI(hosts)
	if err != nil {
		t.Fatalf("GeneratePKI = %v", err)
	}
	pair, err := tls.X509KeyPair(p.ServerCert, p.ServerKey)
	if err != nil {
		t.Fatalf("X509KeyPair = %v", err)
	}
	if _, err := tls.X509KeyPair(p.CertKeyPEM(), p.CertKeyPEM()); err != nil {
		t.Errorf("CertKeyPEM is not a certificate and its key: %v", err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if k, ok := leaf.PublicKey.(*ecdsa.PublicKey); !ok || k.Curve != elliptic.P256() {
		t.Errorf("server key is %T, want ECDSA P-256", leaf.PublicKey)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(p.CACert) {
		t.Fatal("CA certificate does not parse")
	}
	for _, h := range hosts {
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: h, Roots: roots}); err != nil {
			t.Errorf("Verify(%s) = %v", h, err)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "other.bench", Roots: roots}); err == nil {
		t.Errorf("Verify(other.bench) succeeded; want a name mismatch")
	}
	if _, err := GeneratePKI(nil); err == nil {
		t.Errorf("GeneratePKI(nil) succeeded; want an error")
	}
}

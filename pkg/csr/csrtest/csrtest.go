// Package csrtest makes kubelet serving certificate requests for tests, as a kubelet would:
// subject system:node:<name> in system:nodes, the given DNS names and IP addresses, a fresh key.
package csrtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"net"
	"testing"

	certv1 "k8s.io/api/certificates/v1"
)

// Serving returns a kubelet serving request with common name cn (normally system:node:<name>),
// dns and ips, and cn as its requesting user (the apiserver replaces that with the real one on
// create).
func Serving(t testing.TB, cn string, dns, ips []string) *certv1.CertificateSigningRequest {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn, Organization: []string{"system:nodes"}}, DNSNames: dns}
	for _, ip := range ips {
		tmpl.IPAddresses = append(tmpl.IPAddresses, net.ParseIP(ip))
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	if err != nil {
		t.Fatal(err)
	}
	return &certv1.CertificateSigningRequest{Spec: certv1.CertificateSigningRequestSpec{
		Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
		SignerName: certv1.KubeletServingSignerName,
		Username:   cn,
		Usages:     []certv1.KeyUsage{certv1.UsageDigitalSignature, certv1.UsageServerAuth},
	}}
}

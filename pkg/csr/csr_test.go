package csr

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"net"
	"strings"
	"testing"

	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
)

func request(t *testing.T, cn string, dns []string, ips []string) *certv1.CertificateSigningRequest {
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
		SignerName: KubeletServingSigner,
		Username:   cn,
		Usages:     []certv1.KeyUsage{certv1.UsageDigitalSignature, certv1.UsageServerAuth},
	}}
}

func TestCheckServing(t *testing.T) {
	addrs := []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.5"}, {Type: corev1.NodeHostName, Address: "w1.example.com"}}
	tests := []struct {
		name    string
		csr     *certv1.CertificateSigningRequest
		wantErr string
	}{
		{"own names and addresses", request(t, "system:node:w1", []string{"w1", "w1.example.com"}, []string{"10.0.0.5"}), ""},
		{"another node's subject", request(t, "system:node:w2", []string{"w1"}, nil), "is not system:node:w1"},
		{"foreign IP", request(t, "system:node:w1", []string{"w1"}, []string{"10.0.0.6"}), "10.0.0.6 is not an address"},
		{"foreign name", request(t, "system:node:w1", []string{"evil.example.com"}, nil), `"evil.example.com" is not a name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckServing(tt.csr, "w1", addrs)
			if tt.wantErr == "" && err != nil {
				t.Fatal(err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("got %v, want %q", err, tt.wantErr)
			}
		})
	}
	c := request(t, "system:node:w1", nil, nil)
	if n, ok := NodeName(c); !ok || n != "w1" || !Pending(c) {
		t.Errorf("NodeName = %q %v, pending %v", n, ok, Pending(c))
	}
	c.Status.Conditions = []certv1.CertificateSigningRequestCondition{{Type: certv1.CertificateApproved}}
	if Pending(c) {
		t.Error("approved request reported pending")
	}
}

package csr

import (
	"strings"
	"testing"

	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/slipway-dev/slipway/pkg/csr/csrtest"
)

func request(t *testing.T, cn string, dns []string, ips []string) *certv1.CertificateSigningRequest {
	return csrtest.Serving(t, cn, dns, ips)
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

func TestSatisfiesAddresses(t *testing.T) {
	addrs := []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: "10.0.0.5"},
		{Type: corev1.NodeHostName, Address: "w1"},
		{Type: corev1.NodeInternalDNS, Address: "w1"}, // the same name twice: the kubelet asks for it once
		{Type: corev1.NodeExternalDNS, Address: ""},
	}
	tests := []struct {
		name string
		csr  *certv1.CertificateSigningRequest
		want bool
	}{
		{"the kubelet's template", request(t, "system:node:w1", []string{"w1"}, []string{"10.0.0.5"}), true},
		{"the same, another order and spelling of the IP", request(t, "system:node:w1", []string{"w1"}, []string{"::ffff:10.0.0.5"}), true},
		{"asked before the node had its IP", request(t, "system:node:w1", []string{"w1"}, nil), false},
		{"an IP the node no longer has", request(t, "system:node:w1", []string{"w1"}, []string{"10.0.0.5", "10.0.0.9"}), false},
		{"a name the node does not have", request(t, "system:node:w1", []string{"w1", "w1.example.com"}, []string{"10.0.0.5"}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SatisfiesAddresses(tt.csr, addrs)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("SatisfiesAddresses = %v, want %v", got, tt.want)
			}
		})
	}
	if _, err := SatisfiesAddresses(&certv1.CertificateSigningRequest{}, addrs); err == nil {
		t.Error("a request without a PEM block was accepted")
	}
	c := request(t, "system:node:w1", nil, nil)
	if Issued(c) {
		t.Error("a request without a certificate reported issued")
	}
	c.Status.Certificate = []byte("x")
	if !Issued(c) {
		t.Error("a request with a certificate reported not issued")
	}
}

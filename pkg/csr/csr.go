// Package csr decides whether a kubelet serving certificate request may be approved: it must
// come from the node it names and ask only for that node's own names and addresses. Both
// slipway apply (for hosts it joined) and the machine-controller (for Machines) use it, because
// kubelets request serving certificates that no built-in signer approves.
package csr

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"maps"
	"net"
	"slices"

	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
)

// KubeletServingSigner is the signer of kubelet serving certificates.
const KubeletServingSigner = "kubernetes.io/kubelet-serving"

// NodeName returns the node a kubelet serving request is for, from its requesting user.
func NodeName(c *certv1.CertificateSigningRequest) (string, bool) {
	if c.Spec.SignerName != KubeletServingSigner {
		return "", false
	}
	name, ok := cutPrefix(c.Spec.Username, "system:node:")
	return name, ok && name != ""
}

// Pending reports whether a request has neither been approved nor denied.
func Pending(c *certv1.CertificateSigningRequest) bool {
	for _, cond := range c.Status.Conditions {
		if cond.Type == certv1.CertificateApproved || cond.Type == certv1.CertificateDenied {
			return false
		}
	}
	return true
}

// CheckServing verifies that c is a kubelet serving request for nodeName whose DNS names and IP
// addresses are all among the node's: nodeName itself plus addresses.
func CheckServing(c *certv1.CertificateSigningRequest, nodeName string, addresses []corev1.NodeAddress) error {
	req, err := parseRequest(c)
	if err != nil {
		return err
	}
	if req.Subject.CommonName != "system:node:"+nodeName || !slices.Equal(req.Subject.Organization, []string{"system:nodes"}) {
		return fmt.Errorf("subject %q is not system:node:%s in organization system:nodes", req.Subject.String(), nodeName)
	}
	if len(req.EmailAddresses) > 0 || len(req.URIs) > 0 {
		return fmt.Errorf("the request has email or URI names")
	}
	for _, u := range c.Spec.Usages {
		if u != certv1.UsageDigitalSignature && u != certv1.UsageKeyEncipherment && u != certv1.UsageServerAuth {
			return fmt.Errorf("usage %q is not allowed for a serving certificate", u)
		}
	}
	names := map[string]bool{nodeName: true}
	ips := map[string]bool{}
	for _, a := range addresses {
		switch a.Type {
		case corev1.NodeHostName, corev1.NodeInternalDNS, corev1.NodeExternalDNS:
			names[a.Address] = true
		case corev1.NodeInternalIP, corev1.NodeExternalIP:
			if ip := net.ParseIP(a.Address); ip != nil {
				ips[ip.String()] = true
			}
		}
	}
	for _, d := range req.DNSNames {
		if !names[d] {
			return fmt.Errorf("DNS name %q is not a name of node %s", d, nodeName)
		}
	}
	for _, ip := range req.IPAddresses {
		if !ips[ip.String()] {
			return fmt.Errorf("IP address %s is not an address of node %s", ip, nodeName)
		}
	}
	return nil
}

// SatisfiesAddresses reports whether c asks for exactly the DNS names and IP addresses that a
// kubelet puts in its serving certificate for a Node with these status addresses: its host name
// and DNS addresses as DNS names, its internal and external IPs as IP addresses, each once. A
// kubelet whose certificate differs from that set asks for a new one (client-go's certificate
// manager compares them as sets), so a node's serving certificate is settled only once its
// newest signed request satisfies its current addresses.
func SatisfiesAddresses(c *certv1.CertificateSigningRequest, addresses []corev1.NodeAddress) (bool, error) {
	req, err := parseRequest(c)
	if err != nil {
		return false, err
	}
	wantDNS, wantIPs := map[string]bool{}, map[string]bool{}
	for _, a := range addresses {
		if a.Address == "" {
			continue
		}
		switch a.Type {
		case corev1.NodeHostName, corev1.NodeInternalDNS, corev1.NodeExternalDNS:
			wantDNS[a.Address] = true
		case corev1.NodeInternalIP, corev1.NodeExternalIP:
			if ip := net.ParseIP(a.Address); ip != nil {
				wantIPs[ip.String()] = true
			}
		}
	}
	gotDNS, gotIPs := map[string]bool{}, map[string]bool{}
	for _, d := range req.DNSNames {
		gotDNS[d] = true
	}
	for _, ip := range req.IPAddresses {
		gotIPs[ip.String()] = true
	}
	return maps.Equal(gotDNS, wantDNS) && maps.Equal(gotIPs, wantIPs), nil
}

// Issued reports whether the signer has put a certificate in c's status.
func Issued(c *certv1.CertificateSigningRequest) bool { return len(c.Status.Certificate) > 0 }

func parseRequest(c *certv1.CertificateSigningRequest) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(c.Spec.Request)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, fmt.Errorf("the request holds no PEM certificate request")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parsing the certificate request: %w", err)
	}
	return req, nil
}

func cutPrefix(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && s[:len(prefix)] == prefix {
		return s[len(prefix):], true
	}
	return "", false
}

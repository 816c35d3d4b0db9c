package bootstrap

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net/url"

	"k8s.io/client-go/tools/clientcmd"
)

// ClusterInfo is what kubeadm publishes in the cluster-info ConfigMap of kube-public.
type ClusterInfo struct {
	// Endpoint is the API server's host:port.
	Endpoint string
	// CACertHash is "sha256:<hex>" of the CA's public key, as kubeadm join --discovery-token-ca-cert-hash wants.
	CACertHash string
}

// ParseClusterInfo reads the kubeconfig stored under the "kubeconfig" key of cluster-info.
func ParseClusterInfo(kubeconfig string) (ClusterInfo, error) {
	cfg, err := clientcmd.Load([]byte(kubeconfig))
	if err != nil {
		return ClusterInfo{}, fmt.Errorf("parsing cluster-info kubeconfig: %w", err)
	}
	for name, c := range cfg.Clusters {
		u, err := url.Parse(c.Server)
		if err != nil || u.Host == "" {
			return ClusterInfo{}, fmt.Errorf("cluster %q in cluster-info has server %q, not a URL", name, c.Server)
		}
		hash, err := CACertHash(c.CertificateAuthorityData)
		if err != nil {
			return ClusterInfo{}, fmt.Errorf("cluster %q in cluster-info: %w", name, err)
		}
		host := u.Host
		if u.Port() == "" {
			host += ":443"
		}
		return ClusterInfo{Endpoint: host, CACertHash: hash}, nil
	}
	return ClusterInfo{}, fmt.Errorf("cluster-info kubeconfig names no cluster")
}

// CACertHash returns the kubeadm public-key pin of the first certificate in caPEM.
func CACertHash(caPEM []byte) (string, error) {
	block, _ := pem.Decode(caPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		return "", fmt.Errorf("CA data holds no PEM certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return "", fmt.Errorf("parsing CA certificate: %w", err)
	}
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

const tokenAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// NewTokenSecret returns 16 random characters for a bootstrap token's secret part.
func NewTokenSecret() (string, error) {
	out := make([]byte, 0, 16)
	buf := make([]byte, 32)
	for len(out) < 16 {
		if _, err := rand.Read(buf); err != nil {
			return "", fmt.Errorf("reading random bytes: %w", err)
		}
		for _, c := range buf {
			// Reject bytes past the last multiple of 36, so every character is equally likely.
			if int(c) < 252 && len(out) < 16 {
				out = append(out, tokenAlphabet[int(c)%len(tokenAlphabet)])
			}
		}
	}
	return string(out), nil
}

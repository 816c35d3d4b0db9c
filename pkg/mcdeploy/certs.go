package mcdeploy

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"time"
)

// certValidity is how long webhook certificates live; apply renews them when less than
// renewBefore is left.
const (
	certValidity = 2 * 365 * 24 * time.Hour
	renewBefore  = 60 * 24 * time.Hour
)

// WebhookCerts are the webhook's serving certificate and the CA that signed it, PEM-encoded.
type WebhookCerts struct {
	CA, Cert, Key []byte
}

// NewWebhookCerts creates a CA and a serving certificate for the webhook Service.
func NewWebhookCerts(now time.Time) (*WebhookCerts, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "machine-controller-webhook-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(certValidity),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	dns := WebhookService + "." + Namespace + ".svc"
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: dns},
		DNSNames:  []string{WebhookService, WebhookService + "." + Namespace, dns, dns + ".cluster.local"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(certValidity),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caTmpl, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return &WebhookCerts{
		CA:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		Cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		Key:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

// Fresh reports whether the serving certificate parses, is signed by the CA and has at least
// renewBefore left.
func (w *WebhookCerts) Fresh(now time.Time) bool {
	cert, err := parse(w.Cert)
	if err != nil {
		return false
	}
	ca, err := parse(w.CA)
	if err != nil || cert.CheckSignatureFrom(ca) != nil {
		return false
	}
	return now.Add(renewBefore).Before(cert.NotAfter) && len(w.Key) > 0
}

func parse(p []byte) (*x509.Certificate, error) {
	b, _ := pem.Decode(p)
	if b == nil {
		return nil, errors.New("no PEM block")
	}
	return x509.ParseCertificate(b.Bytes)
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n
}

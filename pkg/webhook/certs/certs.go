// Package certs makes and judges the admission webhook's serving certificate: a CA and a
// certificate it signed, renewed once a third of the lifetime is left. It is a leaf package so
// that both the installer (pkg/mcdeploy) and the controller's renewal (pkg/webhook) use it.
package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"slices"
	"time"
)

// Serving are the webhook's serving certificate, its key and the CA that signed it,
// PEM-encoded, as the webhook's TLS Secret holds them (tls.crt, tls.key, ca.crt).
type Serving struct {
	CA, Cert, Key []byte
}

// New makes a CA and a serving certificate for names (DNS names or IP addresses), both valid
// from notBefore (set it a little before now, for clocks behind ours) until notAfter. The CA's
// key is not kept: a renewal makes a new CA, which the webhook configurations trust alongside
// the old one until the old certificate is out of use (see webhook.Rotator).
func New(notBefore, notAfter time.Time, names []string) (*Serving, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating the webhook CA key: %w", err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "machine-controller-webhook-ca"},
		NotBefore: notBefore, NotAfter: notAfter,
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("signing the webhook CA: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating the webhook serving key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	if len(names) > 0 {
		tmpl.Subject.CommonName = names[0]
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caTmpl, &key.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("signing the webhook serving certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encoding the webhook serving key: %w", err)
	}
	return &Serving{
		CA:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		Cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		Key:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

// RenewAt is when the serving certificate should be replaced: once less than a third of its
// lifetime is left. That leaves two thirds of the lifetime (months, for the two-year
// certificates apply makes) for a controller that was down or failing to renew it before
// anything breaks. It is the zero time, renew now, when the certificates do not parse, the
// CA did not sign the certificate, or the key is missing.
func (c *Serving) RenewAt() time.Time {
	cert, err := parsePEM(c.Cert)
	if err != nil {
		return time.Time{}
	}
	ca, err := parsePEM(c.CA)
	if err != nil || cert.CheckSignatureFrom(ca) != nil || len(c.Key) == 0 {
		return time.Time{}
	}
	return cert.NotAfter.Add(-cert.NotAfter.Sub(cert.NotBefore) / 3)
}

// Fresh reports whether the certificates need no renewal at now.
func (c *Serving) Fresh(now time.Time) bool { return now.Before(c.RenewAt()) }

// Names returns the DNS names and IP addresses the serving certificate is for.
func (c *Serving) Names() []string {
	cert, err := parsePEM(c.Cert)
	if err != nil {
		return nil
	}
	names := slices.Clone(cert.DNSNames)
	for _, ip := range cert.IPAddresses {
		names = append(names, ip.String())
	}
	return names
}

// Lifetime is how long the serving certificate was made to live, or 0 if it does not parse.
func (c *Serving) Lifetime() time.Duration {
	cert, err := parsePEM(c.Cert)
	if err != nil {
		return 0
	}
	return cert.NotAfter.Sub(cert.NotBefore)
}

// ParseCA returns the CA certificate, or an error if it does not parse.
func (c *Serving) ParseCA() (*x509.Certificate, error) { return parsePEM(c.CA) }

// parsePEM parses the first certificate of a PEM block list.
func parsePEM(p []byte) (*x509.Certificate, error) {
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

package openstacktest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"
)

// NewTLS starts a Sim that serves https on a random loopback port, as a production cloud does,
// with a self-signed certificate for 127.0.0.1 that CACert returns. Close it when done.
func NewTLS(opts Options) *Sim {
	s := Prepare(opts)
	s.start(nil, true, nil)
	return s
}

// StartTLS serves a prepared Sim on l over https, with a certificate for hosts (addresses or
// names) from a CA of its own, which CACert returns: what a client sets as OS_CACERT.
func (s *Sim) StartTLS(l net.Listener, hosts ...string) error {
	cert, ca, err := SelfSigned(hosts...)
	if err != nil {
		return err
	}
	s.caPEM = ca
	s.Start(l, &cert)
	return nil
}

// CACert returns, PEM-encoded, the CA that the certificate the Sim serves chains to; nil for a
// plain http Sim.
func (s *Sim) CACert() []byte {
	if s.caPEM != nil {
		return s.caPEM
	}
	c := s.server.Certificate()
	if c == nil {
		return nil
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

// SelfSigned makes a CA and a serving certificate it signs for hosts, valid for a year. It
// returns the certificate with its key, and the CA certificate in PEM.
func SelfSigned(hosts ...string) (tls.Certificate, []byte, error) {
	if len(hosts) == 0 {
		return tls.Certificate{}, nil, fmt.Errorf("a serving certificate needs at least one host")
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	now := time.Now()
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "openstack-sim CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(1, 0, 0), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: hosts[0]},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(1, 0, 0),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			leaf.IPAddresses = append(leaf.IPAddresses, ip)
		} else {
			leaf.DNSNames = append(leaf.DNSNames, h)
		}
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	der, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	return tls.Certificate{Certificate: [][]byte{der, caDER}, PrivateKey: key},
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), nil
}

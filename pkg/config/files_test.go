package config

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func testCA(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, IsCA: true,
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

func TestReadCAFile(t *testing.T) {
	cert, key := testCA(t)
	dir := t.TempDir()
	tests := []struct {
		name    string
		content string
		path    string // instead of content
		wantErr string
	}{
		{name: "one certificate", content: string(cert)},
		{name: "a bundle with openssl's comments", content: "subject=CN = test CA\n" + string(cert) + "# second\n" + string(cert)},
		{name: "a private key", content: string(key), wantErr: `holds a PEM block of type "EC PRIVATE KEY"`},
		{name: "a certificate and its key", content: string(cert) + string(key), wantErr: "only CERTIFICATE blocks"},
		{name: "empty", content: "", wantErr: "holds no PEM certificate"},
		{name: "not PEM", content: "hello\n", wantErr: "holds no PEM certificate"},
		{name: "a broken certificate", content: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", wantErr: "certificate 1:"},
		{name: "a truncated block", content: string(cert) + "-----BEGIN CERTIFICATE-----\nAAAA\n", wantErr: "cannot be decoded"},
		{name: "endless", path: "/dev/zero", wantErr: "/dev/zero is larger than 1 MiB"},
		{name: "too large", content: strings.Repeat(string(cert), MaxCAFileBytes/len(cert)+1), wantErr: "is larger than 1 MiB"},
		{name: "missing", path: filepath.Join(dir, "missing.pem"), wantErr: "no such file"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.path
			if path == "" {
				path = filepath.Join(dir, "ca"+string(rune('a'+i))+".pem")
				if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			data, err := ReadCAFile(path)
			if tt.wantErr == "" {
				if err != nil || string(data) != tt.content {
					t.Fatalf("ReadCAFile = %d bytes, %v; want the file's contents", len(data), err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("ReadCAFile error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

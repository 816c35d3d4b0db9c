package bootstrap

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"
)

func testCA(t *testing.T) ([]byte, *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubernetes"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), cert
}

func TestParseClusterInfo(t *testing.T) {
	caPEM, cert := testCA(t)
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	want := "sha256:" + hex.EncodeToString(sum[:])
	kubeconfig := `apiVersion: v1
kind: Config
clusters:
- name: ""
  cluster:
    server: https://api.example:6443
    certificate-authority-data: ` + base64.StdEncoding.EncodeToString(caPEM) + "\n"
	info, err := ParseClusterInfo(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if info.Endpoint != "api.example:6443" || info.CACertHash != want {
		t.Fatalf("ParseClusterInfo() = %+v, want api.example:6443 and %s", info, want)
	}
	if _, err := ParseClusterInfo(strings.Replace(kubeconfig, "certificate-authority-data: ", "certificate-authority-data: AA", 1)); err == nil {
		t.Fatal("ParseClusterInfo accepted a broken CA")
	}
}

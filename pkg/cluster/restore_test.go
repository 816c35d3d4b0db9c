package cluster

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/config"
	"github.com/slipway-dev/slipway/pkg/phases"
	"github.com/slipway-dev/slipway/pkg/plan"
)

// testPKI returns the files of a PKI backup as kubeadm writes them: three CAs with their keys
// (ECDSA here, to be quick) and an RSA service-account key pair in PKCS #1 and PKIX.
func testPKI(t *testing.T) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, ca := range []string{"ca", "front-proxy-ca", "etcd/ca"} {
		crt, key := testCA(t, ca)
		files[ca+".crt"], files[ca+".key"] = crt, key
	}
	sa, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&sa.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	files["sa.key"] = pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(sa)})
	files["sa.pub"] = pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
	return files
}

func testCA(t *testing.T, name string) (crt, key []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

// testSnapshot is a file shaped like an etcd snapshot: data, then its SHA-256.
func testSnapshot(data []byte) []byte {
	sum := sha256.Sum256(data)
	return append(append([]byte{}, data...), sum[:]...)
}

// fileWriter returns a function that writes a file into dir, mode 0600, and returns its path.
func fileWriter(t *testing.T, dir string) func(name string, data []byte) string {
	return func(name string, data []byte) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
}

func TestLoadRestore(t *testing.T) {
	dir := t.TempDir()
	write := fileWriter(t, dir)
	backup := func(name string, change func(files map[string][]byte)) string {
		files := testPKI(t)
		if change != nil {
			change(files)
		}
		data, err := writePKIBackup(pkiArchive{PKI: files})
		if err != nil {
			t.Fatal(err)
		}
		return write(name, data)
	}
	snap := write("etcd.db", testSnapshot([]byte(strings.Repeat("bbolt pages ", 1000))))
	corrupt := testSnapshot([]byte(strings.Repeat("bbolt pages ", 1000)))
	corrupt[100] ^= 1
	good := backup("pki.tar.gz", nil)
	other := testPKI(t)

	got, err := LoadRestore(snap, good, false)
	if err != nil {
		t.Fatalf("a good snapshot and backup: %v", err)
	}
	if got.Snapshot != snap || len(got.PKI) != len(pkiFiles) || got.Encryption != nil {
		t.Errorf("restore source: snapshot %q, %d PKI files, encryption %t; want %q and %d, none", got.Snapshot, len(got.PKI), got.Encryption != nil, snap, len(pkiFiles))
	}

	tests := []struct {
		name           string
		snapshot, pki  string
		want, wantFile string
	}{
		{"missing snapshot", filepath.Join(dir, "nope.db"), good, "no such file", "nope.db"},
		{"snapshot is a directory", dir, good, "not a regular file (a directory)", dir},
		{"snapshot is a device", "/dev/zero", good, "not a regular file (a character device)", "/dev/zero"},
		{"PKI backup is a device", snap, "/dev/zero", "not a regular file (a character device)", "/dev/zero"},
		{"PKI backup is a directory", snap, dir, "not a regular file (a directory)", dir},
		{"corrupt snapshot", write("corrupt.db", corrupt), good, "SHA-256 does not match", "corrupt.db"},
		{"truncated snapshot", write("short.db", []byte("short")), good, "too short", "short.db"},
		{"missing PKI backup", snap, filepath.Join(dir, "nope.tar.gz"), "no such file", "nope.tar.gz"},
		{"PKI backup that is not one", snap, write("junk.tar.gz", []byte("junk")), "not a gzipped tar archive", "junk.tar.gz"},
		{"a CA key missing", snap, backup("no-etcd-key.tar.gz", func(f map[string][]byte) { delete(f, "etcd/ca.key") }), "etcd/ca.key is missing", "no-etcd-key.tar.gz"},
		{"another CA's key", snap, backup("mixed.tar.gz", func(f map[string][]byte) { f["front-proxy-ca.key"] = other["front-proxy-ca.key"] }),
			"front-proxy-ca.crt and front-proxy-ca.key", "mixed.tar.gz"},
		{"another service-account public key", snap, backup("sa.tar.gz", func(f map[string][]byte) { f["sa.pub"] = other["sa.pub"] }),
			"sa.pub is not the public key of sa.key", "sa.tar.gz"},
		{"a leaf certificate for a CA", snap, backup("leaf.tar.gz", func(f map[string][]byte) {
			k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
			tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "leaf"}, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
			der, _ := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
			kder, _ := x509.MarshalECPrivateKey(k)
			f["ca.crt"] = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
			f["ca.key"] = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
		}), "ca.crt is not a CA certificate", "leaf.tar.gz"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadRestore(tc.snapshot, tc.pki, false)
			var ce *config.Error
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.wantFile) || !errors.As(err, &ce) {
				t.Errorf("error %v; want an invalid input (exit code 3) with %q naming %s", err, tc.want, tc.wantFile)
			}
		})
	}
}

// TestRestorePlansForAnEncryptedCluster: with the encryption configuration in the PKI backup,
// apply --restore-from plans the restore of a cluster with encryption.enabled, whose
// restore-etcd puts the configuration back (apply refused it before, having no key to restore
// the Secrets with).
func TestRestorePlansForAnEncryptedCluster(t *testing.T) {
	c := testCluster(t, "10.0.0.1", "10.0.0.2")
	c.Encryption.Enabled = true
	target, _ := fakeTarget(c, map[string]string{"10.0.0.1": probeOutput("cp-1", "debian", true), "10.0.0.2": probeOutput("w-1", "debian", true)})
	var out bytes.Buffer
	restore := &phases.Restore{Snapshot: "etcd.db", PKI: testPKI(t), Encryption: testEncryption(t, "key-1")}
	if err := Apply(context.Background(), target, ApplyOptions{DryRun: true, Restore: restore, Out: &out}); err != nil {
		t.Fatalf("a dry run of the restore of an encrypted cluster: %v", err)
	}
	if !strings.Contains(out.String(), "the CAs, keys and encryption configuration from the PKI backup") {
		t.Errorf("the plan does not restore the encryption configuration:\n%s", out.String())
	}
	for _, step := range []string{plan.StepEncryptionConfig, plan.StepEncryptionServer, plan.StepEncryptSecrets} {
		if strings.Contains(out.String(), step) {
			t.Errorf("the plan has %s, which a restored configuration needs not:\n%s", step, out.String())
		}
	}
}

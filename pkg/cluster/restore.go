package cluster

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"k8s.io/client-go/util/keyutil"

	"github.com/slipway-dev/slipway/pkg/etcd"
	"github.com/slipway-dev/slipway/pkg/phases"
)

// LoadRestore reads and checks what apply --restore-from makes a cluster again from: an etcd
// snapshot (slipway etcd snapshot, slipway backup, or etcdctl snapshot save), whose trailing
// SHA-256 must match, and a PKI backup (the <cluster>-pki.tar.gz apply saves, or slipway
// backup's), which must hold every CA and key slipway backs up, each certificate with its key.
// Every error names the file.
func LoadRestore(snapshot, pkiBackup string) (*phases.Restore, error) {
	if err := checkSnapshotFile(snapshot); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(pkiBackup)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("PKI backup %s: no such file (apply saves <cluster>-pki.tar.gz beside the kubeconfig; name another with --pki-backup)", pkiBackup)
	}
	if err != nil {
		return nil, fmt.Errorf("PKI backup %s: %w", pkiBackup, err)
	}
	files, err := readPKIBackup(data)
	if err != nil {
		return nil, fmt.Errorf("PKI backup %s: not a gzipped tar archive of slipway's: %w", pkiBackup, err)
	}
	if err := checkPKI(files); err != nil {
		return nil, fmt.Errorf("PKI backup %s: %w", pkiBackup, err)
	}
	return &phases.Restore{Snapshot: snapshot, PKI: files}, nil
}

func checkSnapshotFile(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("snapshot %s: no such file", path)
	}
	if err != nil {
		return fmt.Errorf("snapshot %s: %w", path, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return fmt.Errorf("snapshot %s: %w", path, err)
	} else if !fi.Mode().IsRegular() {
		return fmt.Errorf("snapshot %s: not a regular file", path)
	}
	if err := etcd.VerifySnapshot(f); err != nil {
		return fmt.Errorf("snapshot %s: %w", path, err)
	}
	return nil
}

// checkPKI checks that files holds every one of pkiFiles, that each CA certificate goes with its
// key, and that sa.pub is sa.key's public key.
func checkPKI(files map[string][]byte) error {
	for _, name := range pkiFiles {
		if len(files[name]) == 0 {
			return fmt.Errorf("%s is missing", name)
		}
	}
	for _, ca := range []string{"ca", "front-proxy-ca", "etcd/ca"} {
		pair, err := tls.X509KeyPair(files[ca+".crt"], files[ca+".key"])
		if err != nil {
			return fmt.Errorf("%s.crt and %s.key: %w", ca, ca, err)
		}
		cert, err := x509.ParseCertificate(pair.Certificate[0])
		if err != nil {
			return fmt.Errorf("%s.crt: %w", ca, err)
		}
		if !cert.IsCA {
			return fmt.Errorf("%s.crt is not a CA certificate", ca)
		}
	}
	key, err := keyutil.ParsePrivateKeyPEM(files["sa.key"])
	if err != nil {
		return fmt.Errorf("sa.key: %w", err)
	}
	pubs, err := keyutil.ParsePublicKeysPEM(files["sa.pub"])
	if err != nil {
		return fmt.Errorf("sa.pub: %w", err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return fmt.Errorf("sa.key: a %T cannot sign", key)
	}
	want, ok := signer.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok || len(pubs) != 1 || !want.Equal(pubs[0]) {
		return errors.New("sa.pub is not the public key of sa.key")
	}
	return nil
}

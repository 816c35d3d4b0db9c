package cluster

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"

	"k8s.io/client-go/util/keyutil"

	"github.com/slipway-dev/slipway/pkg/config"
	"github.com/slipway-dev/slipway/pkg/encryption"
	"github.com/slipway-dev/slipway/pkg/etcd"
	"github.com/slipway-dev/slipway/pkg/phases"
)

// LoadRestore reads and checks what apply --restore-from makes a cluster again from: an etcd
// snapshot (slipway etcd snapshot, slipway backup, or etcdctl snapshot save), whose trailing
// SHA-256 must match, and a PKI backup (the <cluster>-pki.tar.gz apply saves, or slipway
// backup's), which must hold every CA and key slipway backs up, each certificate with its key,
// and nothing else but, exactly when encrypted (the manifest's encryption.enabled), the
// encryption configuration of Secrets at rest. Both must be regular files. Every error is a
// *config.Error naming the file: nothing is restored from inputs that are wrong.
func LoadRestore(snapshot, pkiBackup string, encrypted bool) (*phases.Restore, error) {
	if err := checkSnapshotFile(snapshot); err != nil {
		return nil, &config.Error{Source: "snapshot " + snapshot, Err: err}
	}
	a, err := loadPKIBackup(pkiBackup)
	if errors.Is(err, fs.ErrNotExist) {
		err = errors.New("no such file (apply saves <cluster>-pki.tar.gz beside the kubeconfig; name another with --pki-backup)")
	}
	if err == nil {
		err = checkPKI(a.PKI)
	}
	if err == nil {
		err = checkRestoredEncryption(a.Encryption, encrypted)
	}
	if err != nil {
		return nil, &config.Error{Source: "PKI backup " + pkiBackup, Err: err}
	}
	return &phases.Restore{Snapshot: snapshot, PKI: a.PKI, Encryption: a.Encryption}, nil
}

// checkRestoredEncryption checks the backup's encryption configuration, data (nil for none),
// against the manifest's encryption.enabled. A cluster that encrypted Secrets is restored only
// with its configuration (its snapshot's Secrets read with nothing else) and with encryption
// enabled (it cannot be turned off).
func checkRestoredEncryption(data []byte, encrypted bool) error {
	switch {
	case data == nil && encrypted:
		return errors.New("it holds no encryption configuration, and the manifest has encryption.enabled: true. " +
			"If the lost cluster encrypted Secrets at rest, restore with a PKI backup that holds its encryption configuration (slipway backup's, or the <cluster>-pki.tar.gz apply saved once encryption was on): " +
			"without it the snapshot's Secrets cannot be read. If it did not, restore with encryption.enabled: false, then enable it with another apply")
	case data != nil && !encrypted:
		return errors.New("it holds the encryption configuration of a cluster that encrypted Secrets at rest, and the manifest has encryption.enabled: false: " +
			"the snapshot's Secrets are read only with it, and encryption cannot be turned off; set encryption.enabled: true")
	case data == nil:
		return nil
	}
	if _, err := encryption.Parse(data); err != nil {
		return fmt.Errorf("%s: %w", encryptionMember, err)
	}
	return nil
}

func checkSnapshotFile(path string) error {
	f, _, err := openRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return errors.New("no such file")
	}
	if err != nil {
		return err
	}
	defer f.Close()
	return etcd.VerifySnapshot(f)
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

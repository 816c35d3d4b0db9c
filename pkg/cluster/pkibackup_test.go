package cluster

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/pkg/encryption"
	"github.com/slipway-dev/slipway/pkg/ssh/sshtest"
)

// testEncryption returns an encryption configuration file as apply writes it, with a new key.
func testEncryption(t *testing.T, name string) []byte {
	t.Helper()
	k, err := encryption.NewKey(name)
	if err != nil {
		t.Fatal(err)
	}
	data, err := encryption.Render(encryption.Fresh(k))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// encryptOn gives the fake control plane cp an encryption configuration, as the encryption
// phases leave it.
func encryptOn(cp *sshtest.Host, data []byte) {
	cp.On(`^script encryption-state$`, sshtest.Response{Stdout: "file\nconfigured\n"})
	cp.SetFile(encryption.File, sshtest.File{Data: data, Mode: 0o600})
}

func readBackupFile(t *testing.T, path string) pkiArchive {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %o; it holds the CA keys, want 0600", path, fi.Mode().Perm())
	}
	a, err := loadPKIBackup(path)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestSavePKIBackup(t *testing.T) {
	t.Chdir(t.TempDir())
	c := testCluster(t, "10.0.0.1", "10.0.0.2")
	target, fleet := fakeTarget(c, nil)
	cp := fleet.Get("10.0.0.1")
	ctx := context.Background()
	path := PKIBackupPath("unit")
	now := time.Date(2026, 11, 28, 6, 15, 0, 0, time.UTC)

	var log bytes.Buffer
	err := savePKIBackup(ctx, target, now, &log)
	if err == nil || !strings.Contains(err.Error(), "no control plane has them") || !strings.Contains(err.Error(), "/etc/kubernetes/pki/ca.crt") {
		t.Errorf("a cluster without a CA: %v; want an error that names the missing file", err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Errorf("a failed backup left %s", path)
	}

	for _, f := range pkiFiles {
		cp.SetFile("/etc/kubernetes/pki/"+f, sshtest.File{Data: []byte("content of " + f)})
	}
	log.Reset()
	if err := savePKIBackup(ctx, target, now, &log); err != nil {
		t.Fatal(err)
	}
	held := readBackupFile(t, path)
	if len(held.PKI) != len(pkiFiles) || string(held.PKI["etcd/ca.key"]) != "content of etcd/ca.key" || held.Encryption != nil {
		t.Errorf("the backup holds %d files, etcd/ca.key %q, encryption configuration %t", len(held.PKI), held.PKI["etcd/ca.key"], held.Encryption != nil)
	}
	if !strings.Contains(log.String(), "backed up to "+path) || strings.Contains(log.String(), "content of") || strings.Contains(log.String(), "encryption") {
		t.Errorf("log %q: want the path, and never the keys", log.String())
	}
	first, _ := os.ReadFile(path)

	// The same keys again: nothing to say, nothing changed.
	log.Reset()
	if err := savePKIBackup(ctx, target, now, &log); err != nil || log.Len() != 0 {
		t.Errorf("a second apply: %v, log %q; want silence", err, log.String())
	}

	// Encryption enabled: the backup gets the encryption configuration, and the one before is
	// kept for the snapshots taken until then.
	key1 := testEncryption(t, "key-1")
	encryptOn(cp, key1)
	log.Reset()
	if err := savePKIBackup(ctx, target, now, &log); err != nil {
		t.Fatal(err)
	}
	if held := readBackupFile(t, path); !bytes.Equal(held.Encryption, key1) || !held.samePKI(pkiArchive{PKI: held.PKI}) || len(held.PKI) != len(pkiFiles) {
		t.Errorf("after encryption was enabled the backup holds %d files and encryption configuration %t; want the same CAs and the configuration", len(held.PKI), held.Encryption != nil)
	}
	before := "unit-pki-until-20261128T061500Z.tar.gz"
	if data, err := os.ReadFile(before); err != nil || !bytes.Equal(data, first) {
		t.Errorf("the backup before encryption was not kept as %s: %v", before, err)
	}
	readBackupFile(t, before)
	if !strings.Contains(log.String(), path+" now holds the new one") || !strings.Contains(log.String(), "kept as "+before) || strings.Contains(log.String(), string(key1)) {
		t.Errorf("log %q: want the file and the one kept, never the keys", log.String())
	}
	log.Reset()
	if err := savePKIBackup(ctx, target, now.Add(time.Hour), &log); err != nil || log.Len() != 0 {
		t.Errorf("apply again with the same encryption configuration: %v, log %q; want silence", err, log.String())
	}

	// A key rotated: the same again. The backup was made readable to others meanwhile (by hand,
	// or by a slipway before 0600 was enforced): the one kept is 0600 all the same (the check is
	// in readBackupFile).
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	key2 := testEncryption(t, "key-2")
	encryptOn(cp, key2)
	if err := savePKIBackup(ctx, target, now.Add(2*time.Hour), &log); err != nil {
		t.Fatal(err)
	}
	if held := readBackupFile(t, path); !bytes.Equal(held.Encryption, key2) {
		t.Error("after a rotation the backup does not hold the new encryption configuration")
	}
	if held := readBackupFile(t, "unit-pki-until-20261128T081500Z.tar.gz"); !bytes.Equal(held.Encryption, key1) {
		t.Error("after a rotation the backup before does not hold the old encryption configuration")
	}
	withKey2, _ := os.ReadFile(path)

	// A cluster made anew has another CA: the old backup is kept, and apply says so.
	cp.SetFile("/etc/kubernetes/pki/ca.key", sshtest.File{Data: []byte("another key")})
	log.Reset()
	if err := savePKIBackup(ctx, target, now, &log); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "Warning: "+path+" does not hold the CA and keys of this cluster") {
		t.Errorf("log %q; want a warning that the backup is another cluster's", log.String())
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, withKey2) {
		t.Error("the backup was overwritten")
	}

	// A file that is not a backup is kept too, and apply says why.
	if err := os.WriteFile(path, []byte("my notes"), 0o600); err != nil {
		t.Fatal(err)
	}
	log.Reset()
	if err := savePKIBackup(ctx, target, now, &log); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "Warning: "+path+" is not a PKI backup slipway can read (not a gzipped tar archive") {
		t.Errorf("log %q; want a warning that the file is not a backup", log.String())
	}
	if after, _ := os.ReadFile(path); string(after) != "my notes" {
		t.Error("a file that is not a backup was overwritten")
	}
	matches, _ := filepath.Glob("unit-pki*")
	if len(matches) != 3 {
		t.Errorf("files: %q; want the backup and the two kept", matches)
	}
}

// TestPKIFromHostsIsBounded: the files of a backup are read from a control plane with the
// limit of a backup's member, so that apply never writes a backup that restore refuses, and a
// huge (or endless) file is an error naming it and the host.
func TestPKIFromHostsIsBounded(t *testing.T) {
	t.Chdir(t.TempDir())
	c := testCluster(t, "10.0.0.1")
	target, fleet := fakeTarget(c, nil)
	cp := fleet.Get("10.0.0.1")
	for _, f := range pkiFiles {
		cp.SetFile("/etc/kubernetes/pki/"+f, sshtest.File{Data: []byte("content of " + f)})
	}
	cp.SetFile("/etc/kubernetes/pki/sa.key", sshtest.File{Data: bytes.Repeat([]byte("k"), 64<<10+1)})
	err := savePKIBackup(context.Background(), target, time.Now(), &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "/etc/kubernetes/pki/sa.key on 10.0.0.1 is larger than 64 KiB") {
		t.Errorf("a 64 KiB + 1 sa.key: %v", err)
	}
	if _, err := os.Stat(PKIBackupPath("unit")); err == nil {
		t.Error("a backup was written")
	}
}

// TestTakeBackupHoldsTheEncryptionConfiguration: slipway backup's PKI backup holds the
// encryption configuration of a cluster that encrypts Secrets, beside the CAs and keys, and
// says so. The PKI backup is written before the snapshot, which the fake hosts cannot take.
func TestTakeBackupHoldsTheEncryptionConfiguration(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "backups")
	c := testCluster(t, "10.0.0.1")
	target, fleet := fakeTarget(c, nil)
	cp := fleet.Get("10.0.0.1")
	files := testPKI(t)
	for name, data := range files {
		cp.SetFile("/etc/kubernetes/pki/"+name, sshtest.File{Data: data})
	}
	conf := testEncryption(t, "key-3")
	encryptOn(cp, conf)
	_, err := TakeBackup(context.Background(), target, dir, time.Date(2026, 11, 28, 6, 15, 0, 0, time.UTC))
	pki := filepath.Join(dir, "unit-20261128T061500Z-pki.tar.gz")
	if err == nil || !strings.Contains(err.Error(), "the CA and keys are in "+pki+", but the etcd snapshot failed") {
		t.Fatalf("backup with hosts that cannot take a snapshot: %v", err)
	}
	a := readBackupFile(t, pki)
	if !bytes.Equal(a.Encryption, conf) || !a.samePKI(pkiArchive{PKI: files}) {
		t.Errorf("the backup holds encryption configuration %t and the cluster's CAs %t; want both", bytes.Equal(a.Encryption, conf), a.samePKI(pkiArchive{PKI: files}))
	}
	// What restore reads of it, for a manifest with encryption.enabled.
	snap := filepath.Join(dir, "etcd.db")
	if err := os.WriteFile(snap, testSnapshot([]byte("pages")), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := LoadRestore(snap, pki, true)
	if err != nil || !bytes.Equal(r.Encryption, conf) || len(r.PKI) != len(pkiFiles) {
		t.Errorf("LoadRestore of the backup: %v", err)
	}
}

package cluster

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/slipway-dev/slipway/pkg/ssh/sshtest"
)

func TestSavePKIBackup(t *testing.T) {
	t.Chdir(t.TempDir())
	c := testCluster(t, "10.0.0.1", "10.0.0.2")
	target, fleet := fakeTarget(c, nil)
	cp := fleet.Get("10.0.0.1")
	ctx := context.Background()
	path := PKIBackupPath("unit")

	var log bytes.Buffer
	err := savePKIBackup(ctx, target, &log)
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
	if err := savePKIBackup(ctx, target, &log); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %o; it holds the CA keys, want 0600", path, fi.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	held, err := readPKIBackup(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(held) != len(pkiFiles) || string(held["etcd/ca.key"]) != "content of etcd/ca.key" {
		t.Errorf("the backup holds %d files, etcd/ca.key %q", len(held), held["etcd/ca.key"])
	}
	if !strings.Contains(log.String(), "backed up to "+path) || strings.Contains(log.String(), "content of") {
		t.Errorf("log %q: want the path, and never the keys", log.String())
	}

	// The same keys again: nothing to say, nothing changed.
	log.Reset()
	if err := savePKIBackup(ctx, target, &log); err != nil || log.Len() != 0 {
		t.Errorf("a second apply: %v, log %q; want silence", err, log.String())
	}

	// A cluster made anew has another CA: the old backup is kept, and apply says so.
	cp.SetFile("/etc/kubernetes/pki/ca.key", sshtest.File{Data: []byte("another key")})
	log.Reset()
	if err := savePKIBackup(ctx, target, &log); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "Warning: "+path+" does not hold the CA and keys of this cluster") {
		t.Errorf("log %q; want a warning that the backup is another cluster's", log.String())
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, data) {
		t.Error("the backup was overwritten")
	}
}

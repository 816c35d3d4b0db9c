package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/slipway-dev/slipway/pkg/access"
	"github.com/slipway-dev/slipway/pkg/inventory"
	"github.com/slipway-dev/slipway/pkg/plan"
	"github.com/slipway-dev/slipway/pkg/ssh"
)

// PKIBackupPath is where apply saves the cluster's CA and service-account keys, beside the
// kubeconfig.
func PKIBackupPath(clusterName string) string { return clusterName + "-pki.tar.gz" }

// savePKIBackup saves the cluster's CAs and service-account keys, and its encryption
// configuration when it encrypts Secrets at rest, from a control plane to PKIBackupPath, mode
// 0600. A backup of other keys is never overwritten: when it holds them (the cluster was made
// anew, or the file is another cluster's), or is not a backup at all, apply says so and keeps
// it. When only the encryption configuration changed (encryption was enabled, or a key
// rotated), the file is replaced and the one before kept beside it, under the time it was
// replaced: the snapshots taken until then need it.
func savePKIBackup(ctx context.Context, t *Target, now time.Time, log io.Writer) error {
	cur, host, err := fetchPKI(ctx, t)
	if err != nil {
		return fmt.Errorf("backing up the cluster's CA and keys: %w", err)
	}
	path := PKIBackupPath(t.Manifest.Name)
	old, err := loadPKIBackup(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		data, err := writePKIBackup(cur)
		if err != nil {
			return err
		}
		if err := writeNew(path, data); err != nil {
			return err
		}
		fmt.Fprintf(log, "The cluster's CA and service-account keys%s backed up to %s (mode 0600): keep it safe, it can sign for the whole cluster\n", withEncryption(cur), path)
		return nil
	case err != nil:
		fmt.Fprintf(log, "Warning: %s is not a PKI backup slipway can read (%v): kept as it is; move it away and apply again to save a backup of this cluster's CA and keys (now on %s)\n", path, err, host)
		return nil
	case !old.samePKI(cur):
		fmt.Fprintf(log, "Warning: %s does not hold the CA and keys of this cluster (now on %s): kept as it is; move it away and apply again to save a backup of these\n", path, host)
		return nil
	case cur.Encryption == nil || bytes.Equal(old.Encryption, cur.Encryption):
		return os.Chmod(path, 0o600)
	}
	data, err := writePKIBackup(cur)
	if err != nil {
		return err
	}
	before := strings.TrimSuffix(path, ".tar.gz") + "-until-" + now.UTC().Format(backupTime) + ".tar.gz"
	if err := os.Link(path, before); err != nil {
		return fmt.Errorf("keeping the PKI backup before the encryption configuration changed: %w", err)
	}
	if err := os.Chmod(before, 0o600); err != nil {
		return err
	}
	if err := writeFile(path, data, true); err != nil {
		return err
	}
	fmt.Fprintf(log, "The encryption configuration of the cluster changed (encryption enabled, or a key rotated): %s now holds the new one (from %s); the backup before it is kept as %s (mode 0600), for the snapshots taken until now\n", path, host, before)
	return nil
}

// backupTime is how backup file names hold a time: UTC, to the second.
const backupTime = "20060102T150405Z"

func withEncryption(a pkiArchive) string {
	if a.Encryption == nil {
		return ""
	}
	return ", and the encryption configuration of Secrets at rest,"
}

// fetchPKI reads a backup of the first control plane that has pkiFiles.
func fetchPKI(ctx context.Context, t *Target) (pkiArchive, string, error) {
	var errs []error
	for _, n := range controlPlanes(t.Nodes) {
		a, err := fetchPKIFrom(ctx, t.SSH.Host(n.Target))
		if err == nil {
			return a, n.Name, nil
		}
		errs = append(errs, err)
	}
	return pkiArchive{}, "", fmt.Errorf("no control plane has them: %w", errors.Join(errs...))
}

// fetchPKIFrom reads pkiFiles from the control plane h, each with the limit of a member of a
// backup (so that apply never writes one it cannot read), and its encryption configuration,
// if it has one.
func fetchPKIFrom(ctx context.Context, h ssh.Host) (pkiArchive, error) {
	a := pkiArchive{PKI: map[string][]byte{}}
	for _, f := range pkiFiles {
		data, err := ssh.ReadFile(ctx, h, "/etc/kubernetes/pki/"+f, maxMemberBytes)
		if err != nil {
			return a, err
		}
		a.PKI[f] = data
	}
	e, err := access.ReadEncryption(ctx, h)
	if err != nil {
		return a, err
	}
	a.Encryption = e.Data
	return a, nil
}

func controlPlanes(nodes []*inventory.Node) []*inventory.Node {
	var out []*inventory.Node
	for _, n := range nodes {
		if n.Role == plan.ControlPlane {
			out = append(out, n)
		}
	}
	return out
}

// writeNew writes data to path with mode 0600, only if path does not exist: a file that
// appears meanwhile is not replaced, and a failed write leaves nothing at path.
func writeNew(path string, data []byte) error { return writeFile(path, data, false) }

// writeFile writes data to path with mode 0600, through a temporary file beside it: readers
// of path see the old file or the whole new one. Without replace, an existing path is an error.
func writeFile(path string, data []byte, replace bool) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".pki-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	if replace {
		if err := os.Rename(f.Name(), path); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
		return nil
	}
	if err := os.Link(f.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s exists: slipway does not overwrite a backup; remove it or choose another place", path)
		}
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// Backup is what TakeBackup wrote.
type Backup struct {
	PKI string `json:"pki"`
	// Encryption says that PKI holds the encryption configuration of Secrets at rest too.
	Encryption bool      `json:"encryptionConfiguration"`
	Snapshot   *Snapshot `json:"etcdSnapshot"`
}

// TakeBackup writes, into dir (made 0700 if missing), a fresh backup of the cluster: its CAs and
// service-account keys, and its encryption configuration when it encrypts Secrets at rest
// (<cluster>-<time>-pki.tar.gz), and a consistent etcd snapshot
// (<cluster>-<time>-etcd.db, with its .sha256), each mode 0600. Together they are what a
// cluster whose control planes were all lost is rebuilt from. Existing files are never
// overwritten.
func TakeBackup(ctx context.Context, t *Target, dir string, now time.Time) (*Backup, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("making the backup directory: %w", err)
	}
	prefix := filepath.Join(dir, t.Manifest.Name+"-"+now.UTC().Format(backupTime))
	a, _, err := fetchPKI(ctx, t)
	if err != nil {
		return nil, fmt.Errorf("backing up the cluster's CA and keys: %w", err)
	}
	data, err := writePKIBackup(a)
	if err != nil {
		return nil, err
	}
	b := &Backup{PKI: prefix + "-pki.tar.gz", Encryption: a.Encryption != nil}
	if err := writeNew(b.PKI, data); err != nil {
		return nil, err
	}
	if b.Snapshot, err = EtcdSnapshot(ctx, t, prefix+"-etcd.db"); err != nil {
		return nil, fmt.Errorf("the CA and keys are in %s, but the etcd snapshot failed: %w", b.PKI, err)
	}
	return b, nil
}

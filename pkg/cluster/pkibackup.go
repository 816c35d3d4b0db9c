package cluster

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/slipway-dev/slipway/pkg/inventory"
	"github.com/slipway-dev/slipway/pkg/plan"
)

// PKIBackupPath is where apply saves the cluster's CA and service-account keys, beside the
// kubeconfig.
func PKIBackupPath(clusterName string) string { return clusterName + "-pki.tar.gz" }

// pkiFiles are what a cluster cannot be rebuilt without, relative to /etc/kubernetes/pki: the
// CAs that sign every certificate (cluster, front proxy, etcd) with their keys, and the key that
// signs service-account tokens. kubeadm issues everything else again from them.
var pkiFiles = []string{
	"ca.crt", "ca.key",
	"front-proxy-ca.crt", "front-proxy-ca.key",
	"etcd/ca.crt", "etcd/ca.key",
	"sa.key", "sa.pub",
}

// savePKIBackup saves the cluster's CAs and service-account keys from a control plane to
// PKIBackupPath, mode 0600, the first time. An existing backup is never overwritten: when it
// holds other keys (the cluster was made anew, or the file is another cluster's) apply says so
// and keeps it.
func savePKIBackup(ctx context.Context, t *Target, log io.Writer) error {
	files, host, err := fetchPKI(ctx, t)
	if err != nil {
		return fmt.Errorf("backing up the cluster's CA and keys: %w", err)
	}
	path := PKIBackupPath(t.Manifest.Name)
	old, err := os.ReadFile(path)
	switch {
	case err == nil:
		held, rerr := readPKIBackup(old)
		if rerr == nil && samePKI(held, files) {
			return os.Chmod(path, 0o600)
		}
		fmt.Fprintf(log, "Warning: %s does not hold the CA and keys of this cluster (now on %s): kept as it is; move it away and apply again to save a backup of these\n", path, host)
		return nil
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("reading %s: %w", path, err)
	}
	data, err := writePKIBackup(files)
	if err != nil {
		return err
	}
	if err := writeNew(path, data); err != nil {
		return err
	}
	fmt.Fprintf(log, "The cluster's CA and service-account keys backed up to %s (mode 0600): keep it safe, it can sign for the whole cluster\n", path)
	return nil
}

// fetchPKI downloads pkiFiles from the first control plane that has them all.
func fetchPKI(ctx context.Context, t *Target) (map[string][]byte, string, error) {
	var errs []error
	for _, n := range controlPlanes(t.Nodes) {
		h := t.SSH.Host(n.Target)
		files := map[string][]byte{}
		var err error
		for _, f := range pkiFiles {
			var buf bytes.Buffer
			if err = h.Download(ctx, "/etc/kubernetes/pki/"+f, &buf); err != nil {
				break
			}
			files[f] = buf.Bytes()
		}
		if err == nil {
			return files, n.Name, nil
		}
		errs = append(errs, err)
	}
	return nil, "", fmt.Errorf("no control plane has them: %w", errors.Join(errs...))
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

// writePKIBackup packs files into a gzipped tar, in a stable order, each entry mode 0600.
func writePKIBackup(files map[string][]byte) ([]byte, error) {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, name := range names {
		if err := tw.WriteHeader(&tar.Header{Name: "pki/" + name, Mode: 0o600, Size: int64(len(files[name])), Typeflag: tar.TypeReg}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(files[name]); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// readPKIBackup unpacks a backup written by writePKIBackup.
func readPKIBackup(data []byte) (map[string][]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	out := map[string][]byte{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		body, err := io.ReadAll(io.LimitReader(tr, 1<<20))
		if err != nil {
			return nil, err
		}
		if name, ok := strings.CutPrefix(hdr.Name, "pki/"); ok {
			out[name] = body
		}
	}
}

func samePKI(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for name, data := range a {
		if !bytes.Equal(b[name], data) {
			return false
		}
	}
	return true
}

// writeNew writes data to path with mode 0600, only if path does not exist: a file that
// appears meanwhile is not replaced, and a failed write leaves nothing at path.
func writeNew(path string, data []byte) error {
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
	PKI      string    `json:"pki"`
	Snapshot *Snapshot `json:"etcdSnapshot"`
}

// TakeBackup writes, into dir (made 0700 if missing), a fresh backup of the cluster: its CAs and
// service-account keys (<cluster>-<time>-pki.tar.gz) and a consistent etcd snapshot
// (<cluster>-<time>-etcd.db, with its .sha256), each mode 0600. Together they are what a
// cluster whose control planes were all lost is rebuilt from. Existing files are never
// overwritten.
func TakeBackup(ctx context.Context, t *Target, dir string, now time.Time) (*Backup, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("making the backup directory: %w", err)
	}
	prefix := filepath.Join(dir, t.Manifest.Name+"-"+now.UTC().Format("20060102T150405Z"))
	files, _, err := fetchPKI(ctx, t)
	if err != nil {
		return nil, fmt.Errorf("backing up the cluster's CA and keys: %w", err)
	}
	data, err := writePKIBackup(files)
	if err != nil {
		return nil, err
	}
	b := &Backup{PKI: prefix + "-pki.tar.gz"}
	if err := writeNew(b.PKI, data); err != nil {
		return nil, err
	}
	if b.Snapshot, err = EtcdSnapshot(ctx, t, prefix+"-etcd.db"); err != nil {
		return nil, fmt.Errorf("the CA and keys are in %s, but the etcd snapshot failed: %w", b.PKI, err)
	}
	return b, nil
}

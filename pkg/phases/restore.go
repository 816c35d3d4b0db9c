package phases

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/pkg/csr"
	"github.com/slipway-dev/slipway/pkg/encryption"
	"github.com/slipway-dev/slipway/pkg/inventory"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/kubeadm"
	"github.com/slipway-dev/slipway/pkg/plan"
)

// The restore phases make a cluster whose control planes were all lost again from an etcd
// snapshot and a PKI backup (apply --restore-from). restore-etcd, before kubeadm init on the
// leader, puts the cluster's CAs and service-account keys where kubeadm looks for them (so that
// kubeadm issues every other certificate from them, and every kubeconfig, ServiceAccount token
// and worker's kubelet certificate stays valid), the backup's encryption configuration where
// the API server reads it (so that the snapshot's encrypted Secrets read: kubeadm init keeps
// the leader's own file, and the joins copy it), and restores the snapshot into /var/lib/etcd
// as a one-member cluster named after the leader. kubeadm init then starts the control plane on
// that data. restore-finish deletes the Nodes of the other control planes, which the snapshot
// holds and whose hosts are new (kubeadm join refuses a name whose Node exists and is Ready),
// and the control planes' decided kubelet serving certificate requests (see
// forgetServingCertificates).
var (
	_ = register(Phase{
		Name:  plan.StepRestoreEtcd,
		Short: "put the PKI backup's CAs, keys and encryption configuration on the leader and restore etcd's data from the snapshot",
		Run:   func(ctx context.Context, r *Run, host string) error { return restoreEtcd(ctx, r, host) },
	})
	_ = register(Phase{
		Name:  plan.StepRestoreFinish,
		Short: "delete the restored Nodes of the control planes that join anew, and their old kubelet serving certificate requests",
		Run:   func(ctx context.Context, r *Run, _ string) error { return forgetControlPlanes(ctx, r) },
	})
)

// Restore is what apply --restore-from makes the cluster again from. All was checked before
// the run: the snapshot's own SHA-256, that each CA's certificate and key pair, and that the
// encryption configuration is one slipway wrote, there exactly when the manifest enables
// encryption.
type Restore struct {
	// Snapshot is the path on this machine of the etcd snapshot.
	Snapshot string
	// PKI holds the CAs and service-account keys by path under /etc/kubernetes/pki (ca.crt,
	// etcd/ca.key, sa.pub...). It holds keys: never log it.
	PKI map[string][]byte
	// Encryption is the encryption configuration of Secrets at rest (encryption.File) that the
	// snapshot's Secrets were encrypted with; nil for a cluster that did not encrypt them. It
	// holds the keys: never log it.
	Encryption []byte
}

const (
	// restoreDir holds the snapshot on the leader while it is restored; root-only, emptied
	// after the restore, whether it succeeds or not.
	restoreDir = "/var/lib/slipway/restore"
	// pkiDir is where kubeadm keeps the cluster's certificates and keys.
	pkiDir = "/etc/kubernetes/pki"
	// restoredEtcdPreflight is kubeadm's check that etcd's data directory is empty, which a
	// restore fills on purpose.
	restoredEtcdPreflight = "DirAvailable--var-lib-etcd"
	// bumpRevision is how far the restored etcd's revision is raised above the snapshot's.
	// Clients that watched the lost cluster hold revisions past the snapshot: with the revision
	// bumped and marked compacted, their watches fail and they list again, rather than wait for
	// revisions that will mean something else. etcd's recovery guide suggests a bump larger than
	// the writes since the snapshot; a billion is more than any cluster writes between backups.
	bumpRevision = "1000000000"
)

// restoreEtcdScript pulls the cluster's etcd image through the CRI (so containerd's mirrors and
// credentials apply), runs its etcdutl to restore the snapshot into a new data directory, and
// moves that to /var/lib/etcd. It reads ETCD_IMAGE, MEMBER and PEER_URL from the environment.
// The script arrives on bash's standard input, and ctr run passes its own standard input to the
// container: the body is one function, read whole before it runs, with /dev/null as its input,
// so that no command can swallow the rest of the script.
const restoreEtcdScript = `set -euo pipefail
main() {
dir=` + restoreDir + `
cleanup() { rm -rf "$dir/snapshot.db" "$dir/etcd"; }
trap cleanup EXIT
if [ -d /var/lib/etcd ] && [ -n "$(ls -A /var/lib/etcd)" ]; then
  echo "/var/lib/etcd is not empty: slipway does not restore over an etcd member's data" >&2
  exit 1
fi
crictl --runtime-endpoint unix:///run/containerd/containerd.sock --timeout 10m pull "$ETCD_IMAGE" >/dev/null
# A run killed during the restore leaves its container behind.
ctr -n k8s.io tasks kill -s SIGKILL slipway-restore-etcd >/dev/null 2>&1 || true
ctr -n k8s.io containers rm slipway-restore-etcd >/dev/null 2>&1 || true
rm -rf "$dir/etcd"
ctr -n k8s.io run --rm --net-host --mount "type=bind,src=$dir,dst=$dir,options=rbind:rw" "$ETCD_IMAGE" slipway-restore-etcd \
  /usr/local/bin/etcdutl snapshot restore "$dir/snapshot.db" --data-dir "$dir/etcd" \
  --name "$MEMBER" --initial-cluster "$MEMBER=$PEER_URL" --initial-advertise-peer-urls "$PEER_URL" \
  --bump-revision ` + bumpRevision + ` --mark-compacted
if [ -d /var/lib/etcd ]; then rmdir /var/lib/etcd; fi
mv "$dir/etcd" /var/lib/etcd
chmod 0700 /var/lib/etcd
test -d /var/lib/etcd/member/wal
}
main </dev/null
`

// restoreRun is what the restore phases read of a run.
type restoreRun interface {
	nodes
	manifest
	api
	logger
	restoreSource() *Restore
	hide(values ...string)
}

func (r *Run) restoreSource() *Restore { return r.cfg.Restore }

func restoreEtcd(ctx context.Context, r restoreRun, host string) error {
	src := r.restoreSource()
	if src == nil {
		return fmt.Errorf("%s: the plan restores etcd, but apply was not given --restore-from", plan.StepRestoreEtcd)
	}
	n, err := r.Node(host)
	if err != nil {
		return err
	}
	image, err := kubeadm.EtcdImage(r.Manifest())
	if err != nil {
		return err
	}
	if err := uploadPKI(ctx, n, src.PKI); err != nil {
		return err
	}
	r.Logf(host, "the CAs and service-account keys of the PKI backup are in %s", pkiDir)
	if src.Encryption != nil {
		if _, err := hideKeys(r, src.Encryption); err != nil {
			return err
		}
		if err := writeEncryption(ctx, n, src.Encryption); err != nil {
			return err
		}
		r.Logf(host, "the encryption configuration of the PKI backup (%s) is in %s, for the API server to read the snapshot's Secrets with", shortHash(encryption.Hash(src.Encryption)), encryption.File)
	}
	f, err := os.Open(src.Snapshot)
	if err != nil {
		return fmt.Errorf("reading the snapshot: %w", err)
	}
	defer f.Close()
	if err := n.SSH.Command(ctx, "install", "-d", "-m", "0700", restoreDir).Run(); err != nil {
		return err
	}
	if err := n.SSH.Upload(ctx, f, path.Join(restoreDir, "snapshot.db"), 0o600, "root"); err != nil {
		return err
	}
	// kubeadm names the member after the node and advertises its private address.
	peer := "https://" + n.Address() + ":2380"
	cmd := n.SSH.Script(ctx, "restore-etcd", restoreEtcdScript)
	cmd.Env = []string{"ETCD_IMAGE=" + image, "MEMBER=" + n.Name, "PEER_URL=" + peer}
	if err := cmd.Run(); err != nil {
		return err
	}
	r.Logf(host, "etcd's data restored from %s as member %s (%s), revisions raised by %s", src.Snapshot, n.Name, peer, bumpRevision)
	return nil
}

// uploadPKI writes the backup's files under pkiDir: keys 0600, certificates 0644.
func uploadPKI(ctx context.Context, n Node, files map[string][]byte) error {
	names := make([]string, 0, len(files))
	dirs := []string{pkiDir}
	for name := range files {
		names = append(names, name)
		if d := path.Dir(path.Join(pkiDir, name)); !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	slices.Sort(names)
	if err := n.SSH.Command(ctx, "install", append([]string{"-d", "-m", "0755"}, dirs...)...).Run(); err != nil {
		return err
	}
	for _, name := range names {
		mode := os.FileMode(0o644)
		if strings.HasSuffix(name, ".key") {
			mode = 0o600
		}
		if err := n.SSH.Upload(ctx, bytes.NewReader(files[name]), path.Join(pkiDir, name), mode, "root"); err != nil {
			return err
		}
	}
	return nil
}

// forgetControlPlanes deletes the Nodes of the manifest's control planes other than the
// leader: the snapshot holds them as they were, Ready until the node controller notices, and
// their new hosts join under the same names. The restored etcd has one member, the leader, so
// no etcd member needs removing.
func forgetControlPlanes(ctx context.Context, r interface {
	restoreRun
	Nodes() []*inventory.Node
}) error {
	c, err := r.Kube(ctx)
	if err != nil {
		return err
	}
	if err := forgetServingCertificates(ctx, r, c); err != nil {
		return err
	}
	for _, n := range r.Nodes() {
		if n.Role != plan.ControlPlane || n.Host.IsLeader {
			continue
		}
		err := c.Kube.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return fmt.Errorf("deleting the restored Node %s, whose host joins anew: %w", n.Name, err)
		default:
			r.Logf(n.Name, "deleted the restored Node %s: its host joins anew", n.Name)
		}
	}
	return nil
}

// forgetServingCertificates deletes the kubelet serving certificate requests of the control
// planes that the snapshot holds already decided: they were the lost hosts' kubelets'. Left in
// place, they would count as the new kubelets' approved requests, and approve-csrs would finish
// before the new kubelets' own requests arrive. Requests still pending are the new kubelets'
// (the leader's, made during kubeadm init) and stay.
func forgetServingCertificates(ctx context.Context, r interface {
	restoreRun
	Nodes() []*inventory.Node
}, c *kube.Client) error {
	controlPlanes := map[string]bool{}
	for _, n := range r.Nodes() {
		if n.Role == plan.ControlPlane {
			controlPlanes[n.Name] = true
		}
	}
	list, err := c.Kube.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing certificate signing requests: %w", err)
	}
	for i := range list.Items {
		req := &list.Items[i]
		name, ok := csr.NodeName(req)
		if !ok || !controlPlanes[name] || csr.Pending(req) {
			continue
		}
		err := c.Kube.CertificatesV1().CertificateSigningRequests().Delete(ctx, req.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting the restored certificate signing request %s of %s: %w", req.Name, name, err)
		}
		r.Logf(name, "deleted the restored serving certificate request %s: its kubelet was the lost host's", req.Name)
	}
	return nil
}

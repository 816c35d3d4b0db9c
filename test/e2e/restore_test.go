package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/slipway-dev/slipway/pkg/cluster"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/plan"
	"github.com/slipway-dev/slipway/pkg/scripts"
	"github.com/slipway-dev/slipway/test/s3/s3test"
)

// checkScheduledSnapshots schedules etcd snapshots every minute, keeping 2, on the control
// planes of manifest (which must set etcd.snapshots so), and waits for the timer's first
// snapshot on leader. It returns that snapshot's name.
// waitSnapshotServiceIdle waits until the snapshot service on host is not running. The timer
// starts it on the minute, and a `systemctl start` while that run is still uploading joins it
// rather than taking a snapshot of its own: a run by hand must begin after the timer's has ended.
func (h *harness) waitSnapshotServiceIdle(t *testing.T, host string) {
	t.Helper()
	err := kube.Wait(context.Background(), "the etcd snapshot service on "+host+" to be idle", 2*time.Minute, func(context.Context) (bool, string, error) {
		out, err := h.onHost(host, "systemctl show -p ActiveState --value "+scripts.SnapshotUnit+".service")
		if err != nil {
			return false, err.Error(), nil
		}
		state := strings.TrimSpace(out)
		return state != "activating" && state != "active" && state != "deactivating", "ActiveState " + state, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (h *harness) checkScheduledSnapshots(t *testing.T, manifest, leader string, controlPlanes []string, store *snapshotStore) string {
	p := stepList(h.plan(manifest))
	for _, cp := range controlPlanes {
		if !slices.Contains(p, "etcd-snapshots on "+cp) {
			t.Errorf("plan %v does not schedule snapshots on %s", p, cp)
		}
	}
	// The S3 secret reaches the control planes, and nothing slipway prints, --verbose included.
	if out := h.mustApply(manifest, "-v").out; strings.Contains(out, store.SecretAccessKey) {
		t.Error("slipway printed the S3 secret key")
	}
	if p := h.plan(manifest); len(p.Steps) != 0 {
		t.Errorf("the plan after scheduling snapshots: %v; want nothing to do", stepList(p))
	}
	for _, cp := range controlPlanes {
		if out, err := h.onHost(cp, "stat -c '%a %U' "+scripts.SnapshotS3Config); err != nil || strings.TrimSpace(out) != "600 root" {
			t.Errorf("%s: the S3 credentials file: %v %q; want mode 600, owned by root", cp, err, out)
		}
	}
	var first string
	err := kube.Wait(context.Background(), "the timer's first etcd snapshot on "+leader, 3*time.Minute, func(context.Context) (bool, string, error) {
		names := h.snapshotsOn(t, leader)
		if len(names) > 0 {
			first = names[0]
		}
		return len(names) > 0, fmt.Sprintf("snapshots %v", names), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return first
}

// snapshotsOn lists, oldest first, the scheduled snapshots on host.
func (h *harness) snapshotsOn(t *testing.T, host string) []string {
	t.Helper()
	out, err := h.onHost(host, "find "+scripts.SnapshotDir+" -maxdepth 1 -name '*.db' -printf '%f\\n' 2>/dev/null | sort")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(out)
}

// checkRestore loses every control plane and makes the cluster again with apply
// --restore-from on fresh hosts at the same addresses, from a snapshot that the scheduled
// snapshots' service took on the leader and the PKI backup apply saved. Before that it checks
// the scheduled snapshots: the timer's first one, runs started by hand, retention (2 kept, the
// timer's first pruned), checksums, and status. The cluster must come back as the snapshot holds
// it: a ConfigMap written before the snapshot is there and one written after is not,
// kube-system keeps its UID, the kubeconfig and a ServiceAccount token from before still work,
// the worker (never touched) is Ready again, and etcd has every control plane as a member.
// manifest enables encryption at rest (the first apply here enables it on the running cluster):
// apply's PKI backup then holds the encryption configuration (the one before kept beside it),
// the restore puts it back, so a Secret written before the snapshot reads again, every new
// control plane holds the same root-only file, and a Secret written afterwards is stored under
// key-1. Before the restore, apply refuses one over the living cluster, from a corrupt
// snapshot, and with the PKI backup from before encryption, changing nothing.
func (h *harness) checkRestore(t *testing.T, manifest string, all, controlPlanes []string, version string, store *snapshotStore) {
	ctx := context.Background()
	leader := controlPlanes[0]
	first := h.checkScheduledSnapshots(t, manifest, leader, controlPlanes, store)
	c := h.kube("e2e")
	ks, err := c.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	writeConfigMap := func(name string) {
		t.Helper()
		if _, err := c.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"k": "v"},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	writeConfigMap("in-the-snapshot")
	secret := h.writeMarkedSecret(t, c, "secret-in-the-snapshot")
	configHash := h.encryptionConfigHash(t, leader)
	plainBackup := h.checkEncryptedPKIBackup(t, leader)
	tr, err := c.CoreV1().ServiceAccounts("default").CreateToken(ctx, "default", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(3600))},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A snapshot by hand, through the service the timer starts.
	h.waitSnapshotServiceIdle(t, leader)
	before := h.snapshotsOn(t, leader)
	if out, err := h.onHost(leader, "systemctl start "+scripts.SnapshotUnit+".service"); err != nil {
		t.Fatalf("starting a snapshot by hand: %v\n%s", err, out)
	}
	var taken string
	for _, n := range h.snapshotsOn(t, leader) {
		if !slices.Contains(before, n) {
			taken = n
		}
	}
	if taken == "" {
		t.Fatalf("the snapshot service ran, but %s holds no new snapshot (before %v)", leader, before)
	}
	writeConfigMap("after-the-snapshot")
	// The restore starts from the copy the run uploaded, checked against the checksum uploaded
	// beside it: what an operator who lost every control plane still has.
	snap := filepath.Join(h.dir, "restore-etcd.db")
	store.copyChecked(t, taken, snap)
	if out, err := h.onHost(leader, "cd "+scripts.SnapshotDir+" && sha256sum -c "+taken+".sha256 && stat -c %a "+taken); err != nil || !strings.HasSuffix(strings.TrimSpace(out), "600") {
		t.Errorf("the snapshot's checksum and mode on %s: %v\n%s", leader, err, out)
	}
	// Retention: one more run, by hand, and only the newest 2 remain: the timer's first is gone.
	h.waitSnapshotServiceIdle(t, leader)
	if out, err := h.onHost(leader, "systemctl start "+scripts.SnapshotUnit+".service"); err != nil {
		t.Fatalf("starting a snapshot by hand: %v\n%s", err, out)
	}
	if names := h.snapshotsOn(t, leader); len(names) != 2 || slices.Contains(names, first) || names[0] < taken {
		t.Errorf("snapshots after the third run: %v; want the newest 2 (the timer's first %s pruned, %s or later kept)", names, first, taken)
	}
	store.expectSameAs(t, h, leader)
	r := h.slipway(nil, "status", "-m", manifest, "-o", "json")
	var st cluster.Status
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatalf("status -o json: %v\n%s", err, r.out)
	}
	for _, hs := range st.Hosts {
		if hs.Role != "control-plane" {
			continue
		}
		if s := hs.Snapshots; s == nil || !s.Scheduled || s.LastRun != "success" || s.Newest == "" || time.Since(s.NewestAt) > 3*time.Minute {
			t.Errorf("status of %s's snapshots: %+v; want scheduled, the last run a success, the newest within minutes", hs.Name, s)
		}
	}
	if r.code != 0 {
		t.Errorf("status with scheduled snapshots: exit code %d\n%s", r.code, r.out)
	}

	// apply writes a new admin kubeconfig after the restore: keep the old one to show it works.
	oldKubeconfig := filepath.Join(h.dir, "before-restore-kubeconfig")
	data, err := os.ReadFile(filepath.Join(h.dir, "e2e-kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(oldKubeconfig, data, 0o600); err != nil {
		t.Fatal(err)
	}

	if r := h.slipway(nil, "apply", "-m", manifest, "--restore-from", snap, "--auto-approve"); r.code == 0 || !strings.Contains(r.out, "this one answers") {
		t.Errorf("a restore over the living cluster: exit code %d; want a refusal\n%s", r.code, r.out)
	}
	snapData, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	snapData[len(snapData)/2] ^= 0xff
	corrupt := filepath.Join(h.dir, "corrupt-etcd.db")
	if err := os.WriteFile(corrupt, snapData, 0o600); err != nil {
		t.Fatal(err)
	}
	if r := h.slipway(nil, "apply", "-m", manifest, "--restore-from", corrupt, "--auto-approve"); r.code == 0 || !strings.Contains(r.out, "corrupt-etcd.db") || !strings.Contains(r.out, "SHA-256 does not match") {
		t.Errorf("a restore from a corrupt snapshot: exit code %d; want a refusal naming the file\n%s", r.code, r.out)
	}

	for _, cp := range controlPlanes {
		if err := h.sb.Recreate(ctx, cp, false); err != nil {
			t.Fatal(err)
		}
	}
	// The backup from before encryption was enabled cannot read the snapshot's Secrets: refused
	// as an invalid input, before any host is reached.
	if r := h.slipway(nil, "apply", "-m", manifest, "--restore-from", snap, "--pki-backup", plainBackup, "--auto-approve"); r.code != 3 || !strings.Contains(r.out, "holds no encryption configuration") {
		t.Errorf("a restore of the encrypted cluster with the PKI backup from before encryption: exit code %d; want 3 and a refusal\n%s", r.code, r.out)
	}
	restorePlan := h.planWith(nil, manifest, "--restore-from", snap)
	for _, s := range restorePlan.Steps {
		switch {
		case s.Name == plan.StepRestoreEtcd && !strings.Contains(s.Reason, "encryption configuration"):
			t.Errorf("restore-etcd's reason %q does not name the encryption configuration", s.Reason)
		case s.Name == plan.StepEncryptionConfig || s.Name == plan.StepEncryptionServer || s.Name == plan.StepEncryptSecrets:
			t.Errorf("the restore plan has %s: the restored configuration needs no encryption step", s)
		}
	}
	p := stepList(restorePlan)
	for _, want := range []string{"restore-etcd on " + controlPlanes[0], "kubeadm-init on " + controlPlanes[0], "restore-finish", "join-control-plane on " + controlPlanes[1]} {
		if !slices.Contains(p, want) {
			t.Errorf("restore plan %v lacks %q", p, want)
		}
	}
	for _, s := range p {
		if strings.HasPrefix(s, "join-worker") {
			t.Errorf("restore plan %v joins a worker, which kept running", p)
		}
	}
	r = h.mustApply(manifest, "--restore-from", snap)
	t.Logf("restore of %d control planes took %s", len(controlPlanes), r.duration.Round(1e9))

	old := kubeFrom(t, oldKubeconfig, "")
	h.expectNodes(old, all, version)
	h.expectEtcdMembers(old, len(controlPlanes))
	if _, err := old.CoreV1().ConfigMaps("default").Get(ctx, "in-the-snapshot", metav1.GetOptions{}); err != nil {
		t.Errorf("a ConfigMap in the snapshot: %v", err)
	}
	if _, err := old.CoreV1().ConfigMaps("default").Get(ctx, "after-the-snapshot", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a ConfigMap written after the snapshot: %v; want NotFound", err)
	}
	if after, err := old.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{}); err != nil || after.UID != ks.UID {
		t.Errorf("kube-system after the restore: %v, UID %v; want UID %s", err, after.GetUID(), ks.UID)
	}
	// The snapshot's Secrets read with the restored key, which every new control plane holds.
	if got, err := old.CoreV1().Secrets("default").Get(ctx, "secret-in-the-snapshot", metav1.GetOptions{}); err != nil || string(got.Data["v"]) != secret {
		t.Errorf("a Secret in the snapshot, after the restore: %v; want it to read as written", err)
	}
	for _, cp := range controlPlanes {
		if got := h.encryptionConfigHash(t, cp); got != configHash {
			t.Errorf("%s after the restore holds encryption configuration %s; want the lost cluster's %s", cp, got, configHash)
		}
	}
	h.expectStoredEncrypted(t, manifest, h.writeMarkedSecret(t, old, "secret-after-the-restore"), "key-1")
	sa := kubeFrom(t, oldKubeconfig, tr.Status.Token)
	review, err := sa.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil || review.Status.UserInfo.Username != "system:serviceaccount:default:default" {
		t.Errorf("a ServiceAccount token from before the restore: %v; want it accepted as default/default", err)
	}
	if p := h.plan(manifest); len(p.Steps) != 0 {
		t.Errorf("the plan after the restore: %v; want nothing to do", stepList(p))
	}
	// The new control planes take scheduled snapshots too (reset, next, must keep this one).
	if out, err := h.onHost(leader, "systemctl start "+scripts.SnapshotUnit+".service"); err != nil {
		t.Errorf("a snapshot on the restored %s: %v\n%s", leader, err, out)
	}
	if names := h.snapshotsOn(t, leader); len(names) == 0 {
		t.Errorf("the restored %s holds no snapshot after its snapshot service ran", leader)
	}
}

// kubeFrom returns a client from a kubeconfig file, with its credentials replaced by token when
// token is not empty.
func kubeFrom(t *testing.T, kubeconfig, token string) *kubernetes.Clientset {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		cfg = &rest.Config{Host: cfg.Host, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: cfg.CAData, CAFile: cfg.CAFile}}
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// snapshotStore is the S3-compatible store that scheduled snapshots are uploaded to, under
// Folder in Bucket.
type snapshotStore struct {
	*s3test.Server
	Bucket, Folder string
}

// copyChecked copies the uploaded snapshot name to path, and checks it against the checksum
// uploaded beside it.
func (s *snapshotStore) copyChecked(t *testing.T, name, path string) {
	t.Helper()
	key := s.Folder + "/" + name
	data, err := os.ReadFile(s.Path(s.Bucket, key))
	if err != nil {
		t.Fatalf("the snapshot %s is not in the bucket %s (%v); it holds %v", name, s.Bucket, err, s.Objects(t, s.Bucket, ""))
	}
	sum, err := os.ReadFile(s.Path(s.Bucket, key+".sha256"))
	if err != nil {
		t.Fatalf("no checksum beside %s in the bucket: %v", key, err)
	}
	h := sha256.Sum256(data)
	if want := hex.EncodeToString(h[:]) + "  " + name + "\n"; string(sum) != want {
		t.Fatalf("%s in the bucket does not match its checksum file: %q, want %q", key, sum, want)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// expectSameAs waits until the bucket holds exactly host's snapshots and checksum files, by
// name (the timer may be between taking one and uploading it): uploads and pruning follow the
// host's.
func (s *snapshotStore) expectSameAs(t *testing.T, h *harness, host string) {
	t.Helper()
	err := kube.Wait(context.Background(), "the bucket to hold "+host+"'s snapshots", 90*time.Second, func(context.Context) (bool, string, error) {
		var local []string
		for _, n := range h.snapshotsOn(t, host) {
			local = append(local, s.Folder+"/"+n, s.Folder+"/"+n+".sha256")
		}
		remote := s.Objects(t, s.Bucket, s.Folder+"/"+host+"-")
		return len(local) == 4 && slices.Equal(local, remote), fmt.Sprintf("the host holds %v, the bucket %v", local, remote), nil
	})
	if err != nil {
		t.Error(err)
	}
}

// encryptionConfigHash returns the SHA-256 of host's encryption configuration, which must be
// root-only.
func (h *harness) encryptionConfigHash(t *testing.T, host string) string {
	t.Helper()
	out, err := h.onHost(host, "stat -c '%a %U' /etc/kubernetes/encryption/config.yaml && sha256sum </etc/kubernetes/encryption/config.yaml")
	if err != nil {
		t.Fatalf("%s's encryption configuration: %v\n%s", host, err, out)
	}
	mode, hash, _ := strings.Cut(strings.TrimSpace(out), "\n")
	if mode != "600 root" {
		t.Errorf("%s: the encryption configuration is %q; want mode 600, owned by root", host, mode)
	}
	return strings.Fields(hash)[0]
}

// checkEncryptedPKIBackup checks apply's PKI backup of a cluster whose encryption was enabled
// after the backup was first saved: it holds the eight CA and key files and leader's
// encryption configuration, mode 0600, and the backup from before, which holds no encryption
// configuration, is kept beside it. It returns that one's path.
func (h *harness) checkEncryptedPKIBackup(t *testing.T, leader string) string {
	t.Helper()
	path := filepath.Join(h.dir, "e2e-pki.tar.gz")
	list, err := exec.Command("tar", "-tzf", path).Output()
	if err != nil {
		t.Fatalf("tar -tzf %s: %v", path, err)
	}
	if got := strings.Fields(string(list)); len(got) != 9 || !slices.Contains(got, "encryption/config.yaml") {
		t.Errorf("the PKI backup of the encrypted cluster holds %v; want the eight files and encryption/config.yaml", got)
	}
	conf, err := exec.Command("tar", "-xzOf", path, "encryption/config.yaml").Output()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprintf("%x", sha256.Sum256(conf)), h.encryptionConfigHash(t, leader); got != want {
		t.Errorf("the PKI backup's encryption configuration has SHA-256 %s; %s's has %s", got, leader, want)
	}
	before, _ := filepath.Glob(filepath.Join(h.dir, "e2e-pki-until-*.tar.gz"))
	if len(before) != 1 {
		t.Fatalf("backups kept from before encryption was enabled: %v; want one", before)
	}
	for _, f := range []string{path, before[0]} {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %o; want 0600", f, fi.Mode().Perm())
		}
	}
	if list, err := exec.Command("tar", "-tzf", before[0]).Output(); err != nil || len(strings.Fields(string(list))) != 8 {
		t.Errorf("the backup kept from before encryption holds %q (%v); want the eight files only", list, err)
	}
	return before[0]
}

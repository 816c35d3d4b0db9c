// Package applied is slipway's record of what it has applied, kept where the next run finds it
// again without a local state file: in the cluster, the slipway-state ConfigMap maps each addon
// to the hash of the manifests applied last; on each host, root-only files hold the salted hash
// of the prerequisites script the host last ran and of the scheduled etcd snapshots' set-up.
// The probe reads the records, the phases write them, and planning compares them with the
// hashes of what the manifest renders now.
package applied

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/slipway-dev/slipway/pkg/kube"
)

// StateConfigMap records, in kube-system, the hash of every addon slipway applied, so that a
// re-apply skips what has not changed. It holds no secrets.
const StateConfigMap = "slipway-state"

// PrereqHashFile records on each host the hash of the prerequisites script it last ran (a
// HostRecord), so that a changed manifest (registries, proxy) runs it again and an unchanged one
// does not.
const PrereqHashFile = "/etc/slipway/prerequisites.sha256"

// HostRecordMode is the mode of the files on the hosts that hold a HostRecord (PrereqHashFile,
// and scripts.SnapshotRecord for the scheduled etcd snapshots): root-only, as the scripts they
// hash hold credentials (registry and proxy passwords, the S3 access key).
const HostRecordMode = 0o600

// HostRecord is what a host records of a script it ran that holds credentials: "<salt>:<sha256
// of the salt and the script>". The salt is the host's own (HostRecordSalt of the record it
// holds, so that an unchanged script gives the same record), or new when salt is "": a record
// seen anywhere cannot be checked against guesses of the credentials computed once for every
// host.
func HostRecord(salt string, script []byte) (string, error) {
	if salt == "" {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return "", fmt.Errorf("salting the hash of a script: %w", err)
		}
		salt = hex.EncodeToString(b)
	}
	h := sha256.New()
	h.Write([]byte(salt))
	h.Write([]byte{0})
	h.Write(script)
	return salt + ":" + hex.EncodeToString(h.Sum(nil)), nil
}

// HostRecordSalt is the salt of a HostRecord; "" when there is none (no record, or an unsalted
// one of an older slipway, which is then replaced).
func HostRecordSalt(record string) string {
	salt, hash, ok := strings.Cut(record, ":")
	if !ok || len(salt) != 32 || len(hash) != 64 {
		return ""
	}
	if _, err := hex.DecodeString(salt + hash); err != nil {
		return ""
	}
	return salt
}

// Hash is the content hash recorded for an applied addon or prerequisites script.
func Hash(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write(p)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Addons reads the recorded addon hashes; a cluster without the record has none. The kinds of
// the user addon set (AddonKindsKey) are not a hash and are left out: AddonKinds reads them.
func Addons(ctx context.Context, c *kube.Client) (map[string]string, error) {
	data, err := read(ctx, c)
	if err != nil {
		return nil, err
	}
	out := maps.Clone(data)
	delete(out, AddonKindsKey)
	return out, nil
}

// Record stores the hash of an addon that was applied successfully. Phases record from several
// hosts at once (each control plane's image import, say), so it changes only its own key, with a
// merge patch: no read-modify-write that a concurrent record could invalidate.
func Record(ctx context.Context, c *kube.Client, name, hash string) error {
	cms := c.Kube.CoreV1().ConfigMaps("kube-system")
	patch, err := json.Marshal(map[string]any{"data": map[string]string{name: hash}})
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		_, err = cms.Patch(ctx, StateConfigMap, types.MergePatchType, patch, metav1.PatchOptions{})
		if !apierrors.IsNotFound(err) {
			return recordErr(name, err)
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: StateConfigMap, Namespace: "kube-system",
			Labels: map[string]string{"app.kubernetes.io/managed-by": "slipway"}}, Data: map[string]string{name: hash}}
		_, err = cms.Create(ctx, cm, metav1.CreateOptions{})
		// Another record created the ConfigMap between the patch and the create: patch it.
		if !apierrors.IsAlreadyExists(err) || attempt > 0 {
			return recordErr(name, err)
		}
	}
}

func recordErr(name string, err error) error {
	if err != nil {
		return fmt.Errorf("recording %s in the %s ConfigMap: %w", name, StateConfigMap, err)
	}
	return nil
}

// Package applied is slipway's record of what it has applied, kept where the next run finds it
// again without a local state file: in the cluster, the slipway-state ConfigMap maps each addon
// to the hash of the manifests applied last; on each host, a file holds the hash of the
// prerequisites script the host last ran. The probe reads both records, the phases write them,
// and planning compares them with the hashes of what the manifest renders now.
package applied

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/pkg/kube"
)

// StateConfigMap records, in kube-system, the hash of every addon slipway applied, so that a
// re-apply skips what has not changed. It holds no secrets.
const StateConfigMap = "slipway-state"

// PrereqHashFile records on each host the hash of the prerequisites script it last ran, so
// that a changed manifest (registries, proxy) runs it again and an unchanged one does not.
const PrereqHashFile = "/etc/slipway/prerequisites.sha256"

// Hash is the content hash recorded for an applied addon or prerequisites script.
func Hash(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write(p)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Addons reads the recorded addon hashes; a cluster without the record has none.
func Addons(ctx context.Context, c *kube.Client) (map[string]string, error) {
	cm, err := c.Kube.CoreV1().ConfigMaps("kube-system").Get(ctx, StateConfigMap, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", StateConfigMap, err)
	}
	return cm.Data, nil
}

// Record stores the hash of an addon that was applied successfully.
func Record(ctx context.Context, c *kube.Client, name, hash string) error {
	cms := c.Kube.CoreV1().ConfigMaps("kube-system")
	cm, err := cms.Get(ctx, StateConfigMap, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: StateConfigMap, Namespace: "kube-system",
			Labels: map[string]string{"app.kubernetes.io/managed-by": "slipway"}}}
		cm.Data = map[string]string{name: hash}
		_, err = cms.Create(ctx, cm, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data[name] = hash
	_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
	return err
}

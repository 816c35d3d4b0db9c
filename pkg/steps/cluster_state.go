package steps

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/pkg/kube"
)

// StateConfigMap records, in kube-system, the hash of every addon slipway applied, so that a
// re-apply skips what has not changed. It holds no secrets.
const StateConfigMap = "slipway-state"

// Hash is the content hash recorded for an applied addon.
func Hash(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write(p)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// AppliedAddons reads the recorded addon hashes.
func AppliedAddons(ctx context.Context, c *kube.Client) (map[string]string, error) {
	cm, err := c.Kube.CoreV1().ConfigMaps("kube-system").Get(ctx, StateConfigMap, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", StateConfigMap, err)
	}
	return cm.Data, nil
}

// RecordAddon stores the hash of an addon that was applied successfully.
func RecordAddon(ctx context.Context, c *kube.Client, name, hash string) error {
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

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

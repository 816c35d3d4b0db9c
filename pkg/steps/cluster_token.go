package steps

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/pkg/kube"
)

// joinTokenTTL outlives the slowest join (a control plane with etcd: about a minute) many times
// over, and is short enough that a leaked token is soon useless.
const joinTokenTTL = time.Hour

// CreateJoinToken creates a bootstrap token for kubeadm join through the API, as
// `kubeadm token create` would, and returns it.
func CreateJoinToken(ctx context.Context, c *kube.Client, description string) (string, error) {
	tok, err := NewBootstrapToken()
	if err != nil {
		return "", err
	}
	id, secret, _ := strings.Cut(tok, ".")
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-" + id, Namespace: "kube-system"},
		Type:       corev1.SecretTypeBootstrapToken,
		StringData: map[string]string{
			"token-id":                       id,
			"token-secret":                   secret,
			"description":                    description,
			"expiration":                     time.Now().Add(joinTokenTTL).UTC().Format(time.RFC3339),
			"usage-bootstrap-authentication": "true",
			"usage-bootstrap-signing":        "true",
			"auth-extra-groups":              "system:bootstrappers:kubeadm:default-node-token",
		},
	}
	if _, err := c.Kube.CoreV1().Secrets("kube-system").Create(ctx, s, metav1.CreateOptions{}); err != nil {
		return "", fmt.Errorf("creating a bootstrap token: %w", err)
	}
	// The bootstrap signer must sign cluster-info with the new token before discovery works.
	err = kube.Wait(ctx, "cluster-info to be signed for the new bootstrap token", time.Minute, func(ctx context.Context) (bool, string, error) {
		cm, err := c.Kube.CoreV1().ConfigMaps("kube-public").Get(ctx, "cluster-info", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, "no cluster-info ConfigMap", nil
		}
		if err != nil {
			return false, "", err
		}
		_, ok := cm.Data["jws-kubeconfig-"+id]
		return ok, "not signed yet", nil
	})
	return tok, err
}

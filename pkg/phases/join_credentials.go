package phases

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/kubeadm"
)

// joinTokenTTL outlives the slowest join (a control plane with etcd: about a minute) many times
// over, and is short enough that a leaked token is soon useless.
const joinTokenTTL = time.Hour

// joinCredentials are what every join of one run shares: one bootstrap token and, for control
// planes, one upload of the certificates under one key. Init fills them with what it gave
// kubeadm; otherwise the first join creates them.
type joinCredentials struct {
	mu    sync.Mutex
	token string
	key   string
}

// initialised records the token and certificate key that kubeadm init was given.
func (r *Run) initialised(token, key string) {
	r.join.mu.Lock()
	defer r.join.mu.Unlock()
	r.join.token, r.join.key = token, key
}

// JoinCredentials returns the bootstrap token and, for a control plane, the key of the uploaded
// certificates that the joins of this run share. What init created serves when this run
// initialised the cluster; otherwise the first join creates a token and the first control-plane
// join uploads the certificates again under a new key from the leader (kubeadm deletes them two
// hours after init, and an earlier run's key is not known to this one). Joins that follow reuse
// both, which saves each a token's signing and an upload.
func (r *Run) JoinCredentials(ctx context.Context, c *kube.Client, controlPlane bool) (token, key string, err error) {
	r.join.mu.Lock()
	defer r.join.mu.Unlock()
	if r.join.token == "" {
		t, err := createJoinToken(ctx, c, "slipway: joins of one apply run")
		if err != nil {
			return "", "", err
		}
		r.hide(t)
		r.join.token = t
	}
	if !controlPlane {
		return r.join.token, "", nil
	}
	if r.join.key == "" {
		k, err := NewCertificateKey()
		if err != nil {
			return "", "", err
		}
		r.hide(k)
		leader, err := r.Leader()
		if err != nil {
			return "", "", err
		}
		np, err := r.NodeParams(leader)
		if err != nil {
			return "", "", err
		}
		cfg, err := kubeadm.UploadCertsConfig(r.Manifest(), np, r.KubeletParams(), k)
		if err != nil {
			return "", "", err
		}
		upload := []string{"init", "phase", "upload-certs", "--upload-certs", "--skip-certificate-key-print"}
		if err := kubeadmWithConfig(ctx, leader, uploadConfig, cfg, upload); err != nil {
			return "", "", fmt.Errorf("uploading control-plane certificates from %s: %w", leader.Name, err)
		}
		r.join.key = k
	}
	return r.join.token, r.join.key, nil
}

// createJoinToken creates a bootstrap token for kubeadm join through the API, as
// `kubeadm token create` would, and returns it.
func createJoinToken(ctx context.Context, c *kube.Client, description string) (string, error) {
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

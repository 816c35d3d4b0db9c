package phases

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/pkg/bootstrap"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/kubeadm"
	"github.com/slipway-dev/slipway/pkg/plan"
)

// The join phases add a host to the cluster with kubeadm join, using the run's shared
// bootstrap token (and, for control planes, its certificate key), wait until the host's Node
// registers, and give the Node its manifest metadata. Control planes join one at a time
// (stacked etcd grows one member at a time); static workers join at once.
var (
	_ = register(Phase{
		Name:  plan.StepJoinControlPlane,
		Short: "join a control plane with kubeadm join (stacked etcd member included)",
		Run:   func(ctx context.Context, r *Run, host string) error { return join(ctx, r, host, true) },
	})
	_ = register(Phase{
		Name:  plan.StepJoinWorker,
		Short: "join a static worker with kubeadm join",
		Run:   func(ctx context.Context, r *Run, host string) error { return join(ctx, r, host, false) },
	})
)

// joinRun is what a join reads of a run.
type joinRun interface {
	nodeMetadataRun
	manifest
	encryptionRun
	NodeParams(n Node) (kubeadm.NodeParams, error)
	JoinCredentials(ctx context.Context, c *kube.Client, controlPlane bool) (token, key string, err error)
}

func join(ctx context.Context, r joinRun, host string, controlPlane bool) error {
	n, c, err := nodeAndKube(ctx, r, host)
	if err != nil {
		return err
	}
	token, key, err := r.JoinCredentials(ctx, c, controlPlane)
	if err != nil {
		return err
	}
	hash, err := bootstrap.CACertHash(c.Config.CAData)
	if err != nil {
		return err
	}
	np, err := r.NodeParams(n)
	if err != nil {
		return err
	}
	if controlPlane {
		// Its API server starts with kubeadm's ClusterConfiguration, which names the encryption
		// configuration once the cluster encrypts Secrets: the file must be there first.
		if err := ensureEncryption(ctx, r, n, startJoin); err != nil {
			return err
		}
	}
	jp := kubeadm.JoinParams{Token: token, CACertHashes: []string{hash}, ControlPlane: controlPlane, CertificateKey: key}
	cfg, err := kubeadm.JoinConfig(r.Manifest(), np, jp)
	if err != nil {
		return err
	}
	if err := kubeadmWithConfig(ctx, n, joinConfig, cfg, []string{"join"}); err != nil {
		return err
	}
	if err := waitNodeRegistered(ctx, c, n.Name); err != nil {
		return err
	}
	return applyNodeMetadata(ctx, r, host)
}

// waitNodeRegistered waits until the kubelet of name has registered its Node.
func waitNodeRegistered(ctx context.Context, c *kube.Client, name string) error {
	return kube.Wait(ctx, fmt.Sprintf("node %s to register", name), 3*time.Minute, func(ctx context.Context) (bool, string, error) {
		_, err := c.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, "not registered", nil
		}
		return err == nil, "", err
	})
}

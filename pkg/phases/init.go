package phases

import (
	"context"
	"time"

	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/kubeadm"
	"github.com/slipway-dev/slipway/pkg/plan"
)

// The kubeadm-init phase creates the cluster on the leader: it renders the init configuration
// with a new bootstrap token and certificate key, runs kubeadm init with the certificates
// uploaded, and waits for the API. The joins of the same run use that token and key.
var _ = register(Phase{
	Name:  plan.StepInit,
	Short: "initialise the cluster on the leader with kubeadm init",
	Run:   func(ctx context.Context, r *Run, host string) error { return initCluster(ctx, r, host) },
})

// initRun is what kubeadm init reads of a run.
type initRun interface {
	nodes
	manifest
	NodeParams(n Node) (kubeadm.NodeParams, error)
	KubeletParams() kubeadm.KubeletParams
	initialised(token, key string)
	Reconnect()
	WaitAPI(ctx context.Context, timeout time.Duration) (*kube.Client, error)
}

func initCluster(ctx context.Context, r initRun, host string) error {
	n, err := r.Node(host)
	if err != nil {
		return err
	}
	token, err := NewBootstrapToken()
	if err != nil {
		return err
	}
	key, err := NewCertificateKey()
	if err != nil {
		return err
	}
	np, err := r.NodeParams(n)
	if err != nil {
		return err
	}
	cfg, err := kubeadm.InitConfig(r.Manifest(), np, r.KubeletParams(), kubeadm.InitSecrets{Token: token, TokenTTL: joinTokenTTL, CertificateKey: key})
	if err != nil {
		return err
	}
	if err := writeKubeadmFiles(ctx, n, initConfig, cfg); err != nil {
		return err
	}
	if err := n.SSH.Command(ctx, "kubeadm", "init", "--config", initConfig, "--upload-certs").Run(); err != nil {
		return err
	}
	r.initialised(token, key)
	r.Reconnect()
	_, err = r.WaitAPI(ctx, apiTimeout)
	return err
}

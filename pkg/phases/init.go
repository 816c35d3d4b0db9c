package phases

import (
	"context"
	"time"

	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/kubeadm"
	"github.com/slipway-dev/slipway/pkg/plan"
)

// The kubeadm-init phase creates the cluster on the leader: with encryption.enabled it first
// puts a new encryption configuration there (see ensureEncryption), then it renders the init
// configuration with a new bootstrap token and certificate key, runs kubeadm init with the certificates
// uploaded (and neither secret printed), and waits for the API. The joins of the same run use
// that token and key.
var _ = register(Phase{
	Name:  plan.StepInit,
	Short: "initialise the cluster on the leader with kubeadm init",
	Run:   func(ctx context.Context, r *Run, host string) error { return initCluster(ctx, r, host) },
})

// initConfigRun is what rendering the init configuration reads of a run.
type initConfigRun interface {
	manifest
	NodeParams(n Node) (kubeadm.NodeParams, error)
	KubeletParams() kubeadm.KubeletParams
	hide(values ...string)
	restoreSource() *Restore
}

// initRun is what kubeadm init reads of a run.
type initRun interface {
	nodes
	initConfigRun
	encryptionRun
	initialised(token, key string)
	Reconnect()
	WaitAPI(ctx context.Context, timeout time.Duration) (*kube.Client, error)
}

// newInitConfig renders the leader n's init configuration with a new bootstrap token and
// certificate key, which it registers for hiding.
func newInitConfig(r initConfigRun, n Node) (cfg []byte, token, key string, err error) {
	if token, err = NewBootstrapToken(); err != nil {
		return nil, "", "", err
	}
	if key, err = NewCertificateKey(); err != nil {
		return nil, "", "", err
	}
	r.hide(token, key)
	np, err := r.NodeParams(n)
	if err != nil {
		return nil, "", "", err
	}
	if r.restoreSource() != nil {
		// restore-etcd put the member's data there: kubeadm's etcd starts on it.
		np.IgnorePreflightErrors = append(np.IgnorePreflightErrors, restoredEtcdPreflight)
	}
	cfg, err = kubeadm.InitConfig(r.Manifest(), np, r.KubeletParams(), kubeadm.InitSecrets{Token: token, TokenTTL: joinTokenTTL, CertificateKey: key})
	return cfg, token, key, err
}

func initCluster(ctx context.Context, r initRun, host string) error {
	n, err := r.Node(host)
	if err != nil {
		return err
	}
	// The API server starts with the encryption configuration, so it must be there first.
	if err := ensureEncryption(ctx, r, n, startInit); err != nil {
		return err
	}
	cfg, token, key, err := newInitConfig(r, n)
	if err != nil {
		return err
	}
	if err := kubeadmWithConfig(ctx, n, initConfig, cfg, []string{"init", "--upload-certs", "--skip-token-print", "--skip-certificate-key-print"}); err != nil {
		return err
	}
	r.initialised(token, key)
	r.Reconnect()
	_, err = r.WaitAPI(ctx, apiTimeout)
	return err
}

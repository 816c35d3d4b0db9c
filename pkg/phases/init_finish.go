package phases

import (
	"context"
	"fmt"
	"time"

	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/plan"
)

// The kubeadm-init-finish phase completes an init that was interrupted: it waits for the API
// that the leader's kubelet brings back, then re-runs kubeadm's idempotent post-init phases
// with the init configuration rendered again, and gives the leader's Node its manifest
// metadata. The configuration gets a new bootstrap token and certificate key (the file the
// interrupted init used is gone with its secrets), which the joins of this run then use.
var _ = register(Phase{
	Name:  plan.StepInitFinish,
	Short: "complete an interrupted kubeadm init on the leader",
	Run:   func(ctx context.Context, r *Run, host string) error { return finishInit(ctx, r, host) },
})

// finishInitRun is what finishing an init reads of a run.
type finishInitRun interface {
	nodeMetadataRun
	initConfigRun
	encryptionRun
	initialised(token, key string)
	WaitAPI(ctx context.Context, timeout time.Duration) (*kube.Client, error)
}

func finishInit(ctx context.Context, r finishInitRun, host string) error {
	if _, err := r.WaitAPI(ctx, apiTimeout); err != nil {
		return fmt.Errorf("%w; if the leader never comes up, run `slipway reset` and apply again", err)
	}
	n, err := r.Node(host)
	if err != nil {
		return err
	}
	if err := ensureEncryption(ctx, r, n, startFinish); err != nil {
		return err
	}
	cfg, token, key, err := newInitConfig(r, n)
	if err != nil {
		return err
	}
	var runs [][]string
	for _, phase := range [][]string{
		{"upload-config", "all"}, {"upload-certs", "--upload-certs", "--skip-certificate-key-print"}, {"mark-control-plane"},
		{"bootstrap-token", "--skip-token-print"}, {"kubelet-finalize", "all"}, {"addon", "all"},
	} {
		runs = append(runs, append([]string{"init", "phase"}, phase...))
	}
	if err := kubeadmWithConfig(ctx, n, initConfig, cfg, runs...); err != nil {
		return err
	}
	r.initialised(token, key)
	// mark-control-plane waited for the leader's Node, so it exists now. Labels and annotations
	// are not kubeadm's business (a kubelet may not set node-role labels on itself).
	return applyNodeMetadata(ctx, r, host)
}

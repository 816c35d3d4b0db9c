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
// with the configuration init used, and gives the leader's Node its manifest metadata.
var _ = register(Phase{
	Name:  plan.StepInitFinish,
	Short: "complete an interrupted kubeadm init on the leader",
	Run:   func(ctx context.Context, r *Run, host string) error { return finishInit(ctx, r, host) },
})

// finishInitRun is what finishing an init reads of a run.
type finishInitRun interface {
	nodeMetadataRun
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
	for _, phase := range [][]string{
		{"upload-config", "all"}, {"upload-certs", "--upload-certs"}, {"mark-control-plane"},
		{"bootstrap-token"}, {"kubelet-finalize", "all"}, {"addon", "all"},
	} {
		args := append([]string{"init", "phase"}, phase...)
		args = append(args, "--config", initConfig)
		if err := n.SSH.Command(ctx, "kubeadm", args...).Run(); err != nil {
			return err
		}
	}
	// mark-control-plane waited for the leader's Node, so it exists now. Labels and annotations
	// are not kubeadm's business (a kubelet may not set node-role labels on itself).
	return applyNodeMetadata(ctx, r, host)
}

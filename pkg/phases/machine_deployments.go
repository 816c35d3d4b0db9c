package phases

import (
	"context"
	"fmt"

	"github.com/slipway-dev/slipway/pkg/applied"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/plan"
)

// kubeletUpgradeManager is the field manager of the kubelet version that
// --upgrade-machine-deployments sets on MachineDeployments the manifest does not declare.
const kubeletUpgradeManager = "slipway-kubelet-upgrade"

// The machine-deployments phase server-side applies the manifest's worker pools, then, under
// a field manager of its own, the kubelet-only partial MachineDeployments that raise the
// version of pools the manifest does not declare (--upgrade-machine-deployments), so every
// other field of those pools stays with whoever owns it. It records the hash of both.
var _ = register(Phase{
	Name:  plan.StepMachineDeployment,
	Short: "apply the worker pools as MachineDeployments",
	Run:   func(ctx context.Context, r *Run, _ string) error { return applyMachineDeployments(ctx, r) },
})

// machineDeploymentsRun is what applying the worker pools reads of a run.
type machineDeploymentsRun interface {
	api
	logger
	Rendered() Rendered
}

func applyMachineDeployments(ctx context.Context, r machineDeploymentsRun) error {
	mds, bumps := r.Rendered().MachineDeployments, r.Rendered().KubeletBumps
	c, err := r.Kube(ctx)
	if err != nil {
		return err
	}
	objs, err := kube.Decode(mds)
	if err != nil {
		return fmt.Errorf("machine-deployments manifests: %w", err)
	}
	partial, err := kube.Decode(bumps)
	if err != nil {
		return fmt.Errorf("kubelet upgrades of MachineDeployments: %w", err)
	}
	if err := c.Apply(ctx, objs); err != nil {
		return err
	}
	if err := c.ApplyAs(ctx, kubeletUpgradeManager, partial); err != nil {
		return err
	}
	r.Logf("", "applied %d MachineDeployments, raised the kubelet version of %d more", len(objs), len(partial))
	return applied.Record(ctx, c, "machine-deployments", applied.Hash(mds, bumps))
}

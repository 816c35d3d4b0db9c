package phases

import (
	"context"
	"fmt"

	"github.com/slipway-dev/slipway/pkg/applied"
	"github.com/slipway-dev/slipway/pkg/plan"
)

// The adopt-cni phase takes over a CNI that another tool installed in a running cluster: it
// records the manifests slipway renders for it as applied (package applied) and applies
// nothing, so the CNI's pods keep running as they are. Slipway applies its own manifests when
// the rendered ones next change (the manifest's network settings, or a slipway upgrade).
var _ = register(Phase{
	Name:  plan.StepAdoptCNI,
	Short: "record a CNI another tool installed as applied, leaving its pods as they are",
	Run:   func(ctx context.Context, r *Run, _ string) error { return adoptCNI(ctx, r) },
})

// adoptCNIRun is what adopting the CNI reads of a run.
type adoptCNIRun interface {
	api
	logger
	Rendered() Rendered
}

func adoptCNI(ctx context.Context, r adoptCNIRun) error {
	manifests := r.Rendered().CNI
	if len(manifests) == 0 {
		return fmt.Errorf("no CNI manifests were rendered to adopt")
	}
	c, err := r.Kube(ctx)
	if err != nil {
		return err
	}
	if err := applied.Record(ctx, c, "cni", applied.Hash(manifests)); err != nil {
		return err
	}
	r.Logf("", "recorded the running CNI as applied; its objects were left as they are")
	return nil
}

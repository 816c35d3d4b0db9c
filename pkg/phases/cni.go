package phases

import (
	"context"
	"fmt"

	"github.com/slipway-dev/slipway/pkg/applied"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/plan"
)

// The cni phase server-side applies the CNI's manifests that the manifest rendered and records
// their hash (package applied), so that the next apply skips them while they are unchanged.
var _ = register(Phase{
	Name:  plan.StepCNI,
	Short: "apply the CNI's manifests",
	Run:   func(ctx context.Context, r *Run, _ string) error { return applyCNI(ctx, r) },
})

// cniRun is what applying the CNI reads of a run.
type cniRun interface {
	api
	logger
	Rendered() Rendered
}

func applyCNI(ctx context.Context, r cniRun) error {
	const name = "cni"
	manifests := r.Rendered().CNI
	c, err := r.Kube(ctx)
	if err != nil {
		return err
	}
	objs, err := kube.Decode(manifests)
	if err != nil {
		return fmt.Errorf("%s manifests: %w", name, err)
	}
	if err := c.Apply(ctx, objs); err != nil {
		return err
	}
	r.Logf("", "applied %d %s objects", len(objs), name)
	return applied.Record(ctx, c, name, applied.Hash(manifests))
}

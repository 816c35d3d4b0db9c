package cluster

import (
	"context"
	"io"

	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/phases"
	"github.com/slipway-dev/slipway/pkg/pools"
)

// Result is what apply -o json prints after a run, as a second document after the plan.
type Result struct {
	// Pools are the manifest's worker pools as the run left them.
	Pools []pools.Pool `json:"pools"`
}

// printPools prints the Result of a run: the manifest's worker pools in namespace, read once
// through kubeOf (access.Cluster.Kube).
func printPools(ctx context.Context, kubeOf func(context.Context) (*kube.Client, error), namespace string, rendered phases.Rendered, out io.Writer) error {
	names, err := phases.PoolNames(rendered)
	if err != nil {
		return err
	}
	res := Result{Pools: []pools.Pool{}}
	if len(names) > 0 {
		c, err := kubeOf(ctx)
		if err != nil {
			return err
		}
		if res.Pools, err = pools.Status(ctx, c, namespace, names); err != nil {
			return err
		}
	}
	return printJSON(out, res)
}

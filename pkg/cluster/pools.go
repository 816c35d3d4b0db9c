package cluster

import (
	"context"
	"io"

	"github.com/slipway-dev/slipway/pkg/access"
	"github.com/slipway-dev/slipway/pkg/phases"
	"github.com/slipway-dev/slipway/pkg/pools"
	"github.com/slipway-dev/slipway/pkg/workers"
)

// Result is what apply -o json prints after a run, as a second document after the plan.
type Result struct {
	// Pools are the manifest's worker pools as the run left them.
	Pools []pools.Pool `json:"pools"`
}

// printPools prints the Result of a run: the manifest's worker pools, read once.
func printPools(ctx context.Context, api *access.Cluster, rendered phases.Rendered, out io.Writer) error {
	names, err := phases.PoolNames(rendered)
	if err != nil {
		return err
	}
	res := Result{Pools: []pools.Pool{}}
	if len(names) > 0 {
		c, err := api.Kube(ctx)
		if err != nil {
			return err
		}
		if res.Pools, err = pools.Status(ctx, c, workers.Namespace, names); err != nil {
			return err
		}
	}
	return printJSON(out, res)
}

package probe

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/plan"
	"github.com/slipway-dev/slipway/pkg/pools"
	"github.com/slipway-dev/slipway/pkg/workers"
)

// PoolStates reads every MachineDeployment of the workers' namespace as its status reports it,
// with the object itself for the plan to compare; none when the cluster has no machine-controller
// CRDs yet.
func PoolStates(ctx context.Context, c *kube.Client) (map[string]plan.PoolState, error) {
	out := map[string]plan.PoolState{}
	gvr := v1alpha1.GroupVersion.WithResource("machinedeployments")
	list, err := c.Dynamic.Resource(gvr).Namespace(workers.Namespace).List(ctx, metav1.ListOptions{})
	switch {
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		return out, nil
	case err != nil:
		return nil, fmt.Errorf("listing MachineDeployments in %s: %w", workers.Namespace, err)
	}
	for _, u := range list.Items {
		var md v1alpha1.MachineDeployment
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &md); err != nil {
			return nil, fmt.Errorf("reading MachineDeployment %s: %w", u.GetName(), err)
		}
		obj, err := json.Marshal(u.Object)
		if err != nil {
			return nil, fmt.Errorf("reading MachineDeployment %s: %w", u.GetName(), err)
		}
		out[md.Name] = plan.PoolState{Replicas: pools.Replicas(&md), Ready: md.Status.ReadyReplicas, Settled: pools.Settled(&md), Object: obj}
	}
	return out, nil
}

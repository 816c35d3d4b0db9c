package phases

import (
	"context"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/pkg/inventory"
	"github.com/slipway-dev/slipway/pkg/kube"
	"github.com/slipway-dev/slipway/pkg/plan"
)

// The wait-nodes-ready phase waits until every host of the manifest is a Ready Node, and says
// which are not (unregistered, or NotReady with the kubelet's message) when it gives up.
var _ = register(Phase{
	Name:  plan.StepWaitReady,
	Short: "wait until every host of the manifest is a Ready Node",
	Run:   func(ctx context.Context, r *Run, _ string) error { return waitNodesReady(ctx, r) },
})

// waitNodesReadyRun is what waiting for the nodes reads of a run.
type waitNodesReadyRun interface {
	api
	Nodes() []*inventory.Node
}

func waitNodesReady(ctx context.Context, r waitNodesReadyRun) error {
	c, err := r.Kube(ctx)
	if err != nil {
		return err
	}
	return kube.Wait(ctx, "every node to be Ready", 10*time.Minute, func(ctx context.Context) (bool, string, error) {
		var waiting []string
		for _, n := range r.Nodes() {
			node, err := c.Kube.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				waiting = append(waiting, n.Name+" (not registered)")
			case err != nil:
				return false, "", err
			case !kube.NodeReady(node):
				waiting = append(waiting, n.Name+" (NotReady: "+kube.ReadyCondition(node).Message+")")
			}
		}
		sort.Strings(waiting)
		return len(waiting) == 0, strings.Join(waiting, ", "), nil
	})
}

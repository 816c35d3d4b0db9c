package phases

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/pkg/drain"
	"github.com/slipway-dev/slipway/pkg/kube"
)

// drainTimeout bounds a node's drain, PodDisruptionBudgets that block evictions included.
const drainTimeout = 10 * time.Minute

// cordonAndDrain cordons the node and evicts its pods with the drain the machine-controller uses
// too (package drain): through the Eviction API, so PodDisruptionBudgets hold (a refused
// eviction is retried until the drain timeout), following the per-pod drain rules (skip, order,
// wait-for-completion) the README documents. Pods with emptyDir volumes are evicted; a pod that
// no controller owns fails the drain, naming it, as nothing would recreate it elsewhere.
func cordonAndDrain(ctx context.Context, c *kube.Client, name string) error {
	if _, err := c.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return err
	}
	return drainer(c).Drain(ctx, name)
}

func uncordon(ctx context.Context, c *kube.Client, name string) error {
	node, err := c.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	return drainer(c).Cordon(ctx, node, false)
}

func drainer(c *kube.Client) *drain.Drainer {
	return drain.New(c.Kube, drain.Options{DeleteEmptyDirData: true, Timeout: drainTimeout})
}

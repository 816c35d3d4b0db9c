package phases

import (
	"context"
	"fmt"
	"io"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubectl/pkg/drain"

	"github.com/slipway-dev/slipway/pkg/kube"
)

// drainTimeout bounds a node's drain, PodDisruptionBudgets that block evictions included.
const drainTimeout = 10 * time.Minute

// cordonAndDrain evicts the node's pods through the Eviction API, which honours
// PodDisruptionBudgets: a blocked eviction is retried until the drain timeout.
func cordonAndDrain(ctx context.Context, c *kube.Client, name string) error {
	node, err := c.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	d := drainer(ctx, c)
	if err := drain.RunCordonOrUncordon(d, node, true); err != nil {
		return fmt.Errorf("cordoning %s: %w", name, err)
	}
	if err := drain.RunNodeDrain(d, name); err != nil {
		return fmt.Errorf("draining %s: %w", name, err)
	}
	return nil
}

func uncordon(ctx context.Context, c *kube.Client, name string) error {
	node, err := c.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	return drain.RunCordonOrUncordon(drainer(ctx, c), node, false)
}

func drainer(ctx context.Context, c *kube.Client) *drain.Helper {
	return &drain.Helper{
		Ctx:                 ctx,
		Client:              c.Kube,
		Force:               false,
		GracePeriodSeconds:  -1,
		IgnoreAllDaemonSets: true,
		DeleteEmptyDirData:  true,
		Timeout:             drainTimeout,
		Out:                 io.Discard,
		ErrOut:              io.Discard,
	}
}

package machine

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/controller/internal/conditions"
	"github.com/slipway-dev/slipway/pkg/drain"
)

// newDrainer drains with pkg/drain, one pass per reconcile: it evicts what it can and reports
// what is left, instead of blocking a worker until the Node is empty. Evictions go through the
// Eviction API, so PodDisruptionBudgets are honoured; DaemonSet and mirror pods are skipped, and
// pods without a controller or with emptyDir volumes are evicted too: the machine is going away.
func newDrainer(r *Reconciler) *drain.Drainer {
	return drain.New(r.kube, drain.Options{EvictUnmanaged: true, DeleteEmptyDirData: true})
}

// skipEviction says why evicting from this node is pointless or unwanted, or "".
func skipEviction(node *corev1.Node) string {
	if _, ok := node.Annotations[v1alpha1.SkipEvictionAnnotation]; ok {
		return "the node is annotated " + v1alpha1.SkipEvictionAnnotation
	}
	if c := nodeCondition(node, corev1.NodeReady); c == nil || c.Status != corev1.ConditionTrue {
		return "the node is not Ready, so no kubelet would stop its pods"
	}
	return ""
}

// drainNode runs one drain pass for m's node and keeps the Drained condition; its transition to
// False marks when the drain started. It reports whether the machine may go on, and after how
// long to look again if not. timeout 0 means no timeout.
func (r *Reconciler) drainNode(ctx context.Context, m *v1alpha1.Machine, node *corev1.Node, timeout time.Duration) (bool, time.Duration, error) {
	d := newDrainer(r)
	if err := d.Cordon(ctx, node, true); err != nil {
		return false, 0, err
	}
	if conditions.IsTrue(m.Status.Conditions, v1alpha1.MachineDrained) {
		return true, 0, nil
	}
	if why := skipEviction(node); why != "" {
		conditions.Set(&m.Status.Conditions, m.Generation, v1alpha1.MachineDrained, metav1.ConditionTrue, "EvictionSkipped", why)
		r.recorder.Eventf(m, corev1.EventTypeNormal, "EvictionSkipped", "Not draining node %s: %s", node.Name, why)
		return true, 0, nil
	}
	c := conditions.Find(m.Status.Conditions, v1alpha1.MachineDrained)
	if c != nil && timeout > 0 && time.Since(c.LastTransitionTime.Time) > timeout {
		msg := fmt.Sprintf("the drain did not finish within %s; going on without it", timeout)
		conditions.Set(&m.Status.Conditions, m.Generation, v1alpha1.MachineDrained, metav1.ConditionTrue, "DrainTimeout", msg)
		r.recorder.Eventf(m, corev1.EventTypeWarning, "DrainTimeout", "Node %s: %s", node.Name, msg)
		return true, 0, nil
	}
	res, err := d.Pass(ctx, node.Name)
	if err != nil {
		// Shown on the Machine: an invalid drain annotation on a pod holds the drain until it is
		// fixed or the timeout passes.
		conditions.Set(&m.Status.Conditions, m.Generation, v1alpha1.MachineDrained, metav1.ConditionFalse, "DrainFailed", err.Error())
		return false, 0, err
	}
	if res.Done {
		conditions.Set(&m.Status.Conditions, m.Generation, v1alpha1.MachineDrained, metav1.ConditionTrue, "Drained", "")
		if c != nil {
			// Only a drain that had to wait (and said Draining) gets an event for its end: a Node
			// that was empty on the first pass is the common case, and events cost requests.
			r.recorder.Eventf(m, corev1.EventTypeNormal, "Drained", "Drained node %s", node.Name)
		}
		return true, 0, nil
	}
	if c == nil {
		r.recorder.Eventf(m, corev1.EventTypeNormal, "Draining", "Draining node %s", node.Name)
	}
	conditions.Set(&m.Status.Conditions, m.Generation, v1alpha1.MachineDrained, metav1.ConditionFalse, "Draining", res.String())
	return false, r.opts.PollInterval, nil
}

package controller

import (
	"context"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kubectl/pkg/drain"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
)

// drainResult says where a drain stands after one pass.
type drainResult struct {
	done    bool
	blocked int // evictions refused, typically by a PodDisruptionBudget
	waiting int // pods evicted but not gone yet
}

// drainer cordons and drains Nodes with kubectl's drain library, one pass per reconcile: it
// evicts what it can and reports what is left, instead of blocking a worker until the Node is
// empty. Evictions go through the Eviction API, so PodDisruptionBudgets are honoured; DaemonSet
// and mirror pods are skipped, as `kubectl drain --ignore-daemonsets` does.
type drainer struct {
	helper          *drain.Helper
	evictionVersion func() (schema.GroupVersion, error)
}

func newDrainer(ctx context.Context, r *machineReconciler) *drainer {
	return &drainer{evictionVersion: r.evictionVersion, helper: &drain.Helper{
		Ctx:                 ctx,
		Client:              r.kube,
		Force:               true, // pods without a controller are evicted too: the machine is going away
		GracePeriodSeconds:  -1,
		IgnoreAllDaemonSets: true,
		DeleteEmptyDirData:  true,
		Out:                 io.Discard,
		ErrOut:              io.Discard,
	}}
}

func (d *drainer) cordon(ctx context.Context, node *corev1.Node, unschedulable bool) error {
	h := drain.NewCordonHelper(node)
	if !h.UpdateIfRequired(unschedulable) {
		return nil
	}
	err, patchErr := h.PatchOrReplaceWithContext(ctx, d.helper.Client, false)
	if err == nil {
		err = patchErr
	}
	if err != nil {
		return fmt.Errorf("setting unschedulable=%t on node %s: %w", unschedulable, node.Name, err)
	}
	node.Spec.Unschedulable = unschedulable
	return nil
}

// pass evicts every pod that is still running on the node and has not been evicted yet.
func (d *drainer) pass(node *corev1.Node) (drainResult, error) {
	list, errs := d.helper.GetPodsForDeletion(node.Name)
	if len(errs) > 0 {
		return drainResult{}, fmt.Errorf("listing pods to evict from node %s: %w", node.Name, errorsJoin(errs...))
	}
	pods := list.Pods()
	if len(pods) == 0 {
		return drainResult{done: true}, nil
	}
	gv, err := d.evictionVersion()
	if err != nil {
		return drainResult{}, fmt.Errorf("checking eviction support: %w", err)
	}
	var res drainResult
	var failed []error
	for _, p := range pods {
		if !p.DeletionTimestamp.IsZero() {
			res.waiting++
			continue
		}
		err := d.helper.EvictPod(p, gv)
		switch {
		case err == nil || apierrors.IsNotFound(err):
			res.waiting++
		case apierrors.IsTooManyRequests(err):
			res.blocked++
		default:
			failed = append(failed, fmt.Errorf("evicting pod %s/%s: %w", p.Namespace, p.Name, err))
		}
	}
	return res, errorsJoin(failed...)
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
func (r *machineReconciler) drainNode(ctx context.Context, m *v1alpha1.Machine, node *corev1.Node, timeout time.Duration) (bool, time.Duration, error) {
	d := newDrainer(ctx, r)
	if err := d.cordon(ctx, node, true); err != nil {
		return false, 0, err
	}
	if condTrue(m.Status.Conditions, v1alpha1.MachineDrained) {
		return true, 0, nil
	}
	if why := skipEviction(node); why != "" {
		setCondition(&m.Status.Conditions, m.Generation, v1alpha1.MachineDrained, metav1.ConditionTrue, "EvictionSkipped", why)
		r.recorder.Eventf(m, corev1.EventTypeNormal, "EvictionSkipped", "Not draining node %s: %s", node.Name, why)
		return true, 0, nil
	}
	c := findCond(m.Status.Conditions, v1alpha1.MachineDrained)
	if c != nil && timeout > 0 && time.Since(c.LastTransitionTime.Time) > timeout {
		msg := fmt.Sprintf("the drain did not finish within %s; going on without it", timeout)
		setCondition(&m.Status.Conditions, m.Generation, v1alpha1.MachineDrained, metav1.ConditionTrue, "DrainTimeout", msg)
		r.recorder.Eventf(m, corev1.EventTypeWarning, "DrainTimeout", "Node %s: %s", node.Name, msg)
		return true, 0, nil
	}
	res, err := d.pass(node)
	if err != nil {
		return false, 0, err
	}
	if res.done {
		setCondition(&m.Status.Conditions, m.Generation, v1alpha1.MachineDrained, metav1.ConditionTrue, "Drained", "")
		r.recorder.Eventf(m, corev1.EventTypeNormal, "Drained", "Drained node %s", node.Name)
		return true, 0, nil
	}
	if c == nil {
		r.recorder.Eventf(m, corev1.EventTypeNormal, "Draining", "Draining node %s", node.Name)
	}
	msg := fmt.Sprintf("%d pods terminating, %d evictions refused (PodDisruptionBudget)", res.waiting, res.blocked)
	setCondition(&m.Status.Conditions, m.Generation, v1alpha1.MachineDrained, metav1.ConditionFalse, "Draining", msg)
	return false, r.opts.PollInterval, nil
}

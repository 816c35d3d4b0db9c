package machine

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/controller/internal/conditions"
	"github.com/slipway-dev/slipway/pkg/controller/internal/leftovers"
	"github.com/slipway-dev/slipway/pkg/controller/internal/nodelink"
)

// deletionPolicy returns the Machine's deletion policy; unknown values (which admission rejects)
// fall back to graceful, the safe choice.
func deletionPolicy(m *v1alpha1.Machine) string {
	switch p := m.Annotations[v1alpha1.DeletionPolicyAnnotation]; p {
	case v1alpha1.DeletionPolicyUnsafe, v1alpha1.DeletionPolicyForced:
		return p
	}
	return v1alpha1.DeletionPolicyGraceful
}

// reconcileDelete releases a Machine: drain (graceful only), delete the server and wait until it
// is gone, delete the Node, delete the bootstrap token, then remove the finalizer.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *machineScope) (ctrl.Result, error) {
	m := s.m
	if !controllerutil.ContainsFinalizer(m, v1alpha1.MachineFinalizer) {
		return ctrl.Result{}, nil
	}
	policy := deletionPolicy(m)
	node, err := r.ownedNode(ctx, m)
	if err != nil {
		return ctrl.Result{}, err
	}
	if node != nil && policy == v1alpha1.DeletionPolicyGraceful {
		done, after, err := r.drainNode(ctx, m, node, r.opts.DrainTimeout)
		if err != nil || !done {
			return ctrl.Result{RequeueAfter: after}, err
		}
	}
	gone, err := r.cloud.Delete(ctx, m, r.updater(m))
	if !gone || err != nil {
		stuckFor := time.Since(m.DeletionTimestamp.Time)
		if policy != v1alpha1.DeletionPolicyForced || stuckFor < r.opts.ForcedDeleteTimeout {
			if err != nil {
				return ctrl.Result{}, fmt.Errorf("deleting server of machine %s/%s: %w", m.Namespace, m.Name, err)
			}
			conditions.Set(&m.Status.Conditions, m.Generation, v1alpha1.MachineInstanceReady, metav1.ConditionFalse, "Deleting",
				"waiting for the cloud to delete the server")
			return ctrl.Result{RequeueAfter: r.opts.PollInterval}, nil
		}
		// Forced: let the Machine go and leave the server to the orphan sweep, with the record
		// of everything the provider allocated for it.
		if err := leftovers.Record(ctx, r.client, r.reader, r.opts.LeftoverNamespace, m); err != nil {
			return ctrl.Result{}, err
		}
		r.recorder.Eventf(m, corev1.EventTypeWarning, "ServerLeftBehind",
			"Forced deletion: the cloud did not delete the server within %s; recorded it for the orphan sweep", r.opts.ForcedDeleteTimeout)
	}
	if node != nil {
		if err := r.client.Delete(ctx, node, client.Preconditions{UID: &node.UID}); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("deleting node %s of machine %s/%s: %w", node.Name, m.Namespace, m.Name, err)
		}
	}
	// A Machine whose Node joined had its token deleted then.
	if nodelink.Of(m) == nil {
		if err := r.deleteToken(ctx, m); err != nil {
			return ctrl.Result{}, err
		}
	}
	// The Machine is released: only the finalizer holds it. Its status is not written again: the
	// object is about to vanish, a write would cost a request per Machine, and the Deleted event
	// below says it. Should the finalizer patch fail, the next reconcile starts from here.
	m.Status.Phase = v1alpha1.MachinePhaseDeleted
	s.orig = m.DeepCopy()
	orig := m.DeepCopy()
	controllerutil.RemoveFinalizer(m, v1alpha1.MachineFinalizer)
	// A Machine adopted from Kubermatic's controller also carries its finalizers for the Node
	// and the floating IP; both were released above, and nothing else would remove them.
	controllerutil.RemoveFinalizer(m, v1alpha1.KubermaticNodeFinalizer)
	controllerutil.RemoveFinalizer(m, v1alpha1.KubermaticFloatingIPFinalizer)
	if err := r.client.Patch(ctx, m, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, fmt.Errorf("removing finalizer of machine %s/%s: %w", m.Namespace, m.Name, err)
	}
	r.forget(m)
	deprovisioningSeconds.Observe(time.Since(m.DeletionTimestamp.Time).Seconds())
	r.recorder.Eventf(m, corev1.EventTypeNormal, string(v1alpha1.MachinePhaseDeleted), "Machine released (policy %s)", policy)
	return ctrl.Result{}, nil
}

// forget drops what this process remembers of a Machine that has been released.
func (r *Reconciler) forget(m *v1alpha1.Machine) {
	r.tokens.Delete(m.UID)
	r.confirmed.Delete(m.UID)
	r.refusals.Delete(m.UID)
}

package machine

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/controller/internal/conditions"
)

// reconcileMaintenance drains the Node of a Machine in maintenance or with a requested (still
// abortable) deletion, and uncordons it when neither applies any more.
func (r *Reconciler) reconcileMaintenance(ctx context.Context, s *machineScope) (ctrl.Result, error) {
	m, node := s.m, s.node
	if node == nil {
		return ctrl.Result{}, nil
	}
	maintenance := m.Annotations[v1alpha1.MaintenanceAnnotation] == "true"
	requested := m.Annotations[v1alpha1.RequestDeleteAnnotation] == "true"
	if !maintenance && !requested {
		if conditions.Find(m.Status.Conditions, v1alpha1.MachineDrained) == nil {
			return ctrl.Result{}, nil
		}
		// Leaving maintenance, or an aborted deletion: this controller cordoned the Node, so it
		// uncordons it.
		if err := newDrainer(r).Cordon(ctx, node, false); err != nil {
			return ctrl.Result{}, err
		}
		meta.RemoveStatusCondition(&m.Status.Conditions, v1alpha1.MachineDrained)
		r.recorder.Eventf(m, corev1.EventTypeNormal, "Uncordoned", "Node %s is schedulable again", node.Name)
		return ctrl.Result{}, nil
	}
	// Maintenance waits for the drain however long it takes; a requested deletion honours the
	// drain timeout like any graceful deletion.
	timeout := r.opts.DrainTimeout
	if maintenance {
		timeout = 0
	}
	done, after, err := r.drainNode(ctx, m, node, timeout)
	if err != nil || !done {
		return ctrl.Result{RequeueAfter: after}, err
	}
	if requested && !maintenance {
		// The drain finished: from here on the deletion can no longer be aborted.
		if err := r.client.Delete(ctx, m); err != nil {
			return ctrl.Result{}, fmt.Errorf("deleting drained machine %s/%s: %w", m.Namespace, m.Name, err)
		}
		r.recorder.Event(m, corev1.EventTypeNormal, "DeletionCommitted", "Drain finished; deleting the machine")
	}
	return ctrl.Result{}, nil
}

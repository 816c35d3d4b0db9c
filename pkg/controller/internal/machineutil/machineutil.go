// Package machineutil holds what several reconcilers share about Machines and their owners:
// whether a Machine is ready or available, its phase, whether an object is being deleted, the
// predicate that skips status-only updates, and how two reconcile results combine.
package machineutil

import (
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/controller/internal/conditions"
)

// Ready reports whether the Machine's Node is Ready, with its not-ready taint removed.
func Ready(m *v1alpha1.Machine) bool {
	return m.DeletionTimestamp.IsZero() && conditions.IsTrue(m.Status.Conditions, v1alpha1.MachineNodeReady)
}

// Available reports whether the Machine has been ready for minReady, and if it is ready
// but not yet available, how long until it is.
func Available(m *v1alpha1.Machine, minReady time.Duration, now time.Time) (bool, time.Duration) {
	if !Ready(m) {
		return false, 0
	}
	c := meta.FindStatusCondition(m.Status.Conditions, v1alpha1.MachineNodeReady)
	left := c.LastTransitionTime.Add(minReady).Sub(now)
	if minReady == 0 || left <= 0 {
		return true, 0
	}
	return false, left
}

// Deleting reports whether o has a deletion timestamp.
func Deleting(o metav1.Object) bool { return !o.GetDeletionTimestamp().IsZero() }

// PhaseOrPending returns p, or Pending when p is empty.
func PhaseOrPending(p v1alpha1.MachinePhase) v1alpha1.MachinePhase {
	if p == "" {
		return v1alpha1.MachinePhasePending
	}
	return p
}

// NotStatusOnly ignores updates that changed only the status, which the object's own controller
// wrote.
var NotStatusOnly = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	o, n := e.ObjectOld, e.ObjectNew
	return o.GetGeneration() != n.GetGeneration() ||
		!equality.Semantic.DeepEqual(o.GetAnnotations(), n.GetAnnotations()) ||
		!equality.Semantic.DeepEqual(o.GetLabels(), n.GetLabels()) ||
		!equality.Semantic.DeepEqual(o.GetFinalizers(), n.GetFinalizers()) ||
		!o.GetDeletionTimestamp().Equal(n.GetDeletionTimestamp())
}}

// Sooner returns the result that requeues first.
func Sooner(a, b ctrl.Result) ctrl.Result {
	if a.RequeueAfter == 0 || (b.RequeueAfter > 0 && b.RequeueAfter < a.RequeueAfter) {
		return b
	}
	return a
}

// PtrTo returns a pointer to a copy of v.
func PtrTo[T any](v T) *T { return &v }

// Int32Or returns *p, or def when p is nil.
func Int32Or(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}

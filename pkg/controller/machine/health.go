package machine

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/controller/internal/conditions"
)

// reconcileHealth keeps the Healthy condition: False when the Node has not joined within the
// join timeout, or has been NotReady longer than the unhealthy timeout (a lost server is marked
// by reconcileInstance). The join timeout counts from the Machine's creation, or from the end of
// its wait for quota or capacity (see waitForCapacity) when it had to wait. It only judges; the
// health controller decides whether to replace.
func (r *Reconciler) reconcileHealth(_ context.Context, s *machineScope) (ctrl.Result, error) {
	m := s.m
	if c := conditions.Find(m.Status.Conditions, v1alpha1.MachineHealthy); c != nil && c.Reason == reasonInstanceLost {
		return ctrl.Result{}, nil
	}
	if m.Status.ErrorReason != nil {
		return ctrl.Result{}, nil
	}
	now := time.Now()
	if m.Status.NodeRef == nil {
		start := m.CreationTimestamp.Time
		if c := conditions.Find(m.Status.Conditions, v1alpha1.MachineHealthy); c != nil {
			switch {
			case c.Reason == reasonWaitingForCapacity:
				// The wait has just ended: the cloud accepted the server.
				start = now
			case c.Status == metav1.ConditionTrue && c.Reason == reasonJoining && c.LastTransitionTime.After(start):
				// Joining since the end of a wait (or since the first reconcile, seconds
				// after the creation).
				start = c.LastTransitionTime.Time
			}
		}
		deadline := start.Add(r.opts.JoinTimeout)
		if now.Before(deadline) {
			conditions.Set(&m.Status.Conditions, m.Generation, v1alpha1.MachineHealthy, metav1.ConditionTrue, reasonJoining, "")
			return ctrl.Result{RequeueAfter: deadline.Sub(now)}, nil
		}
		conditions.Set(&m.Status.Conditions, m.Generation, v1alpha1.MachineHealthy, metav1.ConditionFalse, reasonJoinTimeout,
			fmt.Sprintf("no Node joined within %s", r.opts.JoinTimeout))
		return ctrl.Result{}, nil
	}
	// A Node that is not Ready, whether it never was since it joined or went NotReady or away
	// later, gets the unhealthy timeout from the moment NodeReady last changed.
	ready := conditions.Find(m.Status.Conditions, v1alpha1.MachineNodeReady)
	if ready == nil || ready.Status == metav1.ConditionTrue {
		conditions.Set(&m.Status.Conditions, m.Generation, v1alpha1.MachineHealthy, metav1.ConditionTrue, "NodeHealthy", "")
		return ctrl.Result{}, nil
	}
	return r.unhealthyAfter(m, ready.LastTransitionTime.Time, now)
}

// unhealthyAfter marks the Machine unhealthy once its Node has been NotReady since since for
// longer than the unhealthy timeout, and otherwise asks to be called again then.
func (r *Reconciler) unhealthyAfter(m *v1alpha1.Machine, since, now time.Time) (ctrl.Result, error) {
	deadline := since.Add(r.opts.UnhealthyTimeout)
	if now.Before(deadline) {
		conditions.Set(&m.Status.Conditions, m.Generation, v1alpha1.MachineHealthy, metav1.ConditionTrue, "NodeHealthy", "")
		return ctrl.Result{RequeueAfter: deadline.Sub(now)}, nil
	}
	conditions.Set(&m.Status.Conditions, m.Generation, v1alpha1.MachineHealthy, metav1.ConditionFalse, reasonNodeUnhealthy,
		fmt.Sprintf("the Node has not been Ready for more than %s", r.opts.UnhealthyTimeout))
	return ctrl.Result{}, nil
}

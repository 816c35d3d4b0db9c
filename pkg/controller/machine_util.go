package controller

import (
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
)

var errorsJoin = errors.Join

// setCondition sets a condition and reports whether anything changed.
func setCondition(conds *[]metav1.Condition, generation int64, typ string, status metav1.ConditionStatus, reason, msg string) bool {
	return meta.SetStatusCondition(conds, metav1.Condition{Type: typ, Status: status, Reason: reason,
		Message: msg, ObservedGeneration: generation})
}

func condTrue(conds []metav1.Condition, typ string) bool {
	return meta.IsStatusConditionTrue(conds, typ)
}

// machineReady reports whether the Machine's Node is Ready, with its not-ready taint removed.
func machineReady(m *v1alpha1.Machine) bool {
	return m.DeletionTimestamp.IsZero() && condTrue(m.Status.Conditions, v1alpha1.MachineNodeReady)
}

// machineAvailable reports whether the Machine has been ready for minReady, and if it is ready
// but not yet available, how long until it is.
func machineAvailable(m *v1alpha1.Machine, minReady time.Duration, now time.Time) (bool, time.Duration) {
	if !machineReady(m) {
		return false, 0
	}
	c := meta.FindStatusCondition(m.Status.Conditions, v1alpha1.MachineNodeReady)
	left := c.LastTransitionTime.Add(minReady).Sub(now)
	if minReady == 0 || left <= 0 {
		return true, 0
	}
	return false, left
}

// machineFailed reports whether the Machine hit a terminal error or should be replaced.
func machineFailed(m *v1alpha1.Machine) bool {
	return m.Status.ErrorReason != nil || m.Status.Phase == v1alpha1.MachinePhaseFailed ||
		meta.IsStatusConditionFalse(m.Status.Conditions, v1alpha1.MachineHealthy)
}

func deleting(o metav1.Object) bool { return !o.GetDeletionTimestamp().IsZero() }

func nodeCondition(n *corev1.Node, typ corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == typ {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// nodeReady reports whether the kubelet says Ready and no CNI reports the network unavailable.
func nodeReady(n *corev1.Node) bool {
	r := nodeCondition(n, corev1.NodeReady)
	if r == nil || r.Status != corev1.ConditionTrue {
		return false
	}
	nu := nodeCondition(n, corev1.NodeNetworkUnavailable)
	return nu == nil || nu.Status != corev1.ConditionTrue
}

func ptrTo[T any](v T) *T { return &v }

func int32Or(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}

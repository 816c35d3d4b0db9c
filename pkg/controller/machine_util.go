package controller

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
)

// machineFailed reports whether the Machine hit a terminal error or should be replaced.
func machineFailed(m *v1alpha1.Machine) bool {
	return m.Status.ErrorReason != nil || m.Status.Phase == v1alpha1.MachinePhaseFailed ||
		meta.IsStatusConditionFalse(m.Status.Conditions, v1alpha1.MachineHealthy)
}

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

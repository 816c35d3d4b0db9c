package machine

import (
	corev1 "k8s.io/api/core/v1"
)

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

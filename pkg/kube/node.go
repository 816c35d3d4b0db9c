package kube

import corev1 "k8s.io/api/core/v1"

// NodeReady reports the Node's Ready condition.
func NodeReady(n *corev1.Node) bool {
	return ReadyCondition(n).Status == corev1.ConditionTrue
}

// ReadyCondition returns the Node's Ready condition, or one with an empty status and a message
// saying there is none yet.
func ReadyCondition(n *corev1.Node) corev1.NodeCondition {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c
		}
	}
	return corev1.NodeCondition{Type: corev1.NodeReady, Message: "no Ready condition yet"}
}

// PodReady reports the Pod's Ready condition.
func PodReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

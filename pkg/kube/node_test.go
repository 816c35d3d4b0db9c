package kube

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestNodeReady(t *testing.T) {
	tests := []struct {
		name       string
		conditions []corev1.NodeCondition
		ready      bool
		message    string
	}{
		{"no conditions yet", nil, false, "no Ready condition yet"},
		{"ready", []corev1.NodeCondition{{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse}, {Type: corev1.NodeReady, Status: corev1.ConditionTrue, Message: "kubelet is posting ready status"}}, true, "kubelet is posting ready status"},
		{"not ready", []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Message: "container runtime network not ready"}}, false, "container runtime network not ready"},
		{"unknown", []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Message: "Kubelet stopped posting node status."}}, false, "Kubelet stopped posting node status."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := &corev1.Node{Status: corev1.NodeStatus{Conditions: tt.conditions}}
			if got := NodeReady(n); got != tt.ready {
				t.Errorf("NodeReady = %v, want %v", got, tt.ready)
			}
			if got := ReadyCondition(n).Message; got != tt.message {
				t.Errorf("message %q, want %q", got, tt.message)
			}
		})
	}
}

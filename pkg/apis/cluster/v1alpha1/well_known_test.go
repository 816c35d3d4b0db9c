package v1alpha1

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestServerMadeElsewhere(t *testing.T) {
	id := "openstack:///5f0c1c9e-2d3a-4c1e-9d7e-1b2a3c4d5e6f"
	node := &corev1.ObjectReference{Kind: "Node", Name: "pool1-abc"}
	tests := []struct {
		name       string
		finalizers []string
		providerID *string
		nodeRef    *corev1.ObjectReference
		want       bool
	}{
		{name: "a new Machine of slipway's", finalizers: []string{MachineFinalizer}},
		{name: "Kubermatic's finalizers", finalizers: []string{MachineFinalizer, KubermaticNodeFinalizer}, want: true},
		{name: "a Node without providerID", nodeRef: node, want: true},
		{name: "a recorded server says where it is", finalizers: []string{MachineFinalizer, KubermaticNodeFinalizer},
			providerID: &id, nodeRef: node},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &Machine{}
			m.Finalizers, m.Spec.ProviderID, m.Status.NodeRef = tt.finalizers, tt.providerID, tt.nodeRef
			if got := ServerMadeElsewhere(m); got != tt.want {
				t.Fatalf("ServerMadeElsewhere = %v, want %v", got, tt.want)
			}
		})
	}
}

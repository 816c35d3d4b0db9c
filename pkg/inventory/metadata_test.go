package inventory

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

func TestMissingMetadata(t *testing.T) {
	cpTaint := corev1.Taint{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}
	node := func(labels map[string]string, taints ...corev1.Taint) *corev1.Node {
		n := &corev1.Node{}
		n.Labels = labels
		n.Annotations = map[string]string{"kubeadm.alpha.kubernetes.io/cri-socket": "unix:///run/containerd/containerd.sock"}
		n.Spec.Taints = taints
		return n
	}
	tests := []struct {
		name string
		host v1beta1.Host
		node *corev1.Node
		want NodeMetadata
	}{
		{
			name: "in sync; extra labels and taints on the node are left alone",
			host: v1beta1.Host{Labels: map[string]string{"zone": "a"}, Taints: []v1beta1.Taint{{Key: cpTaint.Key, Effect: "NoSchedule"}}},
			node: node(map[string]string{"zone": "a", "kubernetes.io/os": "linux"}, cpTaint, corev1.Taint{Key: "other", Effect: "NoExecute"}),
		},
		{
			name: "a new and a changed label, a new annotation",
			host: v1beta1.Host{Labels: map[string]string{"zone": "b", "disk": "ssd"}, Annotations: map[string]string{"owner": "team-a"}},
			node: node(map[string]string{"zone": "a"}),
			want: NodeMetadata{Labels: map[string]string{"zone": "b", "disk": "ssd"}, Annotations: map[string]string{"owner": "team-a"}},
		},
		{
			name: "a new taint is added to the node's list",
			host: v1beta1.Host{Taints: []v1beta1.Taint{{Key: "gpu", Value: "true", Effect: "NoSchedule"}}},
			node: node(nil, cpTaint),
			want: NodeMetadata{Taints: []corev1.Taint{cpTaint, {Key: "gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule}}},
		},
		{
			name: "a taint's value is updated in place",
			host: v1beta1.Host{Taints: []v1beta1.Taint{{Key: "dedicated", Value: "db", Effect: "NoSchedule"}}},
			node: node(nil, corev1.Taint{Key: "dedicated", Value: "web", Effect: corev1.TaintEffectNoSchedule}, cpTaint),
			want: NodeMetadata{Taints: []corev1.Taint{{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoSchedule}, cpTaint}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.node.DeepCopy()
			got := MissingMetadata(&tt.host, tt.node)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if got.Empty() != (tt.want.Labels == nil && tt.want.Annotations == nil && tt.want.Taints == nil) {
				t.Errorf("Empty() = %v for %+v", got.Empty(), got)
			}
			if !reflect.DeepEqual(before, tt.node) {
				t.Errorf("MissingMetadata changed the node it was given")
			}
		})
	}
}

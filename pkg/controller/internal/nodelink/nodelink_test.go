package nodelink

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apitypes "k8s.io/apimachinery/pkg/types"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
)

// TestMatches: only the Node the link names, by name and UID, is the Machine's, and a Node with
// a provider ID only when it is the server's that the link and spec.providerID both name.
func TestMatches(t *testing.T) {
	own, other := "openstack:///own", "openstack:///other"
	node := func(name, uid, providerID string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: apitypes.UID(uid)}, Spec: corev1.NodeSpec{ProviderID: providerID}}
	}
	link := &Link{Node: "u1", Name: "n1", ProviderID: own}
	for _, tc := range []struct {
		name       string
		link       *Link
		providerID *string
		node       *corev1.Node
		want       bool
	}{
		{"the linked Node", link, &own, node("n1", "u1", own), true},
		{"the linked Node, without a provider ID", link, &own, node("n1", "u1", ""), true},
		{"no link", nil, &own, node("n1", "u1", own), false},
		{"another Node under the name", link, &own, node("n1", "u2", own), false},
		{"the UID under another name", link, &own, node("n2", "u1", own), false},
		{"another server's Node", link, &own, node("n1", "u1", other), false},
		{"a Machine without a provider ID", link, nil, node("n1", "u1", own), false},
		{"spec.providerID moved on", link, &other, node("n1", "u1", other), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &v1alpha1.Machine{Spec: v1alpha1.MachineSpec{ProviderID: tc.providerID}}
			if got := tc.link.Matches(m, tc.node); got != tc.want {
				t.Fatalf("Matches = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestSetAndOf: a link survives the annotation, Set reports changes only, and an annotation
// that does not decode is no link.
func TestSetAndOf(t *testing.T) {
	m := &v1alpha1.Machine{}
	l := &Link{Node: "u1", Name: "n1", Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.5"}}}
	if !Set(m, l) || Set(m, l) {
		t.Fatal("Set must report the first change and only that")
	}
	if got := Of(m); got == nil || got.Name != "n1" || got.Addresses[0].Address != "10.0.0.5" {
		t.Fatalf("Of = %+v", got)
	}
	if !Set(m, nil) || Of(m) != nil {
		t.Fatal("Set(nil) must remove the link")
	}
	m.Annotations = map[string]string{Annotation: `{"nodeName":"n1"}`}
	if Of(m) != nil {
		t.Fatal("a link without a UID must be no link")
	}
}

// Package nodelink records, on a Machine, which Node the machine-controller linked to it and
// the addresses the cloud reported for the Machine's server then: the annotation
// machine.slipway.dev/state. Deleting a Machine drains and deletes only that Node, and a kubelet
// serving certificate is approved only for those addresses. status.nodeRef and
// status.addresses say the same for people, but anyone who may write machines/status can write
// them; the annotation, like every "*.slipway.dev/state" annotation, is admitted only from the
// controller (pkg/webhook).
package nodelink

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/cloud"
)

// Annotation is the Machine annotation that holds the Link.
const Annotation = "machine" + cloud.StateAnnotationSuffix

// Link is the Node the controller linked to a Machine: found through the provider ID or the
// addresses of a server the cloud confirmed as the Machine's, and named by UID so that another
// Node under the same name is never taken for it.
type Link struct {
	Node types.UID `json:"nodeUID"`
	Name string    `json:"nodeName"`
	// ProviderID is the server's, as spec.providerID named it when the Node was linked.
	ProviderID string `json:"providerID,omitempty"`
	// Addresses are the server's, as the cloud last reported them.
	Addresses []corev1.NodeAddress `json:"addresses,omitempty"`
}

// Of returns the Machine's Link, or nil when it has none (or one that does not decode, which
// only someone bypassing admission could have written).
func Of(m *v1alpha1.Machine) *Link {
	raw := m.Annotations[Annotation]
	if raw == "" {
		return nil
	}
	var l Link
	if json.Unmarshal([]byte(raw), &l) != nil || l.Node == "" || l.Name == "" {
		return nil
	}
	return &l
}

// Set records l on m (nil removes it), and reports whether that changed anything.
func Set(m *v1alpha1.Machine, l *Link) bool {
	if old := Of(m); equality.Semantic.DeepEqual(old, l) {
		return false
	}
	if l == nil {
		delete(m.Annotations, Annotation)
		return true
	}
	raw, _ := json.Marshal(l) // a struct of strings cannot fail to encode
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations[Annotation] = string(raw)
	return true
}

// Matches reports whether n is the linked Node: the same UID, and, when the Node carries a
// provider ID, the server the link and the Machine's spec.providerID (also the controller's)
// both name.
func (l *Link) Matches(m *v1alpha1.Machine, n *corev1.Node) bool {
	if l == nil || n.UID != l.Node || n.Name != l.Name {
		return false
	}
	if n.Spec.ProviderID == "" {
		return true
	}
	return m.Spec.ProviderID != nil && n.Spec.ProviderID == *m.Spec.ProviderID &&
		(l.ProviderID == "" || l.ProviderID == n.Spec.ProviderID)
}

package inventory

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/slipway-dev/slipway/pkg/apis/slipway/v1beta1"
)

// NodeMetadata is what a Node lacks of its host's labels, annotations and taints.
type NodeMetadata struct {
	Labels, Annotations map[string]string
	// Taints is the Node's whole taint list with the manifest's taints added or updated, set
	// only when that differs from the Node's.
	Taints []corev1.Taint
}

// Empty says whether the Node already has everything.
func (m NodeMetadata) Empty() bool {
	return len(m.Labels) == 0 && len(m.Annotations) == 0 && m.Taints == nil
}

// MissingMetadata compares a host's labels, annotations and taints with its Node. Apply adds
// and updates; it does not remove what is on the Node but not in the manifest, because other
// controllers and people label nodes too and nothing records which of them slipway set.
// Remove a label or taint dropped from the manifest with kubectl.
func MissingMetadata(h *v1beta1.Host, n *corev1.Node) NodeMetadata {
	var m NodeMetadata
	diff := func(want, have map[string]string) map[string]string {
		var out map[string]string
		for k, v := range want {
			if hv, ok := have[k]; !ok || hv != v {
				if out == nil {
					out = map[string]string{}
				}
				out[k] = v
			}
		}
		return out
	}
	m.Labels = diff(h.Labels, n.Labels)
	m.Annotations = diff(h.Annotations, n.Annotations)
	taints := append([]corev1.Taint(nil), n.Spec.Taints...)
	changed := false
	for _, t := range h.Taints {
		want := corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)}
		found := false
		for i, have := range taints {
			if have.Key == want.Key && have.Effect == want.Effect {
				found = true
				if have.Value != want.Value {
					taints[i].Value, changed = want.Value, true
				}
			}
		}
		if !found {
			taints, changed = append(taints, want), true
		}
	}
	if changed {
		m.Taints = taints
	}
	return m
}

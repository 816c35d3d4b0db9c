package machineutil

import (
	"maps"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
)

// A template's in-place fields reach existing Machines, and through them their Nodes, without
// replacing a Machine: the Machines' own annotations (template metadata.annotations), and the
// Nodes' labels, annotations and taints (spec.metadata and spec.taints). Everything else shapes
// the server or its bootstrap (flavor, image, kubelet version, user-data inputs, disks) and
// rolls: a MachineDeployment whose template differs there gets a new MachineSet.

// Rolling returns a copy of t without its in-place fields: what a MachineSet's identity (its
// template hash) is made of.
func Rolling(t *v1alpha1.MachineTemplateSpec) *v1alpha1.MachineTemplateSpec {
	out := t.DeepCopy()
	out.Annotations = nil
	out.Spec.ObjectMeta = metav1.ObjectMeta{}
	out.Spec.Taints = nil
	return out
}

// SameInPlace reports whether two templates agree on their in-place fields (an empty map or
// list equals a missing one).
func SameInPlace(a, b *v1alpha1.MachineTemplateSpec) bool {
	return equality.Semantic.DeepEqual(a.Annotations, b.Annotations) &&
		equality.Semantic.DeepEqual(a.Spec.Labels, b.Spec.Labels) &&
		equality.Semantic.DeepEqual(a.Spec.Annotations, b.Spec.Annotations) &&
		equality.Semantic.DeepEqual(a.Spec.Taints, b.Spec.Taints)
}

// SetInPlace copies the in-place fields of from into to.
func SetInPlace(to, from *v1alpha1.MachineTemplateSpec) {
	to.Annotations = maps.Clone(from.Annotations)
	to.Spec.Labels = maps.Clone(from.Spec.Labels)
	to.Spec.Annotations = maps.Clone(from.Spec.Annotations)
	to.Spec.Taints = append(to.Spec.Taints[:0:0], from.Spec.Taints...)
	if len(to.Spec.Taints) == 0 {
		to.Spec.Taints = nil
	}
}

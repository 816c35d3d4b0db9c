package machineset

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
)

// syncInPlace gives the set's Machines its template's in-place fields, without replacing one:
// the Node's labels, annotations and taints (the Machine's spec.metadata and spec.taints, which
// the Machine controller keeps on the Node) are set as the template has them, and the template's
// Machine annotations are added or changed on each Machine (one the template no longer has is
// left where it is: a Machine's annotations have other writers too).
func (r *Reconciler) syncInPlace(ctx context.Context, ms *v1alpha1.MachineSet, machines []*v1alpha1.Machine) error {
	t := &ms.Spec.Template
	var errs []error
	updated := 0
	for _, m := range machines {
		want := m.DeepCopy()
		want.Spec.Labels, want.Spec.Annotations, want.Spec.Taints = t.Spec.Labels, t.Spec.Annotations, t.Spec.Taints
		for k, v := range t.Annotations {
			if want.Annotations == nil {
				want.Annotations = map[string]string{}
			}
			want.Annotations[k] = v
		}
		if equality.Semantic.DeepEqual(want.Annotations, m.Annotations) && equality.Semantic.DeepEqual(want.Spec, m.Spec) {
			continue
		}
		if err := r.client.Patch(ctx, want, client.MergeFrom(m)); err != nil {
			errs = append(errs, fmt.Errorf("updating machine %s/%s in place: %w", m.Namespace, m.Name, client.IgnoreNotFound(err)))
			continue
		}
		updated++
	}
	if updated > 0 {
		r.recorder.Eventf(ms, corev1.EventTypeNormal, "UpdatedInPlace", "Updated the Node labels, annotations and taints or the annotations of %d machines in place", updated)
	}
	return errors.Join(errs...)
}

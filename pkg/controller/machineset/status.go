package machineset

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/controller/internal/machineutil"
)

// updateStatus counts the set's Machines and patches the status. observedGeneration moves only
// when the set is settled at its replicas, so that the overshoot check can tell a scale-down in
// progress from Machines that appeared on their own. It returns when a Machine becomes available.
func (r *Reconciler) updateStatus(ctx context.Context, orig, ms *v1alpha1.MachineSet, sm *setMachines, settled bool) (time.Duration, error) {
	now := time.Now()
	minReady := time.Duration(ms.Spec.MinReadySeconds) * time.Second
	tmplLabels := labels.Set(ms.Spec.Template.Labels)
	st := &ms.Status
	st.Replicas = int32(len(sm.all))
	st.FullyLabeledReplicas, st.ReadyReplicas, st.AvailableReplicas = 0, 0, 0
	var next time.Duration
	for _, m := range sm.all {
		if labels.SelectorFromSet(tmplLabels).Matches(labels.Set(m.Labels)) {
			st.FullyLabeledReplicas++
		}
		if machineutil.Ready(m) {
			st.ReadyReplicas++
		}
		ok, left := machineutil.Available(m, minReady, now)
		if ok {
			st.AvailableReplicas++
		} else if left > 0 && (next == 0 || left < next) {
			next = left
		}
	}
	if settled {
		st.ObservedGeneration = ms.Generation
	}
	if equality.Semantic.DeepEqual(orig.Status, ms.Status) {
		return next, nil
	}
	if err := r.client.Status().Patch(ctx, ms, client.MergeFrom(orig)); err != nil {
		return 0, fmt.Errorf("patching status of machineset %s/%s: %w", ms.Namespace, ms.Name, err)
	}
	return next, nil
}

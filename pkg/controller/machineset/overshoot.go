package machineset

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/controller/internal/conditions"
	"github.com/slipway-dev/slipway/pkg/controller/internal/machineutil"
)

// checkOvershoot freezes a set that has more live Machines than replicas+threshold although its
// spec has not changed since it last settled: those Machines were not made by this set's
// scaling, so something is creating Machines it should not (a duplicate controller, a bug, a
// script), and deleting or creating more would act on a count nobody understands. A frozen set
// neither creates nor deletes; it thaws once the excess is gone (someone deleted Machines, or
// raised replicas). Mirrors Gardener MCM's safety controller. It reports whether the set is frozen.
func (r *Reconciler) checkOvershoot(ms *v1alpha1.MachineSet, sm *setMachines) bool {
	want := int(machineutil.Int32Or(ms.Spec.Replicas, 1))
	live := len(sm.active) + sm.creating
	limit := want + r.opts.OvershootThreshold
	wasFrozen := conditions.IsTrue(ms.Status.Conditions, v1alpha1.FrozenCondition)
	unchanged := ms.Status.ObservedGeneration == ms.Generation
	switch {
	case live > limit && (wasFrozen || unchanged):
		if !wasFrozen {
			msg := fmt.Sprintf("%d machines exist for %d replicas (threshold %d); not creating or deleting any until the excess is resolved",
				live, want, r.opts.OvershootThreshold)
			conditions.Set(&ms.Status.Conditions, ms.Generation, v1alpha1.FrozenCondition, metav1.ConditionTrue, "Overshoot", msg)
			r.recorder.Event(ms, corev1.EventTypeWarning, "Frozen", msg)
		}
		return true
	case wasFrozen:
		conditions.Set(&ms.Status.Conditions, ms.Generation, v1alpha1.FrozenCondition, metav1.ConditionFalse, "WithinLimits",
			fmt.Sprintf("%d machines for %d replicas", live, want))
		r.recorder.Eventf(ms, corev1.EventTypeNormal, "Thawed", "Machine count back within %d replicas + %d", want, r.opts.OvershootThreshold)
	}
	return false
}

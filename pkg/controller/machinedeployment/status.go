package machinedeployment

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/pkg/apis/cluster/v1alpha1"
	"github.com/slipway-dev/slipway/pkg/controller/internal/conditions"
)

// Reasons of the Progressing condition, as Deployments use them.
const (
	reasonNewSetAvailable    = "NewMachineSetAvailable"
	reasonSetUpdated         = "MachineSetUpdated"
	reasonDeadlineExceeded   = "ProgressDeadlineExceeded"
	reasonDeploymentPaused   = "DeploymentPaused"
	reasonMinimumAvailable   = "MinimumReplicasAvailable"
	reasonMinimumUnavailable = "MinimumReplicasUnavailable"
)

// updateStatus computes the counts and conditions from the plan and patches the status. It
// enforces progressDeadlineSeconds: a rollout that has not progressed for that long gets
// Progressing=False with reason ProgressDeadlineExceeded. It returns when to look again for the
// deadline.
func (r *Reconciler) updateStatus(ctx context.Context, orig, md *v1alpha1.MachineDeployment,
	p deploymentParams, plan *rollout) (time.Duration, error) {
	st := &md.Status
	st.Replicas, st.ReadyReplicas, st.AvailableReplicas, st.UpdatedReplicas = 0, 0, 0, 0
	changedSpec := false
	for _, s := range plan.all() {
		st.Replicas += s.count
		st.ReadyReplicas += s.ready
		st.AvailableReplicas += s.available
		changedSpec = changedSpec || s.spec != s.origSpec
	}
	if plan.newSet != nil {
		st.UpdatedReplicas = plan.newSet.count
	}
	st.UnavailableReplicas = max(p.replicas-st.AvailableReplicas, 0)
	progressed := changedSpec || st.ObservedGeneration != md.Generation || st.Replicas != orig.Status.Replicas ||
		st.UpdatedReplicas != orig.Status.UpdatedReplicas || st.AvailableReplicas != orig.Status.AvailableReplicas
	st.ObservedGeneration = md.Generation
	gen := md.Generation

	if st.AvailableReplicas >= p.replicas-p.maxUnavailable {
		conditions.Set(&st.Conditions, gen, v1alpha1.MachineDeploymentAvailable, metav1.ConditionTrue, reasonMinimumAvailable, "")
	} else {
		conditions.Set(&st.Conditions, gen, v1alpha1.MachineDeploymentAvailable, metav1.ConditionFalse, reasonMinimumUnavailable,
			fmt.Sprintf("%d of at least %d machines available", st.AvailableReplicas, p.replicas-p.maxUnavailable))
	}
	if f := frozenSet(plan.all()); f != nil {
		c := meta.FindStatusCondition(f.ms.Status.Conditions, v1alpha1.FrozenCondition)
		if conditions.Set(&st.Conditions, gen, v1alpha1.FrozenCondition, metav1.ConditionTrue, c.Reason, f.ms.Name+": "+c.Message) {
			r.recorder.Eventf(md, corev1.EventTypeWarning, "Frozen", "MachineSet %s is frozen: %s", f.ms.Name, c.Message)
		}
	} else if meta.FindStatusCondition(st.Conditions, v1alpha1.FrozenCondition) != nil {
		conditions.Set(&st.Conditions, gen, v1alpha1.FrozenCondition, metav1.ConditionFalse, "WithinLimits", "")
	}

	now := time.Now()
	var after time.Duration
	switch {
	case md.Spec.Paused:
		if c := meta.FindStatusCondition(st.Conditions, v1alpha1.MachineDeploymentProgressing); c == nil || c.Reason != reasonDeploymentPaused {
			st.LastProgressTime = &metav1.Time{Time: now} // resuming starts a fresh deadline
		}
		conditions.Set(&st.Conditions, gen, v1alpha1.MachineDeploymentProgressing, metav1.ConditionUnknown, reasonDeploymentPaused, "")
	case plan.complete():
		st.LastProgressTime = progressTime(st.LastProgressTime, progressed, now)
		conditions.Set(&st.Conditions, gen, v1alpha1.MachineDeploymentProgressing, metav1.ConditionTrue, reasonNewSetAvailable,
			fmt.Sprintf("machineset %s has successfully progressed", plan.newSet.ms.Name))
	default:
		st.LastProgressTime = progressTime(st.LastProgressTime, progressed, now)
		deadline := st.LastProgressTime.Add(p.deadline)
		if now.After(deadline) {
			msg := fmt.Sprintf("no progress for more than %s", p.deadline)
			if conditions.Set(&st.Conditions, gen, v1alpha1.MachineDeploymentProgressing, metav1.ConditionFalse, reasonDeadlineExceeded, msg) {
				r.recorder.Eventf(md, corev1.EventTypeWarning, reasonDeadlineExceeded, "Rollout stalled: %s", msg)
			}
		} else {
			conditions.Set(&st.Conditions, gen, v1alpha1.MachineDeploymentProgressing, metav1.ConditionTrue, reasonSetUpdated,
				fmt.Sprintf("%d of %d machines updated, %d available", st.UpdatedReplicas, p.replicas, st.AvailableReplicas))
			after = deadline.Sub(now) + time.Second
		}
	}
	if plan.recheck > 0 && (after == 0 || plan.recheck < after) {
		after = plan.recheck
	}
	if equality.Semantic.DeepEqual(orig.Status, md.Status) {
		return after, nil
	}
	if err := r.client.Status().Patch(ctx, md, client.MergeFrom(orig)); err != nil {
		return 0, fmt.Errorf("patching status of machinedeployment %s/%s: %w", md.Namespace, md.Name, err)
	}
	return after, nil
}

func progressTime(last *metav1.Time, progressed bool, now time.Time) *metav1.Time {
	if last == nil || progressed {
		return &metav1.Time{Time: now}
	}
	return last
}
